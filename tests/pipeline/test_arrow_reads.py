"""Direct Get batch replies parsed straight into Arrow columns give exactly what the message
by message reader gives (``NatsClient.direct_batch``), from jsemu and from nats-server: random
streams with deletes, stored headers (duplicate keys kept in order) and payloads that look
like protocol."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import RealServer

pyspark = pytest.importorskip(
    "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' (and Java 17) runs the pipeline tests"
)
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Java is not on PATH (nor JAVA_HOME): the pipeline tests need Java 17", allow_module_level=True)
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema

from jsemu.pipeline.client import NatsClient
from jsemu.pipeline.columns import ARROW_SCHEMA, Columns, read_batch

from .streams import Pub, direct_all, fill, read, rows

_TRICKY = [b"", b"\r\n", b"HMSG x 1 2 3\r\nNATS/1.0\r\n\r\n", b"\r\n\r\n", b"MSG a 1 1\r\nx\r\n", b"\xff\xfe"]
_KEYS = ["K", "K", "X-Empty", "nats-msg-id", "Ünï"]
headers = st.none() | st.lists(st.tuples(st.sampled_from(_KEYS), st.sampled_from(["", "v", "a b", "ä"])), max_size=4)
payloads = st.sampled_from(_TRICKY) | st.binary(max_size=40) | st.binary(min_size=3000, max_size=9000)
pubs = st.lists(st.tuples(st.sampled_from(["a", "a.b", "b.c.d", "é"]), headers, payloads), min_size=1, max_size=60)


@pytest.fixture(scope="module")
def real() -> Iterator[str]:
    server = RealServer()
    try:
        yield f"nats://127.0.0.1:{server.port}"
    finally:
        server.stop()


def _arrow_all(url: str, stream: str, batch: int, **request: Any) -> list[tuple[Any, ...]]:
    cols, seq = Columns(), request.pop("seq", 1)
    with NatsClient(url) as nc:
        while True:
            got, last = read_batch(nc, stream, {"seq": seq, "batch": batch, **request}, cols)
            if not got:
                break
            seq = last + 1
    table = cols.batch().to_pylist()
    return [
        (r["seq"], r["subject"], r["time_ns"], [(h["key"], h["value"]) for h in r["headers"]], r["data"]) for r in table
    ]


# ``data_too_large``: the published lists are meant to be long (batches must cross them), and on a
# loaded machine hypothesis sometimes draws too many such inputs in a row and stops the test.
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(published=pubs, deletes=st.sets(st.integers(1, 60), max_size=10), batch=st.integers(1, 70), data=st.data())
def test_arrow_columns_equal_direct_get_batches(
    emu: str, real: str, published: list[Pub], deletes: set[int], batch: int, data: st.DataObject
) -> None:
    gone = sorted(d for d in deletes if d < len(published))  # the last one stays: no 404 mid-read
    subject = data.draw(st.none() | st.sampled_from(["ar.a.*", "ar.>", "ar.a", "ar.b.*.d"]))
    extra = {"next_by_subj": subject} if subject else {}
    for url in (emu, real):
        fill(url, "AR", published, gone)
        want = direct_all(url, "AR", **extra)
        assert _arrow_all(url, "AR", batch, **extra) == want
        assert len(want) == (len(published) - len(gone) if not subject else len(want))


def test_the_arrow_schema_is_sparks(spark: SparkSession, emu: str) -> None:
    fill(emu, "AS", [("a", None, b"x")], [])
    assert ARROW_SCHEMA.equals(to_arrow_schema(read(spark, emu, "AS").schema, timezone="UTC"))


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(published=pubs, deletes=st.sets(st.integers(1, 60), max_size=10), parts=st.integers(1, 3))
def test_spark_reads_equal_direct_get_batches(
    spark: SparkSession, emu: str, published: list[Pub], deletes: set[int], parts: int
) -> None:
    fill(emu, "SP", published, sorted(d for d in deletes if d <= len(published)))
    assert rows(read(spark, emu, "SP", partitions=parts, batch=7)) == direct_all(emu, "SP")
