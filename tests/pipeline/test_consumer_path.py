"""A stream without ``allow_direct`` is read through an ephemeral pull consumer per task: the
same rows as the Direct Get path, from jsemu and from nats-server, checked against a plain
model of what was published (random streams with deletes, stored headers, subject filters,
ranges cut anywhere); through Spark in batch and streaming reads; the plan says which path."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
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

from jsemu.pipeline.client import NatsClient
from jsemu.pipeline.source import SeqRange, StreamPlan

from .streams import Pub, fill, read, rows

_TRICKY = [b"", b"\r\n", b"MSG a 1 $JS.ACK.S.c.1.1.1.1.0 1\r\nx\r\n", b"HMSG x 1 2 3\r\nNATS/1.0\r\n\r\n", b"\xff"]
headers = st.none() | st.lists(
    st.tuples(st.sampled_from(["K", "K", "X-E", "Ünï"]), st.sampled_from(["", "v", "ä"])), max_size=3
)
payloads = st.sampled_from(_TRICKY) | st.binary(max_size=30) | st.binary(min_size=2000, max_size=5000)
pubs = st.lists(st.tuples(st.sampled_from(["a", "a.b", "b.c.d", "é"]), headers, payloads), min_size=1, max_size=50)


@pytest.fixture(scope="module")
def real() -> Iterator[str]:
    server = RealServer()
    try:
        yield f"nats://127.0.0.1:{server.port}"
    finally:
        server.stop()


def _matches(pattern: str, subject: str) -> bool:
    want, have = pattern.split("."), subject.split(".")
    for k, token in enumerate(want):
        if token == ">":
            return len(have) > k
        if k >= len(have) or (token != "*" and token != have[k]):
            return False
    return len(want) == len(have)


def _model(stream: str, published: list[Pub], deletes: list[int], subject: str, first: int, last: int) -> list[Any]:
    """(seq, subject, headers, data) of what the stream keeps in ``first..last``, filtered."""
    out = []
    for seq, (subj, hdrs, data) in enumerate(published, start=1):
        full = f"{stream.lower()}.{subj}"
        if first <= seq <= last and seq not in deletes and (not subject or _matches(subject, full)):
            out.append((seq, full, hdrs or [], data))
    return out


def _plan_read(url: str, stream: str, first: int, last: int, parts: int, **options: Any) -> list[Any]:
    plan = StreamPlan(
        {"url": url, "stream": stream, "partitions": str(parts), **{k: str(v) for k, v in options.items()}}
    )
    plan.check()
    got = []
    for part in plan.split(first, last):
        for batch in plan.read(part):
            got += [
                (r["seq"], r["subject"], r["time_ns"], [(h["key"], h["value"]) for h in r["headers"]], r["data"])
                for r in batch.to_pylist()
            ]
    return got


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(published=pubs, deletes=st.sets(st.integers(1, 50), max_size=10), data=st.data())
def test_the_consumer_path_reads_what_direct_get_reads(
    emu: str, real: str, published: list[Pub], deletes: set[int], data: st.DataObject
) -> None:
    n = len(published)
    subject = data.draw(st.sampled_from(["", "cp.a.*", "cp.>", "cp.a", "cp.b.*.d", "cp.é"]))
    first = data.draw(st.integers(1, n))
    last = data.draw(st.integers(first - 1, n + 2))
    parts, batch = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 60))
    gone = sorted(d for d in deletes if d <= n)
    want = _model("CP", published, gone, subject, first, last)
    for url in (emu, real):
        fill(url, "CP", published, gone)
        options = {"batch": batch, "subject": subject}
        direct = _plan_read(url, "CP", first, last, parts, read_path="direct", **options)
        consumer = _plan_read(url, "CP", first, last, parts, read_path="consumer", **options)
        assert [(s, subj, h, d) for s, subj, _, h, d in consumer] == want
        assert consumer == direct
        with NatsClient(url) as nc:  # every task deleted its consumer
            assert nc.stream_info("CP")["state"]["consumer_count"] == 0


@pytest.mark.parametrize("server", ["emu", "real"])
def test_start_time_on_the_consumer_path_finds_the_direct_get_sequence(
    server: str, emu: str, real: str, request: pytest.FixtureRequest
) -> None:
    url = emu if server == "emu" else real
    fill(url, "CT", [("a", None, b"%d" % i) for i in range(6)], [2])
    with NatsClient(url) as nc:
        times = [m.time_ns for m in nc.direct_batch("CT", {"seq": 1, "batch": 10})]
    from jsemu.timefmt import format_ns

    for when in (times[0] - 1, times[1], times[2] + 1, times[-1] + 1_000_000):
        found = []
        for path in ("direct", "consumer"):
            plan = StreamPlan({"url": url, "stream": "CT", "read_path": path, "start_time": format_ns(when)})
            with plan.connect() as nc:
                state = plan.info(nc)["state"]
                found.append(plan.first_seq(nc, state))
        assert found[0] == found[1]


def test_the_plan_names_the_path_it_chose(emu: str, caplog: pytest.LogCaptureFixture) -> None:
    fill(emu, "CN", [("a", None, b"x")], [], allow_direct=False)
    fill(emu, "CD", [("a", None, b"x")], [])
    with caplog.at_level(logging.INFO, logger="jsemu.pipeline"):
        nodirect, direct = StreamPlan({"url": emu, "stream": "CN"}), StreamPlan({"url": emu, "stream": "CD"})
        nodirect.check()
        direct.check()
    assert nodirect.path == "consumer" and direct.path == "direct"
    assert nodirect.split(1, 1) == [SeqRange(1, 1, "consumer")]
    assert "stream 'CN' on " in caplog.text and "ephemeral pull consumer per task" in caplog.text
    assert "stream 'CD' on " in caplog.text and "through Direct Get batches" in caplog.text
    with pytest.raises(Exception, match="does not allow Direct Get .* read_path 'direct'"):
        StreamPlan({"url": emu, "stream": "CN", "read_path": "direct"}).check()
    with pytest.raises(ValueError, match="'read_path' must be 'auto', 'direct' or 'consumer', not 'fast'"):
        StreamPlan({"url": emu, "stream": "CN", "read_path": "fast"})


def test_spark_reads_a_stream_without_direct_get_like_one_with_it(spark: SparkSession, emu: str, real: str) -> None:
    published: list[Pub] = [
        (f"k{i % 4}", [("H", "1"), ("H", "2")] if i % 7 == 0 else None, b"%d" % i) for i in range(300)
    ]
    for url in (emu, real):
        fill(url, "SD", published, [3, 150])
        fill(url, "SN", published, [3, 150], allow_direct=False)
        options = {"partitions": 3, "batch": 64, "subject": "*.k1"}
        with_direct = [r[:1] + r[3:] for r in rows(read(spark, url, "SD", **options))]
        without = [r[:1] + r[3:] for r in rows(read(spark, url, "SN", **options))]
        assert (
            without == with_direct == [(s, h, d) for s, _, h, d in _model("SN", published, [3, 150], "sn.k1", 1, 300)]
        )


def test_the_readme_example_reads_a_bucket_made_with_client_defaults(spark: SparkSession, emu: str, real: str) -> None:
    async def make_bucket(url: str) -> None:
        nc = await nats.connect(url)
        try:
            js = nc.jetstream()
            await js.create_key_value(bucket="dflt")
            kv = await js.key_value("dflt")
            for key in ("a", "b", "a"):
                await kv.put(key, key.encode())
            assert not (await js.stream_info("KV_dflt")).config.allow_direct  # nats-py's default
        finally:
            await nc.close()

    for url in (emu, real):
        asyncio.run(make_bucket(url))
        got = read(spark, url, "KV_dflt").select("seq", "subject", "data").orderBy("seq").collect()
        # history 1: the first "a" is gone, so the read starts at the stream's first sequence, 2
        assert [(r.seq, r.subject, bytes(r.data)) for r in got] == [(2, "$KV.dflt.b", b"b"), (3, "$KV.dflt.a", b"a")]


def test_a_streaming_read_without_direct_get_sees_every_message_once(
    spark: SparkSession, emu: str, tmp_path: Path
) -> None:
    fill(emu, "SS", [(f"k{i % 3}", None, b"%d" % i) for i in range(40)], [5], allow_direct=False)
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    for more in (0, 25):  # the second run goes on from the first one's checkpoint
        with NatsClient(emu) as nc:
            nc.publish_acked(iter([("ss.late", None, b"late")] * more))
        df = spark.readStream.format("jetstream").option("url", emu).option("stream", "SS")
        df = df.option("max_per_trigger", "15").option("partitions", "2").load()
        query = df.writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
        query.trigger(availableNow=True).start().awaitTermination()
    seqs = sorted(r.seq for r in spark.read.parquet(out).select("seq").collect())
    assert seqs == [s for s in range(1, 66) if s != 5]
