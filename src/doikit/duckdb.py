"""DOI names in DuckDB SQL (extra ``duckdb``): vectorized functions over Arrow.

>>> import duckdb
>>> import doikit.duckdb
>>> con = duckdb.connect()
>>> doikit.duckdb.register(con)
>>> con.sql("SELECT doi_normalize('doi:10.1000/ABC'), doi_is_valid('10/abc')").fetchall()
[('10.1000/abc', False)]
>>> con.sql("SELECT doi_find_all('see 10.1000/1 and 10.1000/2.')").fetchall()
[([{'doi': '10.1000/1', 'start': 4, 'end': 13}, {'doi': '10.1000/2', 'start': 18, 'end': 27}],)]

:func:`register` adds ``doi_normalize(x)``, ``doi_validate(x)``, ``doi_is_valid(x)``,
``doi_to_url(x)``, ``doi_prefix(x)`` and ``doi_find_all(x)``; each runs
:mod:`doikit.arrow`'s function of its name on a whole vector at a time. NULL in, NULL out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doikit import arrow
from doikit._errors import needs_extra

try:
    import duckdb
    from duckdb.func import ARROW, SPECIAL
    from duckdb.sqltypes import BIGINT, BOOLEAN, VARCHAR
except ImportError as exc:  # pragma: no cover - the extra is installed in the test suite
    msg = needs_extra("doikit.duckdb", "duckdb")
    raise ImportError(msg) from exc

if TYPE_CHECKING:
    from collections.abc import Callable

    import pyarrow as pa
    from duckdb.sqltypes import DuckDBPyType

__all__ = ["register"]


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Add the ``doi_*`` functions to the connection *con*."""
    found = duckdb.list_type(duckdb.struct_type({"doi": VARCHAR, "start": BIGINT, "end": BIGINT}))
    functions: list[tuple[str, Callable[[pa.Array[Any]], pa.Array[Any]], DuckDBPyType]]
    functions = [
        ("doi_normalize", arrow.normalize, VARCHAR),
        ("doi_validate", arrow.validate, VARCHAR),
        ("doi_is_valid", arrow.is_valid, BOOLEAN),
        # (DuckDB counts a function's parameters, defaults included: one here)
        ("doi_to_url", lambda column: arrow.to_url(column), VARCHAR),  # noqa: PLW0108
        ("doi_prefix", arrow.prefix, VARCHAR),
        ("doi_find_all", arrow.find_all, found),
    ]
    for name, function, returns in functions:
        # (SPECIAL: the functions take NULL in and give NULL out for a text that is no DOI)
        con.create_function(name, function, [VARCHAR], returns, type=ARROW, null_handling=SPECIAL)
