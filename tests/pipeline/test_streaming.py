"""``readStream.format("jetstream")``: offsets are stream sequences, so a query restarted from
its checkpoint goes on where it stopped and sees every message once; ``writeStream`` sends
ids that make a replayed micro-batch a no-op."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pyspark = pytest.importorskip(
    "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' (and Java 17) runs the pipeline tests"
)
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Java is not on PATH (nor JAVA_HOME): the pipeline tests need Java 17", allow_module_level=True)
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jsemu.pipeline.client import NatsClient

from .streams import direct_all, fill


def _stream(spark: SparkSession, url: str, stream: str, **options: Any) -> Any:
    reader = spark.readStream.format("jetstream").option("url", url).option("stream", stream)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def _wait(query: Any, rows: int, timeout: float = 90) -> None:
    """Until the query has taken in at least ``rows`` rows."""
    deadline = time.monotonic() + timeout
    while sum(p["numInputRows"] for p in query.recentProgress) < rows:
        assert query.exception() is None, query.exception()
        assert time.monotonic() < deadline, "the query fell behind"
        time.sleep(0.2)


def test_a_restarted_query_sees_every_message_once(spark: SparkSession, emu: str, tmp_path: Path) -> None:
    fill(
        emu, "SQ", [(f"k{i % 3}", [("H", "1"), ("H", "2")] if i % 5 == 0 else None, b"%d" % i) for i in range(40)], [5]
    )
    stop = threading.Event()

    def publish() -> None:
        with NatsClient(emu) as nc:
            while not stop.is_set():
                nc.publish_acked(iter([("sq.live", None, b"x")] * 3))
                time.sleep(0.02)

    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    try:
        for rows in (30, 20):  # the second run starts from the first one's checkpoint
            df = _stream(spark, emu, "SQ", partitions=2)
            query = (
                df.writeStream.format("parquet")
                .option("path", out)
                .option("checkpointLocation", checkpoint)
                .trigger(processingTime="100 milliseconds")
                .start()
            )
            try:
                _wait(query, rows)
            finally:
                query.stop()
    finally:
        stop.set()
        publisher.join()
    last = spark.readStream.format("jetstream").option("url", emu).option("stream", "SQ").load()
    query = last.writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
    query.trigger(availableNow=True).start().awaitTermination()
    got = [
        (r.seq, r.subject, r.time_ns, [(h.key, h.value) for h in r.headers], bytes(r.data))
        for r in spark.read.parquet(out).orderBy("seq").collect()
    ]
    want = direct_all(emu, "SQ")
    assert len(want) > 60 and [g[0] for g in got] == [w[0] for w in want]  # no gap, no repeat
    assert got == want


def test_available_now_with_a_filter_a_start_and_a_limit(spark: SparkSession, emu: str, tmp_path: Path) -> None:
    fill(emu, "SF", [(("a.b", "a.c", "b.c")[i % 3], None, b"%d" % i) for i in range(60)], [13, 14])
    df = _stream(spark, emu, "SF", subject="sf.a.*", start_seq=10, max_per_trigger=15)
    query = (
        df.writeStream.format("memory")
        .queryName("sf")
        .option("checkpointLocation", str(tmp_path))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    got = [r.seq for r in spark.table("sf").orderBy("seq").collect()]
    assert got == [m[0] for m in direct_all(emu, "SF", seq=10, next_by_subj="sf.a.*")]
    assert len([p for p in query.recentProgress if p["numInputRows"]]) == 4  # sequences 10..60, 15 at a time


def test_a_replayed_streaming_write_is_deduplicated(spark: SparkSession, emu: str, tmp_path: Path) -> None:
    fill(emu, "SRC", [(f"k{i % 4}", [("H", str(i))], b"%d" % i) for i in range(30)], [])
    fill(emu, "DST", [], [])
    checkpoint = tmp_path / "checkpoint"

    def run() -> Any:
        df = _stream(spark, emu, "SRC", max_per_trigger=10, partitions=2)
        df = df.select(F.regexp_replace("subject", "^src", "dst").alias("subject"), "headers", "data")
        query = (
            df.writeStream.format("jetstream")
            .option("url", emu)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        return query

    run()
    assert len(direct_all(emu, "DST")) == 30
    # As if the query died after its last batch was written but before Spark noted it done:
    # the restarted query runs that batch again, with the same id.
    commits = sorted((checkpoint / "commits").iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1)
    commits[-1].unlink()
    (checkpoint / "commits" / f".{commits[-1].name}.crc").unlink(missing_ok=True)
    replay = run()
    assert [p["batchId"] for p in replay.recentProgress if p["numInputRows"]] == [int(commits[-1].name)]
    got = direct_all(emu, "DST")
    # Two tasks per micro-batch publish side by side: the order within a batch may differ.
    assert sorted((s.replace("dst", "src", 1), d) for _, s, _, _, d in got) == sorted(
        (s, d) for _, s, _, _, d in direct_all(emu, "SRC")
    )
    ids = [dict(h)["Nats-Msg-Id"] for *_, h, _ in got]
    assert len(set(ids)) == 30 and all(i.count(":") == 3 for i in ids)
