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

``normalize``, ``validate``, ``is_valid``, ``to_url``, ``prefix`` and ``find_all`` (an
array of ``{doi, start, end}``); null in, null out, and null (or ``false``) for a text that
is no DOI. The workers need doikit with this extra installed, and the driver's Arrow
support (``spark.sql.execution.arrow.pyspark.enabled``) is not needed: ``pandas_udf``
always exchanges Arrow batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doikit import arrow
from doikit._errors import needs_extra

try:
    import pandas as pd  # noqa: TC002 - Spark reads the batch function's annotations
    import pyarrow as pa
    from pyspark.sql.pandas.functions import pandas_udf
    from pyspark.sql.types import (
        ArrayType,
        BooleanType,
        LongType,
        StringType,
        StructField,
        StructType,
    )
except ImportError as exc:  # pragma: no cover - the extra is installed in the test suite
    msg = needs_extra("doikit.spark", "spark")
    raise ImportError(msg) from exc

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import Column
    from pyspark.sql.types import DataType

__all__ = ["FOUND", "find_all", "is_valid", "normalize", "prefix", "to_url", "validate"]

#: The type of :func:`find_all`'s answer for each text.
FOUND = ArrayType(
    StructType(
        [
            StructField("doi", StringType()),
            StructField("start", LongType()),
            StructField("end", LongType()),
        ]
    )
)


def _udf(
    function: Callable[[pa.Array[Any]], pa.Array[Any]], returns: DataType
) -> Callable[[Column | str], Column]:
    def batch(texts: pd.Series) -> pd.Series:
        answer = function(pa.Array.from_pandas(texts, type=pa.string()))
        return answer.to_pandas()

    spark_function = pandas_udf(batch, returns)  # type: ignore[call-overload]

    def column(text: Column | str) -> Column:
        return spark_function(text)  # type: ignore[no-any-return]

    column.__doc__ = function.__doc__
    return column


normalize = _udf(arrow.normalize, StringType())
validate = _udf(arrow.validate, StringType())
is_valid = _udf(arrow.is_valid, BooleanType())
to_url = _udf(lambda texts: arrow.to_url(texts), StringType())  # noqa: PLW0108 - one argument
prefix = _udf(arrow.prefix, StringType())
find_all = _udf(arrow.find_all, FOUND)
