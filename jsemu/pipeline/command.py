"""``jsemu pipeline export | view | seed``: stream data through Spark from the command line.

    jsemu pipeline export --url nats://127.0.0.1:4222 --stream KV_cfg --out cfg.parquet
    jsemu pipeline view --in cfg.parquet --filter '$KV.cfg.>' --up-to-seq 1000
    jsemu pipeline seed --in cfg.parquet --url nats://127.0.0.1:4222 --msg-id

Spark runs locally (``local[*]``) unless ``--master`` names a cluster; its progress bar shows
while a job runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    actions = parser.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="read a stream (Direct Get batches) into Parquet")
    export.add_argument("--url", required=True)
    export.add_argument("--stream", required=True)
    export.add_argument("--out", required=True, help="Parquet path to write")
    export.add_argument("--subject", help="only messages matching this filter")
    export.add_argument("--partitions", type=int, help="read tasks (default one per 100k sequences)")
    view = actions.add_parser("view", help="what every matching subject held (multi_last) from an archive")
    view.add_argument("--in", dest="source", required=True, help="Parquet written by export")
    view.add_argument("--filter", action="append", required=True, help="subject filter (repeatable)")
    view.add_argument("--up-to-seq", type=int)
    view.add_argument("--up-to-time", help="RFC 3339, exclusive")
    view.add_argument("--out", help="write the view to this Parquet path instead of printing it")
    seed = actions.add_parser("seed", help="publish an archive's messages to a server (acked)")
    seed.add_argument("--in", dest="source", required=True, help="Parquet written by export")
    seed.add_argument("--url", required=True)
    seed.add_argument("--msg-id", action="store_true", help="send <stream>:<seq> as Nats-Msg-Id (safe re-runs)")


def _session(master: str) -> tuple[Any, bool]:
    """The Spark session (an active one is reused) and whether this command started it; on a
    local master its Python workers run this interpreter (``register``)."""
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from . import register

    started = SparkSession.getActiveSession() is None
    spark = (
        SparkSession.builder.master(master)
        .appName("jsemu pipeline")
        .config("spark.ui.showConsoleProgress", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark, started


def main(args: argparse.Namespace) -> int:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("jsemu pipeline needs the spark extra: pip install 'jsemu[spark]'", file=sys.stderr)
        return 2
    from .client import JetStreamError

    spark, started = _session(args.master)
    try:
        return _run(spark, args)
    except (JetStreamError, ValueError) as e:
        print(f"jsemu pipeline {args.action}: {e}", file=sys.stderr)
        return 2
    finally:
        if started:
            spark.stop()


def _run(spark: Any, args: argparse.Namespace) -> int:
    from pyspark.sql import functions as F

    from .source import StreamPlan
    from .views import last_per_subject

    if args.action == "export":
        StreamPlan({"url": args.url, "stream": args.stream}).check()  # a mistake is one line, before Spark
        reader = spark.read.format("jetstream").option("url", args.url).option("stream", args.stream)
        if args.subject:
            reader = reader.option("subject", args.subject)
        if args.partitions:
            reader = reader.option("partitions", str(args.partitions))
        df = reader.load()
        df.write.mode("overwrite").parquet(args.out)
        print(f"exported {spark.read.parquet(args.out).count():,} messages of {args.stream} to {args.out}")
    elif args.action == "view":
        view = last_per_subject(
            spark.read.parquet(args.source), args.filter, up_to_seq=args.up_to_seq, up_to_time=args.up_to_time
        )
        if args.out:
            view.write.mode("overwrite").parquet(args.out)
            print(f"wrote {spark.read.parquet(args.out).count():,} subjects to {args.out}")
        else:
            for row in view.select("seq", "subject", "data").collect():
                print(f"{row.seq}\t{row.subject}\t{bytes(row.data)!r}")
    else:
        df = spark.read.parquet(args.source)
        if args.msg_id:
            df = df.withColumn("msg_id", F.concat_ws(":", F.col("stream"), F.col("seq").cast("string")))
        writer = df.select(*(["subject", "headers", "data"] + (["msg_id"] if args.msg_id else [])))
        out = writer.write.format("jetstream").option("url", args.url)
        if args.msg_id:
            out = out.option("msg_id_column", "msg_id")
        out.mode("append").save()
        print(f"published {df.count():,} messages to {args.url}")
    return 0
