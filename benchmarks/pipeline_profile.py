"""Where a Spark read of a stream spends its time: the Python worker side (one reader task
alone, yielding Arrow record batches, through Direct Get or a consumer) against the JVM side
(the same read into Spark with ``df.count()`` and with ``write.format("noop")``), varying the
partitions, ``spark.sql.execution.arrow.maxRecordsPerBatch``, the messages per Direct Get
request and the master (``local[*]`` or ``local[2]``).

    python -m benchmarks.pipeline_profile [--messages 1000000] [--real] [--quick]

One server process (``jsemu serve``, or ``nats-server -js`` with ``--real``), filled once;
each Spark configuration gets a fresh session. Prints rows/s per row and the load average.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from benchmarks.client import Conn
from benchmarks.suite import RealServer, create, fill_acked


def _reader_alone(url: str, total: int, **options: str) -> float:
    """Seconds for one task's code (no Spark) to yield every message as record batches."""
    from jsemu.pipeline.source import SeqRange, StreamPlan

    plan = StreamPlan({"url": url, "stream": "P", **options})
    plan.check()
    t0 = time.perf_counter()
    rows = sum(b.num_rows for b in plan.read(SeqRange(1, total, plan.path)))
    seconds = time.perf_counter() - t0
    if rows != total:
        raise RuntimeError(f"read {rows} of {total}")
    return seconds


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int, reaped: bool = True) -> float:
    """CPU seconds of a process (and its reaped children), from ``/proc/<pid>/stat``; 0 once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(v) for v in fields[11 : 15 if reaped else 13]) / _TICK


def _tree(root: int) -> list[int]:
    """``root`` and every process below it (Spark's Python daemon and workers under the JVM)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += [child for child, parent in parents.items() if parent == pid]
    return out


def _spark_read(
    url: str, server_pid: int, total: int, master: str, action: str, partitions: int, arrow_batch: int, **options: str
) -> tuple[float, float, float, float]:
    """Seconds of the read, and the CPU seconds it took in the server, the JVM and Spark's
    Python workers."""
    from pyspark.sql import SparkSession

    from jsemu.pipeline import register

    builder = SparkSession.builder.master(master).config("spark.ui.enabled", "false")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    if arrow_batch:
        builder = builder.config("spark.sql.execution.arrow.maxRecordsPerBatch", str(arrow_batch))
    spark = builder.getOrCreate()
    try:
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        reader = spark.read.format("jetstream").option("url", url).option("stream", "P")
        reader = reader.option("partitions", str(partitions))
        for key, value in options.items():
            reader = reader.option(key, value)
        df: Any = reader.load()
        jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[union-attr]
        df.limit(1).collect()  # start the Python daemon, so it is in the tree

        def used() -> tuple[float, float, float]:
            workers = sum(_cpu(p) for p in _tree(jvm) if p != jvm)  # the daemon has reaped ended ones
            return _cpu(server_pid), _cpu(jvm, reaped=False), workers

        before = used()
        t0 = time.perf_counter()
        if action == "count":
            rows = df.count()
        else:
            df.write.format("noop").mode("overwrite").save()
            rows = total
        seconds = time.perf_counter() - t0
        after = used()
    finally:
        spark.stop()
    if rows != total:
        raise RuntimeError(f"read {rows} of {total}")
    server, java, python = (a - b for a, b in zip(after, before))
    return seconds, server, java, python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--real", action="store_true", help="read from nats-server instead of jsemu")
    parser.add_argument("--quick", action="store_true", help="only the reader rows and one Spark row")
    args = parser.parse_args()
    n = args.messages
    server = RealServer(jsemu_process=not args.real)

    def row(name: str, seconds: float, cpu: tuple[float, ...] = ()) -> None:
        used = "".join(f"{c:>8.1f}" for c in cpu) if cpu else f"{'':>8}{'':>8}{'':>8}"
        print(f"{name:<56}{seconds:>8.1f}{n / seconds:>10,.0f}{used}{os.getloadavg()[0]:>6.1f}", flush=True)

    try:
        conn = Conn(server.port)
        create(conn, "P", ["p.>"])
        fill_acked(conn, "P", (b"p.%d" % (i % 10_000) for i in range(n)), n)
        url = f"nats://127.0.0.1:{server.port}"
        print(f"{'step (CPU seconds: server, JVM, Python workers)':<56}{'s':>8}{'rows/s':>10}", end="")
        print(f"{'server':>8}{'JVM':>8}{'Python':>8}{'load':>6}")
        for batch in ("1000", "10000", "50000"):
            row(f"reader alone, Direct Get, batch {batch}", _reader_alone(url, n, batch=batch))
        row("reader alone, consumer, batch 10000", _reader_alone(url, n, read_path="consumer"))
        spark_rows: list[tuple[str, str, int, int, dict[str, str]]] = [
            ("local[*]", "noop", 4, 0, {}),  # the first session warms the JVM up
            ("local[*]", "count", 4, 0, {}),
            ("local[*]", "noop", 4, 0, {}),
        ]
        if not args.quick:
            spark_rows += [
                ("local[*]", "noop", 2, 0, {}),
                ("local[*]", "noop", 8, 0, {}),
                ("local[*]", "noop", 4, 100_000, {}),
                ("local[*]", "noop", 4, 0, {"batch": "50000"}),
                ("local[2]", "noop", 4, 0, {}),
                ("local[*]", "noop", 4, 0, {"read_path": "consumer"}),
            ]
        for master, action, parts, arrow_batch, options in spark_rows:
            extra = "".join(f", {k} {v}" for k, v in options.items())
            arrow = f", arrow batch {arrow_batch}" if arrow_batch else ""
            name = f"Spark {master} {action}, {parts} partitions{arrow}{extra}"
            seconds, *cpu = _spark_read(url, server.proc.pid, n, master, action, parts, arrow_batch, **options)
            row(name, seconds, tuple(cpu))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
