"""Stream data on Spark (extra ``spark``): the ``jetstream`` PySpark data source and views with
Direct Get semantics. ``register(spark)`` makes ``format("jetstream")`` available."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["register"]


def register(spark: SparkSession) -> None:
    """Register the ``jetstream`` data source with ``spark``."""
    from .source import JetStreamDataSource

    spark.dataSource.register(JetStreamDataSource)
