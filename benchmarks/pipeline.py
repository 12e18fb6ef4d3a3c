"""Spark over a stream: read N messages through the ``jetstream`` data source, then compute a
point-in-time view (``last_per_subject`` at half the stream), rows per second for each.

    python -m benchmarks.pipeline [--messages 1000000] [--subjects 10000] [--partitions 4] [--real]

The server runs as its own process (``jsemu serve``, or ``nats-server -js`` with ``--real``)
and is filled with acknowledged publishes first; Spark runs locally on all cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from benchmarks.client import Conn
from benchmarks.suite import RealServer, create, fill_acked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--real", action="store_true", help="read from nats-server instead of jsemu")
    args = parser.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
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
        spark = (
            SparkSession.builder.master("local[*]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", str(args.partitions))
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        url = f"nats://127.0.0.1:{server.port}"
        df = spark.read.format("jetstream").option("url", url).option("stream", "P")
        df = df.option("partitions", str(args.partitions)).load().cache()
        t0 = time.perf_counter()
        read = df.count()
        read_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        view = last_per_subject(df, ["p.>"], up_to_seq=args.messages // 2).count()
        view_s = time.perf_counter() - t0
        spark.stop()
    finally:
        server.stop()
    name = "nats-server" if args.real else "jsemu"
    print(f"{name}: {args.messages:,} messages on {args.subjects:,} subjects, {args.partitions} read partitions")
    print(f"{'step':<40}{'rows':>12}{'seconds':>10}{'rows/s':>12}")
    print(
        f"{'fill (acked publishes, 10k at a time)':<40}{args.messages:>12,}{fill:>10.1f}{args.messages / fill:>12,.0f}"
    )
    print(f"{'read into Spark (Direct Get batches)':<40}{read:>12,}{read_s:>10.1f}{read / read_s:>12,.0f}")
    print(f"{'last_per_subject at seq N/2':<40}{view:>12,}{view_s:>10.1f}{read / view_s:>12,.0f}")


if __name__ == "__main__":
    main()
