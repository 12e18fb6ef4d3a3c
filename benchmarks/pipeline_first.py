"""A Spark job's first read, as a batch job meets it: a fresh server process filled with
acknowledged publishes, a fresh ``SparkSession`` in a fresh process (a new JVM, new Python
workers), then one read of the stream, never read before, through the ``jetstream`` data
source with ``count(*)``, ``sum(length(data))`` and ``max(seq)`` in one aggregation (so the
data column is materialised). Nothing is read or warmed before the clock starts; the clock
covers ``load()`` (the read's planning: STREAM.INFO and the partitions) and the aggregation.
The same session then reads the stream twice more: the third read is the warm figure.

    python -m benchmarks.pipeline_first [--messages 1000000] [--subjects 10000] [--real]
                                        [--source jetstream|memory|range] [--conf key=value ...]

runs one such job and prints one JSON line (``runs`` below starts one process per run, so each
run has its own JVM). Each run also reports the CPU seconds each process spent on its first
read (the server, Spark's JVM, Spark's Python workers and planners, from ``/proc``): on a shared
machine the wall clock is mostly the load, the CPU split says where a read's time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.client import Conn
from benchmarks.pipeline_profile import _cpu, _tree
from benchmarks.suite import RealServer, create, fill_acked

#: What one read asks of every message (the issue's job): the data column is read, not skipped.
QUERY = "SELECT count(*) AS n, sum(length(data)) AS bytes, max(seq) AS last FROM m"
READS = 3  # the first read, then two more in the same session: the third is the warm row
#: What a run reads: the stream through the ``jetstream`` data source; or, for the floor under
#: any data source, the same columns from a Python data source that reads nothing
#: (``benchmarks.memory_source``) or from ``spark.range`` (the JVM alone, no Python).
SOURCES = ("jetstream", "memory", "range")
#: The builder option the pipeline guide gives batch jobs on small machines: the JVM compiles
#: with C1 alone, so its first query does not wait for C2 compiler threads (about 7 CPU seconds
#: of a fresh session's first read on 2 cores, against the tasks' threads).
FAST_START = "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1"


def _view(spark: Any, source: str, url: str, messages: int) -> None:
    """The rows the query reads as the view ``m``: the stream, or a floor with no server."""
    if source == "memory":
        spark.read.format("memory_rows").option("rows", str(messages)).load().createOrReplaceTempView("m")
    elif source == "range":
        data = "cast(concat('hello', '') AS binary) AS data"
        spark.range(1, messages + 1, numPartitions=10).selectExpr("id AS seq", data).createOrReplaceTempView("m")
    else:
        spark.read.format("jetstream").option("url", url).option("stream", "P").load().createOrReplaceTempView("m")


def one_run(
    real: bool, messages: int, subjects: int, source: str = "jetstream", confs: Sequence[str] = ()
) -> dict[str, Any]:
    """One job in this process: fill a fresh server, start Spark, read ``READS`` times.
    ``source`` ``memory`` or ``range`` reads rows made with no server (``SOURCES``); ``confs``
    are ``key=value`` settings for the session's builder."""
    server = RealServer(jsemu_process=not real) if source == "jetstream" else None
    try:
        url = ""
        if server is not None:
            conn = Conn(server.port)
            create(conn, "P", ["p.>"])
            fill_acked(conn, "P", (b"p.%d" % (i % subjects) for i in range(messages)), messages)
            conn.sock.close()
            url = f"nats://127.0.0.1:{server.port}"

        from pyspark.sql import SparkSession

        from jsemu.pipeline import register

        t0 = time.perf_counter()
        builder = SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false")
        for conf in confs:
            builder = builder.config(*conf.split("=", 1))
        spark = builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        if source == "memory":
            from benchmarks.memory_source import MemorySource

            spark.dataSource.register(MemorySource)
        session_s = time.perf_counter() - t0
        jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[union-attr]

        def used() -> tuple[float, float, float]:
            python = sum(_cpu(p) for p in _tree(jvm) if p != jvm)
            return _cpu(server.proc.pid) if server else 0.0, _cpu(jvm, reaped=False), python

        seconds: list[float] = []
        cpu: list[float] = []
        for k in range(READS):
            before = used()
            t0 = time.perf_counter()
            _view(spark, source, url, messages)
            row = spark.sql(QUERY).collect()[0]
            seconds.append(time.perf_counter() - t0)
            if k == 0:
                cpu = [a - b for a, b in zip(used(), before)]
            if (row.n, row.bytes, row.last) != (messages, 5 * messages, messages):
                raise RuntimeError(f"read {row} of {messages} messages")
        spark.stop()
    finally:
        if server is not None:
            server.stop()
    return {"session": session_s, "reads": seconds, "cpu": cpu, "load": os.getloadavg()[0]}


def runs(
    real: bool, messages: int, subjects: int, count: int, source: str = "jetstream", confs: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """``count`` jobs, each in a process of its own (a fresh JVM and fresh Python workers)."""
    out = []
    for _ in range(count):
        args = [sys.executable, "-m", "benchmarks.pipeline_first", "--messages", str(messages)]
        args += ["--subjects", str(subjects), "--source", source] + (["--real"] if real else [])
        args += [f"--conf={conf}" for conf in confs]
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        lines = done.stdout.strip().splitlines()
        if done.returncode or not lines:
            raise RuntimeError(f"a first-read run failed:\n{done.stderr[-4000:]}")
        out.append(json.loads(lines[-1]))
    return out


def rows(
    results: list[dict[str, Any]], messages: int, label: str = "batch read", third: bool = True
) -> list[tuple[str, float, float, float, float]]:
    """(row, median seconds, median rows/s, slowest rows/s, fastest rows/s) for the first and
    (with ``third``) the third read."""
    out = []
    reads = [(f"{label}, first in a fresh session", 0)] + (
        [(f"{label}, third read in the session", -1)] if third else []
    )
    for name, k in reads:
        secs = [r["reads"][k] for r in results]
        rates = [messages / s for s in secs]
        out.append((name, statistics.median(secs), statistics.median(rates), min(rates), max(rates)))
    return out


def cpu_line(results: list[dict[str, Any]]) -> str:
    """The first read's CPU seconds per process, medians over the runs."""
    parts = [statistics.median(r["cpu"][i] for r in results) for i in range(3)]
    load = statistics.median(r["load"] for r in results)
    return f"first read CPU seconds (medians): server {parts[0]:.1f}, JVM {parts[1]:.1f}, Python {parts[2]:.1f}; load {load:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    parser.add_argument("--real", action="store_true", help="read from nats-server instead of jsemu")
    parser.add_argument("--source", choices=SOURCES, default="jetstream", help="what the read reads (see SOURCES)")
    parser.add_argument("--conf", action="append", default=[], help="key=value for the session's builder")
    args = parser.parse_args()
    print(json.dumps(one_run(args.real, args.messages, args.subjects, args.source, args.conf)), flush=True)


if __name__ == "__main__":
    main()
