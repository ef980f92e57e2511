"""DOI names in Polars (extra ``polars``): an expression namespace, ``doi``.

Importing this module registers it; then every expression has ``.doi``:

>>> import polars as pl
>>> import doikit.polars  # noqa: F401 - registers the namespace
>>> frame = pl.DataFrame({"ref": ["doi:10.1000/ABC", None, "not a doi"]})
>>> frame.select(pl.col("ref").doi.normalize()).to_series().to_list()
['10.1000/abc', None, None]
>>> frame.lazy().select(pl.col("ref").doi.is_valid()).collect().to_series().to_list()
[True, None, False]

The namespace has a method for each function of :data:`doikit.arrow.FUNCTIONS`, of the same
name (``normalize``, ``find_all``, …), which runs that function on each batch, element by
element, so lazy and streaming frames work alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from doikit import arrow
from doikit._errors import needs_extra

try:
    import polars as pl
    import pyarrow as pa
except ImportError as exc:  # pragma: no cover - the extra is installed in the test suite
    msg = needs_extra("doikit.polars", "polars")
    raise ImportError(msg) from exc

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["DOIExpressions"]


class DOIExpressions:
    """``pl.col(…).doi``: DOI names in a column of strings (nulls stay null)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr


def _method(row: arrow.ColumnFunction) -> Callable[[DOIExpressions], pl.Expr]:
    """The namespace's method for *row*: its function on each batch, answers of its type."""
    dtype = pl.Series(pa.array([], row.returns)).dtype  # (Polars's type for the Arrow type)

    def run(series: pl.Series) -> pl.Series:
        answer = pl.from_arrow(row.function(series.to_arrow()))
        assert isinstance(answer, pl.Series)  # noqa: S101 - from_arrow of an array is one
        return answer.alias(series.name)

    def method(self: DOIExpressions) -> pl.Expr:
        return self._expr.map_batches(run, return_dtype=dtype, is_elementwise=True)

    method.__name__ = row.name
    method.__qualname__ = f"{DOIExpressions.__qualname__}.{row.name}"
    method.__doc__ = row.doc
    return method


for _row in arrow.FUNCTIONS:
    setattr(DOIExpressions, _row.name, _method(_row))
del _row
pl.api.register_expr_namespace("doi")(DOIExpressions)
