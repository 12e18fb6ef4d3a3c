"""Spark over a stream. The headline is what a batch job waits for: the first read of a
stream never read before, in a fresh Spark session (``benchmarks.pipeline_first``: a fresh
server process and a fresh Spark process per run, nothing warmed before the clock starts,
``count(*)``, ``sum(length(data))`` and ``max(seq)`` in one aggregation), with the third read
of the same session as the warm row: medians of ``--runs`` runs with the spread.

Then, in one more session warmed on purpose: the server alone and one reader task without
Spark, a cached read through each path (``read_path=auto``, through Direct Get batches; one
through a pull consumer per task, ``read_path=consumer``), a streaming read with
``availableNow``, a point-in-time view (``last_per_subject`` at half the stream) and the
end-to-end latency of a new message through a running streaming query.

    python -m benchmarks.pipeline [--messages 1000000] [--subjects 10000] [--partitions 4] [--runs 3]
                                  [--first-only] [--real]

The server runs as its own process (``jsemu serve``, or ``nats-server -js`` with ``--real``)
and is filled with acknowledged publishes first; Spark runs locally on all cores.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from typing import Any

from benchmarks import pipeline_first
from benchmarks.client import Conn
from benchmarks.suite import RealServer, create, fill_acked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--real", action="store_true", help="read from nats-server instead of jsemu")
    parser.add_argument("--runs", type=int, default=3, help="first-read runs (a fresh server and session each)")
    parser.add_argument(
        "--first-only", action="store_true", help="only the rows of fresh sessions (first and third reads)"
    )
    parser.add_argument(
        "--floors", action="store_true", help="also the first read of rows from no server (memory_source, range)"
    )
    args = parser.parse_args()
    name = "nats-server" if args.real else "jsemu"
    n = args.messages
    print(
        f"{name}: {n:,} messages on {args.subjects:,} subjects; {args.runs} runs, each a fresh server "
        "and a fresh Spark session (local[*]), default partitions"
    )
    print(f"{'read (median of the runs)':<64}{'rows':>12}{'seconds':>10}{'rows/s':>12}   spread (rows/s)")
    fast = pipeline_first.FAST_START.split("=", 1)[1]
    sets: list[tuple[str, str, tuple[str, ...], bool]] = [
        ("batch read", "jetstream", (), True),
        (f"batch read, JVM {fast}", "jetstream", (pipeline_first.FAST_START,), False),
    ]
    if args.floors:
        sets += [
            ("floor: Python source, no server", "memory", (), False),
            (f"floor: Python source, no server, JVM {fast}", "memory", (pipeline_first.FAST_START,), False),
            ("floor: spark.range, no Python", "range", (), False),
        ]
    for label, source, confs, third in sets:
        results = pipeline_first.runs(args.real, n, args.subjects, args.runs, source, confs)
        for row, seconds, rate, low, high in pipeline_first.rows(results, n, label, third):
            print(f"{row:<64}{n:>12,}{seconds:>10.1f}{rate:>12,.0f}   {low:,.0f} to {high:,.0f}")
        print(f"  {pipeline_first.cpu_line(results)}", flush=True)
    if args.first_only:
        return

    from pyspark.sql import SparkSession

    from jsemu.pipeline import register
    from jsemu.pipeline.views import last_per_subject

    server = RealServer(jsemu_process=not args.real)
    try:
        conn = Conn(server.port)
        create(conn, "P", ["p.>"])
        t0 = time.perf_counter()
        fill_acked(conn, "P", (b"p.%d" % (i % args.subjects) for i in range(args.messages)), args.messages)
        fill = time.perf_counter() - t0
        url = f"nats://127.0.0.1:{server.port}"
        served_s = _served(server.port, args.messages)
        parsed_s = _parsed(url, args.messages)
        consumer_parsed_s = _parsed(url, args.messages, read_path="consumer")
        spark = (
            SparkSession.builder.master("local[*]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", str(args.partitions))
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        # Warm up (JVM, Python workers, the cache's code): the first cached read of a session is
        # slower whatever it reads, so each timed read below is a second one.
        for path in ("direct", "consumer"):
            warm = spark.read.format("jetstream").option("url", url).option("stream", "P").option("read_path", path)
            warm = warm.load().cache()
            warm.count()
            warm.unpersist()
        df = spark.read.format("jetstream").option("url", url).option("stream", "P")
        df = df.option("partitions", str(args.partitions)).load().cache()
        t0 = time.perf_counter()
        read = df.count()  # read_path auto: Direct Get batches (the stream allows them)
        read_s = time.perf_counter() - t0
        by_consumer = spark.read.format("jetstream").option("url", url).option("stream", "P")
        by_consumer = by_consumer.option("partitions", str(args.partitions)).option("read_path", "consumer").load()
        t0 = time.perf_counter()
        consumer_read = by_consumer.cache().count()
        consumer_read_s = time.perf_counter() - t0
        by_consumer.unpersist()
        t0 = time.perf_counter()
        view = last_per_subject(df, ["p.>"], up_to_seq=args.messages // 2).count()
        view_s = time.perf_counter() - t0
        stream_rows, stream_s = _streaming_read(spark, url, args.partitions)
        latencies = _latencies(spark, url, conn)
        spark.stop()
    finally:
        server.stop()
    print(f"\nlater, in one session warmed on purpose: {args.partitions} read partitions")
    print(f"{'step':<40}{'rows':>12}{'seconds':>10}{'rows/s':>12}")
    print(
        f"{'fill (acked publishes, 10k at a time)':<40}{args.messages:>12,}{fill:>10.1f}{args.messages / fill:>12,.0f}"
    )
    print(f"{'server alone (batches of 10k, raw count)':<40}{n:>12,}{served_s:>10.1f}{n / served_s:>12,.0f}")
    print(f"{'one reader task, no Spark (Arrow)':<40}{n:>12,}{parsed_s:>10.1f}{n / parsed_s:>12,.0f}")
    print(
        f"{'one reader task, no Spark (consumer)':<40}{n:>12,}{consumer_parsed_s:>10.1f}{n / consumer_parsed_s:>12,.0f}"
    )
    print(f"{'read into Spark (Direct Get batches)':<40}{read:>12,}{read_s:>10.1f}{read / read_s:>12,.0f}")
    cr, crs = consumer_read, consumer_read_s
    print(f"{'read into Spark (pull consumers)':<40}{cr:>12,}{crs:>10.1f}{cr / crs:>12,.0f}")
    print(f"{'streaming read (availableNow)':<40}{stream_rows:>12,}{stream_s:>10.1f}{stream_rows / stream_s:>12,.0f}")
    print(f"{'last_per_subject at seq N/2':<40}{view:>12,}{view_s:>10.1f}{read / view_s:>12,.0f}")
    print(
        f"end-to-end latency of a new message through a running streaming query (publish to foreachBatch): "
        f"median {statistics.median(latencies) * 1000:,.0f} ms, max {max(latencies) * 1000:,.0f} ms "
        f"over {len(latencies)} messages"
    )


def _served(port: int, total: int) -> float:
    """Seconds for the server to send every message as Direct Get batches of 10,000 to a
    client that only counts them (no parsing): the server's side of a read."""
    import socket

    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b'CONNECT {"headers":true,"no_responders":true}\r\nSUB _R 1\r\n')
    t0 = time.perf_counter()
    for first in range(1, total + 1, 10_000):
        body = b'{"seq":%d,"batch":10000}' % first
        sock.sendall(b"PUB $JS.API.DIRECT.GET.P _R %d\r\n%s\r\n" % (len(body), body))
        tail = b""
        while b"NATS/1.0 204" not in tail:
            tail = tail[-64:] + sock.recv(1 << 20)
    seconds = time.perf_counter() - t0
    sock.close()
    return seconds


def _parsed(url: str, total: int, read_path: str = "direct") -> float:
    """Seconds for one reader task's code (Direct Get batches, or a pull consumer, into
    Arrow) without Spark."""
    from jsemu.pipeline.source import SeqRange, StreamPlan

    t0 = time.perf_counter()
    rows = sum(b.num_rows for b in StreamPlan({"url": url, "stream": "P"}).read(SeqRange(1, total, read_path)))
    if rows != total:
        raise RuntimeError(f"read {rows} of {total}")
    return time.perf_counter() - t0


def _streaming_read(spark: Any, url: str, partitions: int) -> tuple[int, float]:
    """Every message of P through ``readStream`` with ``trigger(availableNow=True)``: rows, seconds."""
    with tempfile.TemporaryDirectory(prefix="jsemu-bench-") as tmp:
        df = spark.readStream.format("jetstream").option("url", url).option("stream", "P")
        df = df.option("partitions", str(partitions)).load()
        t0 = time.perf_counter()
        query = df.writeStream.format("noop").option("checkpointLocation", tmp).trigger(availableNow=True).start()
        query.awaitTermination()
        seconds = time.perf_counter() - t0
        rows = sum(p["numInputRows"] for p in query.recentProgress)
    return rows, seconds


def _latencies(spark: Any, url: str, conn: Conn, probes: int = 5) -> list[float]:
    """Publish one message at a time to a stream a query reads with back-to-back micro-batches;
    the time from the publish to its micro-batch reaching ``foreachBatch`` on the driver."""
    create(conn, "L", ["lat"])
    seen: dict[int, float] = {}
    arrived = threading.Condition()

    def batch(df: Any, batch_id: int) -> None:
        now = time.perf_counter()
        with arrived:
            for row in df.select("seq").collect():
                seen[row.seq] = now
            arrived.notify_all()

    with tempfile.TemporaryDirectory(prefix="jsemu-bench-") as tmp:
        df = spark.readStream.format("jetstream").option("url", url).option("stream", "L").load()
        query = df.writeStream.foreachBatch(batch).option("checkpointLocation", tmp).start()
        out = []
        try:
            time.sleep(2)  # the first micro-batches (an empty stream) are behind us
            for probe in range(1, probes + 1):
                t0 = time.perf_counter()
                if "error" in conn.request("lat", b"probe"):
                    raise RuntimeError("publish refused")
                with arrived:
                    if not arrived.wait_for(lambda p=probe: p in seen, timeout=60):  # type: ignore[misc]
                        raise RuntimeError(f"message {probe} never reached the query")
                out.append(seen[probe] - t0)
        finally:
            query.stop()
    return out


if __name__ == "__main__":
    main()
