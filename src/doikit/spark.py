"""DOI names in Spark DataFrames (extra ``spark``): column functions that run through Arrow.

Each function takes a string column and gives a column, like Spark's own functions; the
work is :mod:`doikit.arrow`'s function of the same name, run on each batch of rows in the
Python workers (a vectorized ``pandas_udf``):

.. code-block:: python

    from pyspark.sql import SparkSession, functions as F
    from doikit import spark as doi

    session = SparkSession.builder.getOrCreate()
    refs = session.read.text("references/")              # a directory of text files
    found = refs.select(F.explode(doi.find_all("value")).alias("found"))
    keys = found.select(doi.normalize("found.doi").alias("doi")).distinct()

A function for each of :data:`doikit.arrow.FUNCTIONS`, of the same name (``normalize``,
``find_all``, …); null in, null out, and null (or ``false``) for a text that is no DOI. The
workers need doikit with this extra installed, and the driver's Arrow support
(``spark.sql.execution.arrow.pyspark.enabled``) is not needed: ``pandas_udf`` always
exchanges Arrow batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from doikit import arrow
from doikit._errors import needs_extra

try:
    import pandas as pd  # noqa: TC002 - Spark reads the batch function's annotations
    import pyarrow as pa
    from pyspark.sql.pandas.functions import pandas_udf
    from pyspark.sql.pandas.types import from_arrow_type
except ImportError as exc:  # pragma: no cover - the extra is installed in the test suite
    msg = needs_extra("doikit.spark", "spark")
    raise ImportError(msg) from exc

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import Column

    # (each function of the table is made below; to a type checker, each is one of these)
    def __getattr__(name: str) -> Callable[[Column | str], Column]: ...


# (the table's names: a function added there is one here)
__all__ = sorted(["FOUND", *(row.name for row in arrow.FUNCTIONS)])  # noqa: PLE0605

#: The type of :func:`find_all`'s answer for each text.
FOUND = from_arrow_type(arrow.FOUND)


def _udf(row: arrow.ColumnFunction) -> Callable[[Column | str], Column]:
    """The column function of *row*: its Arrow function on each batch of rows."""

    def batch(texts: pd.Series) -> pd.Series:
        answer = row.function(pa.Array.from_pandas(texts, type=pa.string()))
        return answer.to_pandas()

    spark_function = pandas_udf(batch, from_arrow_type(row.returns))  # type: ignore[call-overload]

    def column(text: Column | str) -> Column:
        return spark_function(text)  # type: ignore[no-any-return]

    column.__name__ = column.__qualname__ = row.name
    column.__doc__ = row.doc
    return column


for _row in arrow.FUNCTIONS:
    globals()[_row.name] = _udf(_row)
del _row
