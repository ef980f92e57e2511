"""DOI names in columns, on the real libraries: doikit.arrow (pyarrow), the Polars expression
namespace (eager, lazy and streaming frames) and the DuckDB SQL functions. For any column of
texts and nulls, each answer is exactly the per-name function's (Hypothesis)."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import doikit
import doikit.duckdb
import doikit.polars
from doikit import DOI, arrow

PIECES = st.sampled_from(
    [
        "10.",
        "1000",
        "/",
        "abc",
        "ABC",
        "%2F",
        "%3C",
        "doi:",
        "DOI: ",
        "https://doi.org/",
        "urn:doi:",
        ":",
        " ",
        ".",
        "é",
        "see ",
        "\n",
    ]
)
TEXTS = st.lists(
    st.one_of(st.none(), st.text(max_size=30), st.lists(PIECES, max_size=8).map("".join)),
    max_size=12,
)


def _name(text: str) -> DOI | None:
    try:
        return DOI(text)
    except doikit.InvalidDOI:
        return None


def expected(texts: list[str | None]) -> dict[str, list[object]]:
    """Each function's answers, from the per-name functions."""
    dois = [None if t is None else _name(t) for t in texts]
    return {
        "normalize": [None if d is None else d.key for d in dois],
        "validate": [None if d is None else str(d) for d in dois],
        "is_valid": [
            None if t is None else d is not None for t, d in zip(texts, dois, strict=True)
        ],
        "to_url": [None if d is None else d.to_url() for d in dois],
        "prefix": [None if d is None else d.prefix for d in dois],
        "find_all": [
            None
            if t is None
            else [{"doi": str(f.doi), "start": f.start, "end": f.end} for f in doikit.find_all(t)]
            for t in texts
        ],
    }


FUNCTIONS = ["normalize", "validate", "is_valid", "to_url", "prefix", "find_all"]


@settings(max_examples=60, deadline=None)
@given(TEXTS, st.sampled_from([pa.string(), pa.large_string(), pa.string_view()]))
def test_arrow_answers_as_the_per_name_functions(
    texts: list[str | None], kind: pa.DataType
) -> None:
    want = expected(texts)
    column = pa.array(texts, kind)
    halves = pa.chunked_array([column[: len(texts) // 2], column[len(texts) // 2 :]])
    for name in FUNCTIONS:
        function = getattr(arrow, name)
        assert function(column).to_pylist() == want[name], name
        chunked = function(halves)
        assert isinstance(chunked, pa.ChunkedArray)
        assert chunked.num_chunks == 2
        assert chunked.to_pylist() == want[name], name


def _doi(expr: pl.Expr) -> doikit.polars.DOIExpressions:
    """The namespace doikit.polars registers (invisible to the type checker)."""
    return expr.doi  # type: ignore[attr-defined,no-any-return]


@settings(max_examples=40, deadline=None)
@given(TEXTS)
def test_polars_answers_as_the_per_name_functions(texts: list[str | None]) -> None:
    want = expected(texts)
    frame = pl.DataFrame({"ref": texts}, schema={"ref": pl.String})
    exprs = [getattr(_doi(pl.col("ref")), name)().alias(name) for name in FUNCTIONS]
    for got in (
        frame.select(exprs),
        frame.lazy().select(exprs).collect(),
        frame.lazy().select(exprs).collect(engine="streaming"),
    ):
        for name in FUNCTIONS:
            assert got[name].to_list() == want[name], name


@settings(max_examples=40, deadline=None)
@given(TEXTS)
def test_duckdb_answers_as_the_per_name_functions(texts: list[str | None]) -> None:
    want = expected(texts)
    con = duckdb.connect()
    doikit.duckdb.register(con)
    refs = pa.table({"i": list(range(len(texts))), "ref": pa.array(texts, pa.string())})  # noqa: F841 - read by name in the SQL
    calls = ", ".join(f"doi_{name}(ref)" for name in FUNCTIONS)
    rows = con.sql(f"SELECT {calls} FROM refs ORDER BY i").fetchall()  # noqa: S608 - our names
    for column, name in enumerate(FUNCTIONS):
        assert [row[column] for row in rows] == want[name], name


def test_a_column_of_something_else_is_refused() -> None:
    with pytest.raises(TypeError, match="a column of strings, not int64"):
        arrow.normalize(pa.array([1, 2]))


def test_an_empty_column_without_buffers_is_an_empty_answer() -> None:
    """pyarrow lets an empty string array have no offsets buffer (a review found it refused)."""
    empty = pa.Array.from_buffers(pa.string(), 0, [None, None, pa.py_buffer(b"")])
    for name in FUNCTIONS:
        assert getattr(arrow, name)(empty).to_pylist() == [], name


def test_threads_reading_columns_at_once_get_each_their_answers() -> None:
    # The C reader lets go of the GIL over a column's buffers (DuckDB calls the functions
    # from several threads at once); texts it sets aside are read afterwards, with the GIL,
    # and put in their places.
    import threading  # noqa: PLC0415 - only this test

    texts = [
        "doi:10.1000/ABC",
        None,
        "https://doi.org/10.1000/caf\u00e9",  # not ASCII: set aside for the Python parser
        "10.1000/x y",
        "urn:doi:10.1000:Z",
        "no DOI",
        "https://doi.org/10.1002/(SICI)1097-4258(199906)14%3C1%3E3.0.CO%3B2-1",
    ] * 3000
    expected = [None if t is None else _key_or_none(t) for t in texts]
    columns = [pa.array(texts), pa.array(texts, pa.large_string())]
    failures: list[str] = []

    def work() -> None:
        for _ in range(20):
            failures.extend(
                str(column.type)
                for column in columns
                if arrow.normalize(column).to_pylist() != expected
            )

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def _key_or_none(text: str) -> str | None:
    try:
        return doikit.normalize(text)
    except doikit.InvalidDOI:
        return None
