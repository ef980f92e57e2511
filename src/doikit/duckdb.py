"""DOI names in DuckDB SQL (extra ``duckdb``): vectorized functions over Arrow.

>>> import duckdb
>>> import doikit.duckdb
>>> con = duckdb.connect()
>>> doikit.duckdb.register(con)
>>> con.sql("SELECT doi_normalize('doi:10.1000/ABC'), doi_is_valid('10/abc')").fetchall()
[('10.1000/abc', False)]
>>> con.sql("SELECT doi_find_all('see 10.1000/1 and 10.1000/2.')").fetchall()
[([{'doi': '10.1000/1', 'start': 4, 'end': 13}, {'doi': '10.1000/2', 'start': 18, 'end': 27}],)]

:func:`register` adds ``doi_<name>(x)`` for each function of :data:`doikit.arrow.FUNCTIONS`
(``doi_normalize``, ``doi_find_all``, …); each runs that function on a whole vector at a
time. NULL in, NULL out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from doikit import arrow
from doikit._errors import needs_extra

try:
    import pyarrow as pa
    from duckdb.func import ARROW, SPECIAL
    from duckdb.sqltypes import VARCHAR
except ImportError as exc:  # pragma: no cover - the extra is installed in the test suite
    msg = needs_extra("doikit.duckdb", "duckdb")
    raise ImportError(msg) from exc

if TYPE_CHECKING:
    import duckdb

__all__ = ["register"]


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Add the ``doi_*`` functions to the connection *con*."""
    for row in arrow.FUNCTIONS:
        # (DuckDB's type for the Arrow type: as DuckDB reads a column of it)
        returns = con.from_arrow(pa.table({"answer": pa.array([], row.returns)})).types[0]
        # (SPECIAL: the functions take NULL in and give NULL out for a text that is no DOI)
        con.create_function(
            f"doi_{row.name}",
            row.function,
            [VARCHAR],
            returns,
            type=ARROW,
            null_handling=SPECIAL,
        )
