"""A Spark standalone cluster (a master and two workers from pyspark's ``spark-class``), a
session on its ``spark://`` URL and a jsemu server on a TCP port, once for the package.

A package apart from ``tests/pipeline``: a process holds one SparkContext, and pytest ends a
package's fixtures (``tests/pipeline``'s local session) when its tests move to another package,
so a worker that runs both gets each session in turn. The cluster's daemons start without this
interpreter on their PATH (``jsemu.testing.spark_cluster``): the executors find Python and
jsemu only through what ``register`` sends with the session's functions.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

import jsemu

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from jsemu.testing.spark_cluster import SparkStandalone


def _skip_without_spark() -> None:
    pytest.importorskip(
        "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' (and Java 17) runs the pipeline tests"
    )
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("Java is not on PATH (nor JAVA_HOME): the Spark standalone cluster needs Java 17")


@pytest.fixture(scope="package")
def cluster() -> Iterator[SparkStandalone]:
    """Started; its workers register while ``spark`` starts the driver, which waits for them."""
    _skip_without_spark()
    from jsemu.testing.spark_cluster import SparkStandalone

    cluster = SparkStandalone(workers=2, memory="1g", cores=1, timeout=120)
    try:
        cluster.start(wait=False)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="package")
def spark(cluster: SparkStandalone) -> Iterator[SparkSession]:
    """A session on the cluster, once both executors have registered with it."""
    from pyspark.sql import SparkSession

    from jsemu.pipeline import register

    session = (
        SparkSession.builder.master(cluster.url)
        .appName("jsemu-standalone-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.executor.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.minBatchesToRetain", "100")
        .getOrCreate()
    )
    try:
        session.sparkContext.setLogLevel("ERROR")
        register(session)
        cluster.wait_for_workers()
        deadline = time.monotonic() + 120
        while session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3:  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the cluster's two executors never registered with the driver"
            time.sleep(0.1)
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="package")
def emu() -> Iterator[str]:
    """jsemu on a TCP port of this machine: the executors are other processes."""
    with jsemu.Server.in_thread(port=0) as srv:
        yield srv.server.url
