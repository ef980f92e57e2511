"""doikit.spark on a real local Spark (pyspark from PyPI, local[2], Java 17 on the machine):
for any column of texts and nulls, each function answers as the per-name function does."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings

from test_columns import FUNCTIONS, TEXTS, expected

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import SparkSession

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="no Java for Spark")


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this environment
    from pyspark.sql import SparkSession  # noqa: PLC0415 - only when Java is there

    session = (
        SparkSession.builder.master("local[2]")
        .appName("doikit-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def _plain(value: Any) -> Any:
    """Spark's rows as the plain values the per-name answers are."""
    if isinstance(value, list):
        return [item.asDict() for item in value]
    return value


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(TEXTS)
def test_spark_answers_as_the_per_name_functions(
    spark: SparkSession, texts: list[str | None]
) -> None:
    from doikit import spark as doi  # noqa: PLC0415

    want = expected(texts)
    frame = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i long, ref string")
    got = frame.orderBy("i").select(*(getattr(doi, name)("ref").alias(name) for name in FUNCTIONS))
    rows = got.collect()
    for name in FUNCTIONS:
        assert [_plain(row[name]) for row in rows] == want[name], name
