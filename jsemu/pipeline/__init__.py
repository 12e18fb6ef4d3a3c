"""Stream data on Spark (extra ``spark``): the ``jetstream`` PySpark data source and views with
Direct Get semantics. ``register(spark)`` makes ``format("jetstream")`` available."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .workers import use_this_python

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["register", "use_this_python"]


def register(spark: SparkSession) -> None:
    """Register the ``jetstream`` data source with ``spark`` (see ``use_this_python``)."""
    from .source import JetStreamDataSource

    use_this_python(spark)
    spark.dataSource.register(JetStreamDataSource)
