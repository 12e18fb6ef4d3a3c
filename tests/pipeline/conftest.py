"""One local SparkSession for the whole package (about 6 s to start) and one jsemu server in a
thread; Spark's Python workers reach servers over TCP."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

import jsemu

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="package")
def spark() -> Iterator[SparkSession]:
    from pyspark.sql import SparkSession  # here: the modules skip without pyspark or Java

    from jsemu.pipeline import register

    os.environ.pop("PYSPARK_PYTHON", None)  # register() picks this interpreter for the workers
    session = (
        SparkSession.builder.master("local[2]")
        .appName("jsemu-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.minBatchesToRetain", "100")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


@pytest.fixture(scope="package")
def emu() -> Iterator[str]:
    with jsemu.Server.in_thread(port=0) as srv:
        yield srv.server.url
