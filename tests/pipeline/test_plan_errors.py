"""Mistakes are one clear line, raised when the read is planned (before Spark starts a task):
a missing stream, no server, a bad option (a stream without Direct Get is read through a
consumer: ``test_consumer_path``); a naive ``up_to_time`` is refused rather than read in the machine's zone."""

from __future__ import annotations

import os
import shutil
import socket
import sys
from datetime import UTC, datetime

import pytest

pyspark = pytest.importorskip(
    "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' (and Java 17) runs the pipeline tests"
)
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Java is not on PATH (nor JAVA_HOME): the pipeline tests need Java 17", allow_module_level=True)
from pyspark.sql import SparkSession

from jsemu.pipeline.views import last_per_subject

from .streams import fill, read


def _error_of(spark: SparkSession, url: str, stream: str) -> str:
    with pytest.raises(Exception) as info:
        read(spark, url, stream).count()
    text = str(info.value)
    # Planned, not run: a task failure reads "Job aborted due to stage failure ... Task".
    assert "stage failure" not in text and "TaskSetManager" not in text
    return text


def test_a_missing_stream_is_named(spark: SparkSession, emu: str) -> None:
    text = _error_of(spark, emu, "NOPE")
    assert "stream 'NOPE' not found on " in text and "'stream' option" in text


def test_no_server_is_named(spark: SparkSession) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    text = _error_of(spark, f"nats://127.0.0.1:{port}", "S")
    assert f"cannot reach a NATS server at 'nats://127.0.0.1:{port}' for stream 'S'" in text


def test_a_bad_option_is_named(spark: SparkSession, emu: str) -> None:
    fill(emu, "BO", [("a", None, b"x")], deletes=[])
    with pytest.raises(Exception, match="the jetstream option 'batch' must be a whole number, not 'lots'"):
        read(spark, emu, "BO", batch="lots").count()


def test_a_naive_up_to_time_is_refused(spark: SparkSession, emu: str) -> None:
    fill(emu, "NT", [("a", None, b"x")], deletes=[])
    df = read(spark, emu, "NT")
    with pytest.raises(ValueError, match="has no time zone"):
        last_per_subject(df, ["nt.>"], up_to_time=datetime(2030, 1, 1))
    with pytest.raises(ValueError, match="not RFC 3339 with a zone"):
        last_per_subject(df, ["nt.>"], up_to_time="2030-01-01T00:00:00")
    assert last_per_subject(df, ["nt.>"], up_to_time=datetime(2030, 1, 1, tzinfo=UTC)).count() == 1


def test_register_makes_the_workers_run_this_interpreter(spark: SparkSession) -> None:
    """No PYSPARK_PYTHON needed on a local master (the package fixture unsets it)."""
    assert spark.sparkContext.pythonExec == sys.executable
