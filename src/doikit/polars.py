"""DOI names in Polars (extra ``polars``): an expression namespace, ``doi``.

Importing this module registers it; then every expression has ``.doi``:

>>> import polars as pl
>>> import doikit.polars  # noqa: F401 - registers the namespace
>>> frame = pl.DataFrame({"ref": ["doi:10.1000/ABC", None, "not a doi"]})
>>> frame.select(pl.col("ref").doi.normalize()).to_series().to_list()
['10.1000/abc', None, None]
>>> frame.lazy().select(pl.col("ref").doi.is_valid()).collect().to_series().to_list()
[True, None, False]

Each method runs :mod:`doikit.arrow`'s function of its name on each batch, element by
element, so lazy and streaming frames work alike: ``normalize``, ``validate``,
``is_valid``, ``to_url``, ``prefix`` and ``find_all`` (a list of ``{doi, start, end}``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doikit import arrow
from doikit._errors import needs_extra

try:
    import polars as pl
except ImportError as exc:  # pragma: no cover - the extra is installed in the test suite
    msg = needs_extra("doikit.polars", "polars")
    raise ImportError(msg) from exc

if TYPE_CHECKING:
    from collections.abc import Callable

    import pyarrow as pa
    from polars._typing import PolarsDataType

__all__ = ["DOIExpressions"]

_FOUND = pl.List(pl.Struct({"doi": pl.String, "start": pl.Int64, "end": pl.Int64}))


def _batches(
    function: Callable[[pa.Array[Any]], pa.Array[Any]],
) -> Callable[[pl.Series], pl.Series]:
    def run(series: pl.Series) -> pl.Series:
        answer = pl.from_arrow(function(series.to_arrow()))
        assert isinstance(answer, pl.Series)  # noqa: S101 - from_arrow of an array is one
        return answer.alias(series.name)

    return run


@pl.api.register_expr_namespace("doi")
class DOIExpressions:
    """``pl.col(…).doi``: DOI names in a column of strings (nulls stay null)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def _map(
        self, function: Callable[[pa.Array[Any]], pa.Array[Any]], dtype: PolarsDataType
    ) -> pl.Expr:
        return self._expr.map_batches(_batches(function), return_dtype=dtype, is_elementwise=True)

    def normalize(self) -> pl.Expr:
        """The comparison key of each text's DOI name, or null."""
        return self._map(arrow.normalize, pl.String)

    def validate(self) -> pl.Expr:
        """The bare DOI name of each text, or null."""
        return self._map(arrow.validate, pl.String)

    def is_valid(self) -> pl.Expr:
        """Whether each text is a DOI name in some presentation."""
        return self._map(arrow.is_valid, pl.Boolean)

    def to_url(self) -> pl.Expr:
        """Each text's DOI as a doi.org URL, or null."""
        return self._map(arrow.to_url, pl.String)

    def prefix(self) -> pl.Expr:
        """The prefix of each text's DOI name, or null."""
        return self._map(arrow.prefix, pl.String)

    def find_all(self) -> pl.Expr:
        """Every DOI name in each text, as a list of ``{doi, start, end}``."""
        return self._map(arrow.find_all, _FOUND)
