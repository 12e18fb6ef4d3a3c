"""Stream data on Spark (extra ``spark``): the ``jetstream`` PySpark data source and views with
Direct Get semantics. ``register(spark)`` makes ``format("jetstream")`` available."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["register"]


def use_this_python(spark: SparkSession) -> bool:
    """On a local master with no interpreter chosen (``PYSPARK_PYTHON``, ``spark.pyspark.python``),
    make Spark's Python workers run this interpreter, the one that has jsemu and pyarrow
    (PySpark's default is whatever ``python3`` is on the PATH). Returns whether it did."""
    sc = spark.sparkContext
    if not (sc.master or "").startswith("local"):
        return False
    if os.environ.get("PYSPARK_PYTHON") or sc.getConf().get("spark.pyspark.python"):
        return False
    os.environ["PYSPARK_PYTHON"] = sys.executable  # later sessions of this process too
    sc.pythonExec = sys.executable  # the workers of functions wrapped from now on
    return True


def register(spark: SparkSession) -> None:
    """Register the ``jetstream`` data source with ``spark`` (see ``use_this_python``)."""
    from .source import JetStreamDataSource

    use_this_python(spark)
    spark.dataSource.register(JetStreamDataSource)
