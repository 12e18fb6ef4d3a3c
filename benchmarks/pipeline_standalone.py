"""Spark on a standalone cluster: the first read of a stream in a fresh session, jsemu and
nats-server side by side.

    python -m benchmarks.pipeline_standalone [--messages 1000000] [--subjects 10000] [--partitions 4] [--runs 5]

A master and two workers (``--memory 1g --cores 1`` each) start once from pyspark's own
``spark-class`` (``jsemu.testing.spark_cluster``); both servers run as processes (``jsemu
serve`` and ``nats-server -js``). Each run fills a new stream of ``--messages`` acknowledged
publishes on each server (so no read of it has warmed either server), then starts a fresh
driver process per server, alternating which goes first: a new ``SparkSession`` on the
``spark://`` URL, ``register``, a wait until both executors have registered (their JVMs start
per application), and then the timed read, ``count(*)``, ``sum(length(data))`` and ``max(seq)``
over the ``jetstream`` source, the data column materialised in the executors' Python workers
and sent to their JVMs. The row is the rows per second of that read, the median of the runs
with its spread, and jsemu / nats-server (>= 1.0: jsemu meets the target). Shown apart: a
second read of the same stream in the same session (executors' Python workers started, the
server's cache warm) and the session and executors' start-up (it does not depend on the server).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks.client import Conn
from benchmarks.pipeline_profile import _cpu, _tree
from benchmarks.suite import RealServer, create, fill_acked

KINDS = ("jsemu", "real")
NAMES = {"jsemu": "jsemu", "real": "nats-server"}
SIDES = ("server", "driver JVM", "executor JVMs", "executor Python")


def _executors(app_id: str) -> list[int]:
    """The pids of this application's executor JVMs (on this machine)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in args and app_id.encode() in args:
                found.append(int(entry))
    return found


def _cpu_split(server: int, driver_jvm: int, executors: list[int]) -> list[float]:
    """CPU seconds so far: the server, the driver's JVM, the executors' JVMs, their Python workers."""
    python = sum(_cpu(p) for e in executors for p in _tree(e) if p != e)  # the daemons reap ended workers
    return [_cpu(server), _cpu(driver_jvm, reaped=False), sum(_cpu(e, reaped=False) for e in executors), python]


def driver(master: str, url: str, stream: str, server_pid: int, partitions: int, messages: int) -> dict[str, Any]:
    """One fresh session on ``master`` and its first read of ``stream`` (in this process), with
    the CPU seconds the first read cost each side."""
    t0 = time.perf_counter()
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from jsemu.pipeline import register

    spark = (
        SparkSession.builder.master(master)
        .appName(f"jsemu-bench-{stream}")
        .config("spark.ui.enabled", "false")
        .config("spark.executor.memory", "512m")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    status = spark.sparkContext._jsc.sc()
    deadline = time.monotonic() + 120
    while status.getExecutorMemoryStatus().size() < 3:  # the driver and two executors
        if time.monotonic() > deadline:
            raise RuntimeError("the cluster's executors never registered")
        time.sleep(0.05)
    session_s = time.perf_counter() - t0
    seconds = []
    jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[union-attr]
    executors = _executors(spark.sparkContext.applicationId)
    cpu = _cpu_split(server_pid, jvm, executors)
    for _ in range(2):  # the first read, then the same again in the same session
        t0 = time.perf_counter()
        df = spark.read.format("jetstream").option("url", url).option("stream", stream)
        df = df.option("partitions", str(partitions)).load()
        (row,) = df.agg(F.count("*").alias("n"), F.sum(F.length("data")).alias("b"), F.max("seq").alias("m")).collect()
        seconds.append(time.perf_counter() - t0)
        if (row.n, row.b, row.m) != (messages, 5 * messages, messages):
            raise RuntimeError(f"read {row.n} rows, {row.b} bytes, last seq {row.m}; wanted {messages}")
        if len(seconds) == 1:
            cpu = [b - a for a, b in zip(cpu, _cpu_split(server_pid, jvm, executors))]
    spark.stop()
    return {"session_s": session_s, "read_s": seconds[0], "second_s": seconds[1], "cpu": cpu}


def _spread(values: list[float]) -> str:
    return f"{min(values):,.0f}-{max(values):,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--driver", nargs=4, metavar=("MASTER", "URL", "STREAM", "PID"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        master, url, stream, pid = args.driver
        print(json.dumps(driver(master, url, stream, int(pid), partitions=args.partitions, messages=args.messages)))
        return

    from jsemu.testing.spark_cluster import SparkStandalone

    servers = {kind: RealServer(jsemu_process=(kind == "jsemu")) for kind in KINDS}
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    try:
        with SparkStandalone(workers=2, memory="1g", cores=1) as cluster:
            for run in range(args.runs):
                stream = f"P{run}"
                for kind, server in servers.items():
                    conn = Conn(server.port)
                    create(conn, stream, [f"p{run}.>"])
                    subjects = (b"p%d.%d" % (run, i % args.subjects) for i in range(args.messages))
                    fill_acked(conn, stream, subjects, args.messages)
                for kind in KINDS if run % 2 == 0 else reversed(KINDS):
                    url = f"nats://127.0.0.1:{servers[kind].port}"
                    command = [sys.executable, "-m", "benchmarks.pipeline_standalone", "--driver"]
                    command += [cluster.url, url, stream, str(servers[kind].proc.pid)]
                    command += ["--partitions", str(args.partitions)]
                    command += ["--messages", str(args.messages)]
                    out = subprocess.run(command, check=False, capture_output=True, text=True, timeout=900)
                    if out.returncode:
                        raise RuntimeError(f"the {kind} driver failed:\n{out.stderr[-3000:]}")
                    result = json.loads(out.stdout.strip().splitlines()[-1])
                    results[kind].append(result)
                    rate = args.messages / result["read_s"]
                    again = args.messages / result["second_s"]
                    print(
                        f"run {run + 1} {NAMES[kind]:<12} session {result['session_s']:5.1f} s, "
                        f"first read {rate:>10,.0f} rows/s, second {again:>10,.0f} rows/s; first read's CPU s: "
                        + ", ".join(f"{name} {v:.1f}" for name, v in zip(SIDES, result["cpu"]))
                    )
                for server in servers.values():
                    Conn(server.port).request(f"$JS.API.STREAM.DELETE.{stream}")
    finally:
        for server in servers.values():
            server.stop()
    rates = {kind: [args.messages / r["read_s"] for r in results[kind]] for kind in KINDS}
    seconds = {kind: [args.messages / r["second_s"] for r in results[kind]] for kind in KINDS}
    sessions = {kind: [r["session_s"] for r in results[kind]] for kind in KINDS}
    print(
        f"\nSpark standalone cluster (2 workers, 1 core and 1g each), first read of {args.messages:,} messages "
        f"in a fresh session, {args.partitions} partitions, median of {args.runs} (spread)"
    )
    print(f"{'':<44}{'jsemu':>28}{'nats-server':>28}{'ratio':>8}")
    jm, rm = statistics.median(rates["jsemu"]), statistics.median(rates["real"])
    cells = [f"{jm:,.0f} ({_spread(rates['jsemu'])})", f"{rm:,.0f} ({_spread(rates['real'])})"]
    print(f"{'first read, rows/s':<44}{cells[0]:>28}{cells[1]:>28}{jm / rm:>8.2f}")
    jm, rm = statistics.median(seconds["jsemu"]), statistics.median(seconds["real"])
    cells = [f"{jm:,.0f} ({_spread(seconds['jsemu'])})", f"{rm:,.0f} ({_spread(seconds['real'])})"]
    print(f"{'second read, same session, rows/s':<44}{cells[0]:>28}{cells[1]:>28}{jm / rm:>8.2f}")
    js, rs = statistics.median(sessions["jsemu"]), statistics.median(sessions["real"])
    print(f"{'session + executors start, s (no server)':<44}{js:>28.1f}{rs:>28.1f}")
    for i, side in enumerate(SIDES):
        jc = statistics.median(r["cpu"][i] for r in results["jsemu"])
        rc = statistics.median(r["cpu"][i] for r in results["real"])
        print(f"{'first read, CPU s: ' + side:<44}{jc:>28.1f}{rc:>28.1f}")


if __name__ == "__main__":
    main()
