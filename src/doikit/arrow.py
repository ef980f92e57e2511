"""DOI names in Arrow columns (extra ``arrow``: pyarrow): a function per column, not per name.

Every function takes a ``pyarrow`` string array or chunked array (``string``,
``large_string`` or ``string_view``, nulls allowed) and gives one of the same length and
chunking, null where the input is null. Each answer is exactly what the per-name function
gives (a Hypothesis property holds them equal); a text that is no DOI gives null, or
``False`` for :func:`is_valid`.

>>> import pyarrow as pa
>>> from doikit import arrow
>>> refs = pa.array(["doi:10.1000/ABC", None, "not a doi", "https://doi.org/10.1000%2F182"])
>>> arrow.normalize(refs).to_pylist()
['10.1000/abc', None, None, '10.1000/182']
>>> arrow.is_valid(refs).to_pylist()
[True, None, False, True]
>>> arrow.find_all(pa.array(["see doi:10.1000/1 and 10.1000/2.", None])).to_pylist()
[[{'doi': '10.1000/1', 'start': 8, 'end': 17}, {'doi': '10.1000/2', 'start': 22, 'end': 31}], None]

The names are read by :func:`doikit.normalize_many` and :func:`doikit.parse_many`, one C
call per chunk on the accelerated build.

:data:`FUNCTIONS` is the table of these functions, one row each (name, function, type of
the answer, what it gives): the Polars namespace (:mod:`doikit.polars`), the DuckDB
functions (:mod:`doikit.duckdb`) and the Spark functions (:mod:`doikit.spark`) are made from
it, so a function added here is a row there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

from doikit._doi import _SPEEDUPS, DEFAULT_RESOLVER, DOI, normalize_many, parse_many
from doikit._errors import needs_extra
from doikit._extract import find_all as _find_all

try:
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError as exc:  # pragma: no cover - the extra is installed in the test suite
    msg = needs_extra("doikit.arrow", "arrow")
    raise ImportError(msg) from exc

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "FOUND",
    "FUNCTIONS",
    "ColumnFunction",
    "find_all",
    "is_valid",
    "normalize",
    "prefix",
    "to_url",
    "validate",
]

Column = TypeVar("Column", "pa.Array[Any]", "pa.ChunkedArray[Any]")

#: The type of :func:`find_all`'s answer for each text: the DOIs found, in order, with the
#: span of each in the text (character offsets, as ``str`` indexes them).
FOUND = pa.list_(pa.struct([("doi", pa.string()), ("start", pa.int64()), ("end", pa.int64())]))


def _check(array: pa.Array[Any]) -> None:
    if not (
        pa.types.is_string(array.type)
        or pa.types.is_large_string(array.type)
        or pa.types.is_string_view(array.type)
    ):
        msg = f"doikit.arrow takes a column of strings, not {array.type}"
        raise TypeError(msg)


def _strings(array: pa.Array[Any]) -> list[str | None]:
    _check(array)
    return array.to_pylist()


def _each_chunk(column: Column, convert: Callable[[pa.Array[Any]], pa.Array[Any]]) -> Column:
    if isinstance(column, pa.ChunkedArray):
        chunks = [convert(chunk) for chunk in column.chunks]
        return pa.chunked_array(chunks, type=chunks[0].type if chunks else None)
    return convert(column)


def _names(array: pa.Array[Any], *, key: bool) -> pa.Array[Any]:
    """The names (or keys) of a string array: in C over its buffers with the accelerator
    (no Python string per name), else through :func:`doikit.parse_many`."""
    _check(array)
    wide = not pa.types.is_string(array.type)  # large_string or string_view: 64-bit offsets
    answer_type = pa.large_string() if wide else pa.string()
    if _SPEEDUPS is None or len(array) == 0:
        names = (normalize_many if key else parse_many)(array.to_pylist())
        return pa.array(names, answer_type)
    if pa.types.is_string_view(array.type):
        array = array.cast(pa.large_string())
    validity, offsets, data = array.buffers()
    bits, ends, names, nulls = _SPEEDUPS.arrow_many(
        validity, offsets, b"" if data is None else data, array.offset, len(array), wide, key
    )
    return pa.Array.from_buffers(
        answer_type,
        len(array),
        [pa.py_buffer(bits), pa.py_buffer(ends), pa.py_buffer(names)],
        null_count=nulls,
    )


def normalize(column: Column) -> Column:
    """The comparison key of each text's DOI name (:func:`doikit.normalize`)."""
    return _each_chunk(column, lambda a: _names(a, key=True))


def validate(column: Column) -> Column:
    """The bare DOI name of each text (:func:`doikit.validate`), case as written."""
    return _each_chunk(column, lambda a: _names(a, key=False))


def is_valid(column: Column) -> Column:
    """Whether each text is a DOI name in some presentation (:func:`doikit.is_valid`)."""

    def convert(array: pa.Array[Any]) -> pa.Array[Any]:
        named = pc.is_valid(_names(array, key=False))
        answer: pa.Array[Any] = pc.if_else(pc.is_null(array), pa.scalar(None, pa.bool_()), named)
        return answer

    return _each_chunk(column, convert)


def to_url(column: Column, resolver: str = DEFAULT_RESOLVER) -> Column:
    """Each text's DOI as a resolver URL with the Handbook's encoding (:meth:`DOI.to_url`)."""
    known = DOI._known  # noqa: SLF001 - the names come from parse_many, already checked

    def convert(array: pa.Array[Any]) -> pa.Array[Any]:
        names = parse_many(_strings(array))
        return pa.array(
            [None if name is None else known(name).to_url(resolver) for name in names],
            pa.string(),
        )

    return _each_chunk(column, convert)


def prefix(column: Column) -> Column:
    """The prefix of each text's DOI name (``10.1000``)."""
    # (a name holds no line break, so '.*' reaches its end)
    return _each_chunk(
        column, lambda a: pc.replace_substring_regex(_names(a, key=False), "/.*", "")
    )


def find_all(column: Column) -> Column:
    """Every DOI name in each text (:func:`doikit.find_all`), as a list of
    ``{doi, start, end}`` (type :data:`FOUND`); null for a null text."""

    def convert(array: pa.Array[Any]) -> pa.Array[Any]:
        return pa.array(
            [
                None
                if text is None
                else [
                    {"doi": str(found.doi), "start": found.start, "end": found.end}
                    for found in _find_all(text)
                ]
                for text in _strings(array)
            ],
            FOUND,
        )

    return _each_chunk(column, convert)


@dataclass(frozen=True, slots=True)
class ColumnFunction:
    """A row of :data:`FUNCTIONS`: one column function, as every adapter offers it."""

    #: ``doikit.arrow.<name>``, ``pl.col(…).doi.<name>()``, ``doi_<name>(x)`` in DuckDB SQL,
    #: ``doikit.spark.<name>``.
    name: str
    #: The Arrow function, of one column (a string array) and nothing else.
    function: Callable[[pa.Array[Any]], pa.Array[Any]]
    #: The Arrow type of its answer (``string`` for a string column), which each adapter
    #: turns into its library's type.
    returns: pa.DataType
    #: What it gives, for the adapters' documentation.
    doc: str


#: doikit's column functions, one row each; the adapters offer exactly these.
FUNCTIONS: Final = (
    ColumnFunction(
        "normalize", normalize, pa.string(), "The comparison key of each text's DOI name, or null."
    ),
    ColumnFunction("validate", validate, pa.string(), "The bare DOI name of each text, or null."),
    ColumnFunction(
        "is_valid", is_valid, pa.bool_(), "Whether each text is a DOI name in some presentation."
    ),
    # (one argument: DuckDB counts a function's parameters, its defaults too)
    ColumnFunction(
        "to_url",
        lambda column: to_url(column),  # noqa: PLW0108
        pa.string(),
        "Each text's DOI as a doi.org URL, or null.",
    ),
    ColumnFunction("prefix", prefix, pa.string(), "The prefix of each text's DOI name, or null."),
    ColumnFunction(
        "find_all",
        find_all,
        FOUND,
        "Every DOI name in each text, as a list of ``{doi, start, end}``.",
    ),
)
