"""The adapters are made from one table, doikit.arrow.FUNCTIONS: the Polars namespace, the
DuckDB functions and the Spark functions offer exactly its rows (names, docs, the types of the
answers), and the property tests of test_columns.py and test_spark.py run every row."""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import doikit.duckdb
import doikit.polars
from doikit import arrow
from test_columns import FUNCTIONS as TESTED

NAMES = [row.name for row in arrow.FUNCTIONS]
TEXTS = pa.array(["doi:10.1000/ABC", None, "see 10.1000/1 and 10.1000/x y", "no DOI"])


def test_the_column_tests_run_every_row() -> None:
    assert NAMES == TESTED


@pytest.mark.parametrize("row", arrow.FUNCTIONS, ids=NAMES)
def test_a_row_is_the_arrow_function_of_its_name(row: arrow.ColumnFunction) -> None:
    assert row.name in arrow.__all__
    answer = row.function(TEXTS)
    assert answer.equals(getattr(arrow, row.name)(TEXTS))
    assert answer.type == row.returns


def test_the_polars_namespace_has_a_method_for_each_row_and_no_other() -> None:
    namespace = doikit.polars.DOIExpressions
    methods = [name for name, value in vars(namespace).items() if callable(value)]
    assert sorted(name for name in methods if not name.startswith("_")) == sorted(NAMES)
    frame = pl.DataFrame({"ref": TEXTS.to_pylist()}, schema={"ref": pl.String})
    for row in arrow.FUNCTIONS:
        assert getattr(namespace, row.name).__doc__ == row.doc
        got = frame.select(getattr(pl.col("ref").doi, row.name)()).to_series()  # type: ignore[attr-defined]
        want = pl.from_arrow(row.function(TEXTS))
        assert isinstance(want, pl.Series)
        assert got.dtype == want.dtype, row.name
        assert got.to_list() == want.to_list(), row.name


def test_duckdb_has_a_function_for_each_row_and_no_other() -> None:
    con = duckdb.connect()
    doikit.duckdb.register(con)
    registered = dict(
        con.sql(
            "SELECT function_name, return_type FROM duckdb_functions()"
            " WHERE function_name LIKE 'doi_%'"
        ).fetchall()
    )
    assert sorted(registered) == sorted(f"doi_{name}" for name in NAMES)
    for row in arrow.FUNCTIONS:
        answer = pa.table({"answer": row.function(TEXTS)})
        assert registered[f"doi_{row.name}"] == str(con.from_arrow(answer).types[0]), row.name


def test_duckdb_takes_a_row_added_to_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    def shout(column: Any) -> Any:  # (DuckDB evaluates the annotations)
        return pc.utf8_upper(column)

    added = arrow.ColumnFunction("shout", shout, pa.string(), "Each text in capitals.")
    monkeypatch.setattr(arrow, "FUNCTIONS", (*arrow.FUNCTIONS, added))
    con = duckdb.connect()
    doikit.duckdb.register(con)
    assert con.sql("SELECT doi_shout('10.1000/abc')").fetchall() == [("10.1000/ABC",)]


def test_spark_has_a_function_for_each_row_and_no_other() -> None:
    spark = pytest.importorskip("doikit.spark")
    assert spark.__all__ == sorted(["FOUND", *NAMES])
    for row in arrow.FUNCTIONS:
        function = getattr(spark, row.name)
        assert function.__name__ == row.name
        assert function.__doc__ == row.doc
