"""The ``jetstream`` PySpark data source: read a stream through Direct Get batches (as Arrow
record batches), in one go or as a stream; write rows as acknowledged publishes.

    spark.dataSource.register(JetStreamDataSource)
    df = spark.read.format("jetstream").option("url", "nats://127.0.0.1:4222").option("stream", "KV_b").load()
    df.write.format("jetstream").option("url", ...).mode("append").save()
    q = spark.readStream.format("jetstream").option(...).load().writeStream.option("checkpointLocation", ...)

Read options: ``url``, ``stream`` (required); ``subject`` (a filter with ``next_by_subj``
semantics, wildcards allowed); ``start_seq`` or ``start_time`` (RFC 3339 with a zone);
``batch`` (messages per Direct Get request, default 10000); ``max_bytes``; ``partitions``
(default: one per 100k sequences, at most 64); ``read_path`` (``auto``, the default: Direct
Get when the stream has ``allow_direct``, else an ephemeral pull consumer per task, see
``consumer_read``; ``direct`` or ``consumer`` to insist). The choice is logged on the
``jsemu.pipeline`` logger. A batch read fixes the last sequence when it is planned. The stream
is checked when the read is planned, so a mistake is one line before any task starts.

Streaming reads take the same options plus ``max_per_trigger`` (sequences per micro-batch).
Offsets are ``{"seq": next sequence to read}``, so a query restarted from its checkpoint goes
on exactly where it stopped.

Write options: ``url``; ``msg_id_column`` (a column whose value is sent as ``Nats-Msg-Id`` so a
re-run is deduplicated by the stream); ``window`` (publishes in flight per task, default
1000). Rows need ``subject`` and ``data`` and may have ``headers``; a refused publish fails the
task (and the job) with the server's error. A streaming write without ``msg_id_column`` sends
``<query id>:<batch id>:<partition>:<row>`` as ``Nats-Msg-Id``, so a replayed micro-batch is
deduplicated within the stream's duplicate window.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from ..timefmt import format_ns, parse_rfc3339_ns
from .client import JetStreamError, NatsClient

if TYPE_CHECKING:
    import pyarrow as pa

    from .columns import Columns

# PyArrow and the Arrow reader (``columns``, ``consumer_read``) are imported where a task reads:
# Spark's planner processes import this module to create the source and plan its partitions,
# and need neither (about 0.15 s of CPU each; ``tests/pipeline/test_worker_imports.py``).

__all__ = ["SCHEMA", "JetStreamDataSource"]

SCHEMA = (
    "stream string, seq long, subject string, time timestamp, time_ns long, "
    "headers array<struct<key:string,value:string>>, data binary"
)
_PER_PARTITION = 100_000
_MAX_PARTITIONS = 64
_ROWS_PER_RECORD_BATCH = 20_000
_PATHS = {
    "direct": "through Direct Get batches",
    "consumer": "through an ephemeral pull consumer per task (ack none, by start sequence): allow_direct is off",
}
_log = logging.getLogger("jsemu.pipeline")


@dataclass(frozen=True)
class SeqRange(InputPartition):
    """Sequences ``first..last`` of the stream, read by one task."""

    first: int
    last: int
    path: str = "direct"  # or "consumer": how the task reads (``StreamPlan.info`` chose)


def _option(options: dict[str, str], name: str) -> str:
    value = options.get(name)
    if not value:
        raise ValueError(f"the jetstream data source needs the {name!r} option")
    return value


def _int_option(options: dict[str, str], name: str, default: int) -> int:
    value = options.get(name)
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"the jetstream option {name!r} must be a whole number, not {value!r}") from None
    if number < 0:
        raise ValueError(f"the jetstream option {name!r} must not be negative, not {value!r}")
    return number


class StreamPlan:
    """The options of a read and what it learns from the server when planned."""

    def __init__(self, options: dict[str, str]) -> None:
        self.url = _option(options, "url")
        self.stream = _option(options, "stream")
        self.subject = options.get("subject") or ""
        self.batch = _int_option(options, "batch", 10_000) or 10_000
        self.max_bytes = _int_option(options, "max_bytes", 0)
        self.start_seq = _int_option(options, "start_seq", 0)
        self.start_time = options.get("start_time") or ""
        if self.start_time:
            try:
                parse_rfc3339_ns(self.start_time)
            except ValueError:
                raise ValueError(
                    f"the jetstream option 'start_time' must be RFC 3339 with a zone "
                    f"(e.g. 2026-01-02T03:04:05Z), not {self.start_time!r}"
                ) from None
        self.partition_count = _int_option(options, "partitions", 0)
        self.read_path = options.get("read_path") or "auto"
        if self.read_path not in ("auto", *_PATHS):
            raise ValueError(
                f"the jetstream option 'read_path' must be 'auto', 'direct' or 'consumer', not {self.read_path!r}"
            )
        self.path = ""  # the path ``info`` chose: "direct" or "consumer"

    def connect(self) -> NatsClient:
        """A connection, or one line saying which server could not be reached and why."""
        try:
            return NatsClient(self.url, timeout=10.0)
        except (OSError, ValueError) as e:
            raise JetStreamError(
                f"cannot reach a NATS server at {self.url!r} for stream {self.stream!r}: {e} "
                "(is the server running, and is the 'url' option right?)"
            ) from None

    def info(self, nc: NatsClient) -> dict[str, Any]:
        """STREAM.INFO, checked: the stream exists and answers Direct Get."""
        try:
            info = nc.stream_info(self.stream)
        except JetStreamError as e:
            if '"err_code": 10059' in str(e):
                raise JetStreamError(
                    f"stream {self.stream!r} not found on {self.url}: check the 'stream' option "
                    "(a KV bucket 'b' is the stream 'KV_b', an object store 'o' is 'OBJ_o')"
                ) from None
            raise JetStreamError(f"stream {self.stream!r} on {self.url}: STREAM.INFO failed: {e}") from None
        direct = bool(info.get("config", {}).get("allow_direct"))
        if self.read_path == "direct" and not direct:
            raise JetStreamError(
                f"stream {self.stream!r} on {self.url} does not allow Direct Get (allow_direct is off, as in "
                "KV buckets made with client defaults), and the read asks for read_path 'direct': leave "
                f"read_path at 'auto' to read through a consumer, or turn Direct Get on with "
                f"'nats stream edit {self.stream} --allow-direct'"
            )
        path = self.read_path if self.read_path != "auto" else ("direct" if direct else "consumer")
        if path != self.path:
            self.path = path
            _log.info("stream %r on %s: read %s", self.stream, self.url, _PATHS[path])
        return info

    def check(self) -> dict[str, Any]:
        """``info`` over a connection of its own."""
        with self.connect() as nc:
            return self.info(nc)

    def first_seq(self, nc: NatsClient, state: dict[str, Any]) -> int:
        """The first sequence the read covers: the stream's first, ``start_seq``, ``start_time``."""
        first = max(int(state["first_seq"]), self.start_seq)
        if self.start_time:
            # The first sequence at or after the time, as the server finds it.
            when = format_ns(parse_rfc3339_ns(self.start_time))
            if self.path == "consumer":
                from .consumer_read import first_seq_at

                return max(first, first_seq_at(nc, self.stream, when, int(state["last_seq"]) + 1))
            found = list(nc.direct_batch(self.stream, {"start_time": when, "batch": 1}))
            first = max(first, found[0].seq if found else int(state["last_seq"]) + 1)
        return first

    def split(self, first: int, last: int) -> list[SeqRange]:
        """``first..last`` as the read's partitions (``partitions`` of them, or one per 100k)."""
        span = last - first + 1
        if span <= 0:
            return []
        if not self.path:  # a restarted streaming query may plan before it asks for offsets
            self.check()
        count = self.partition_count or min(_MAX_PARTITIONS, max(1, -(-span // _PER_PARTITION)))
        count = max(1, min(count, span))
        step = -(-span // count)
        return [SeqRange(s, min(last, s + step - 1), self.path) for s in range(first, last + 1, step)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The messages of a ``SeqRange`` as record batches of ``columns.ARROW_SCHEMA``."""
        from .columns import Columns, read_batch

        assert isinstance(partition, SeqRange)
        seq, last = partition.first, partition.last
        if seq > last:
            return
        cols = Columns()
        if partition.path == "consumer":
            yield from self._read_consumer(seq, last, cols)
            return
        with NatsClient(self.url) as nc:
            while seq <= last:
                request: dict[str, Any] = {"seq": seq, "batch": min(self.batch, last - seq + 1)}
                if self.subject:
                    request["next_by_subj"] = self.subject
                if self.max_bytes:
                    request["max_bytes"] = self.max_bytes
                got, last_got = read_batch(nc, self.stream, request, cols)
                if not got:
                    break
                seq = last_got + 1
                if last_got > last:  # a filtered batch may run past the range
                    cols.keep_through(last)
                    break
                if len(cols) >= _ROWS_PER_RECORD_BATCH:
                    yield cols.batch()
        if len(cols):
            yield cols.batch()

    def _read_consumer(self, first: int, last: int, cols: Columns) -> Iterator[pa.RecordBatch]:
        """``first..last`` through an ephemeral pull consumer (``consumer_read``)."""
        from .consumer_read import ConsumerRange

        with NatsClient(self.url) as nc, ConsumerRange(nc, self.stream, first, self.subject) as consumer:
            more = consumer.pending > 0
            while more:
                more = consumer.read_to(cols, last, self.batch, self.max_bytes)
                if len(cols) >= _ROWS_PER_RECORD_BATCH:
                    yield cols.batch()
        if len(cols):
            yield cols.batch()


class JetStreamReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.plan = StreamPlan(options)

    def partitions(self) -> Sequence[InputPartition]:
        plan = self.plan
        with plan.connect() as nc:
            state = plan.info(nc)["state"]
            first, last = plan.first_seq(nc, state), int(state["last_seq"])
        if int(state["messages"]) == 0:
            return [SeqRange(1, 0, plan.path)]
        return plan.split(first, last) or [SeqRange(1, 0, plan.path)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self.plan.read(partition)


class JetStreamStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """A streaming read: offsets are ``{"seq": n}``, the next sequence to read."""

    def __init__(self, options: dict[str, str]) -> None:
        self.plan = StreamPlan(options)
        self.max_per_trigger = _int_option(options, "max_per_trigger", 0)
        self.target: int | None = None  # the end of an availableNow run

    def _next_seq(self) -> int:
        with self.plan.connect() as nc:
            return int(self.plan.info(nc)["state"]["last_seq"]) + 1

    def initialOffset(self) -> dict[str, int]:
        plan = self.plan
        with plan.connect() as nc:
            state = plan.info(nc)["state"]
            return {"seq": max(1, plan.first_seq(nc, state))}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_per_trigger) if self.max_per_trigger else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._next_seq()

    def latestOffset(self, start: dict[str, int] | None = None, limit: ReadLimit | None = None) -> dict[str, int]:
        end = self.target if self.target is not None else self._next_seq()
        if start is not None:
            end = max(end, int(start["seq"]))
            if isinstance(limit, ReadMaxRows):
                end = min(end, int(start["seq"]) + limit.max_rows)
        return {"seq": end}

    def reportLatestOffset(self) -> dict[str, int]:
        return {"seq": self._next_seq()}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return self.plan.split(int(start["seq"]), int(end["seq"]) - 1)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self.plan.read(partition)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to release: the stream keeps its messages by its own limits."""


@dataclass
class Written(WriterCommitMessage):
    count: int
    last_seq: int


def _publishes(
    batches: Iterator[pa.RecordBatch], has_headers: bool, msg_id_column: str, msg_ids: Iterator[str] | None
) -> Iterator[tuple[str, list[tuple[str, str]] | None, bytes]]:
    """``(subject, headers, data)`` of the rows of ``batches``; ``Nats-Msg-Id`` from the
    ``msg_id_column`` or else from ``msg_ids`` replaces any such header the row has."""
    for rb in batches:
        subjects = rb.column("subject").to_pylist()
        datas = rb.column("data").to_pylist()
        headers = rb.column("headers").to_pylist() if has_headers else [None] * len(subjects)
        ids = rb.column(msg_id_column).to_pylist() if msg_id_column else [None] * len(subjects)
        for subject, row_headers, data, msg_id in zip(subjects, headers, datas, ids):
            pairs = [(h["key"], h["value"]) for h in row_headers] if row_headers else []
            if msg_id_column or msg_ids is not None:
                pairs = [(k, v) for k, v in pairs if k.lower() != "nats-msg-id"]
                pairs.append(("Nats-Msg-Id", str(msg_id) if msg_id_column else next(msg_ids)))  # type: ignore[arg-type]
            yield subject, pairs or None, bytes(data) if data is not None else b""


class _WriteOptions:
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.url = _option(options, "url")
        self.msg_id_column = options.get("msg_id_column") or ""
        self.window = _int_option(options, "window", 1000) or 1000
        names = set(schema.fieldNames())
        for needed in ("subject", "data"):
            if needed not in names:
                raise ValueError(f"rows written to jetstream need a {needed!r} column")
        if self.msg_id_column and self.msg_id_column not in names:
            raise ValueError(f"the msg_id_column {self.msg_id_column!r} is not a column of the rows written")
        self.has_headers = "headers" in names

    def publish(self, batches: Iterator[pa.RecordBatch], msg_ids: Iterator[str] | None = None) -> Written:
        messages = _publishes(batches, self.has_headers, self.msg_id_column, msg_ids)
        with NatsClient(self.url) as nc:
            acks = nc.publish_acked(messages, self.window)
        return Written(len(acks), max((int(a.get("seq", 0)) for a in acks), default=0))


class JetStreamWriter(DataSourceArrowWriter):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.options = _WriteOptions(options, schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Written:
        return self.options.publish(iterator)


def _streaming_msg_ids() -> Iterator[str]:
    """``<query id>:<batch id>:<partition>:<row>``: the same for a replayed micro-batch (Spark
    hands a task the query and batch ids as local properties)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        raise JetStreamError("a streaming write to jetstream runs in a Spark task")
    query = ctx.getLocalProperty("sql.streaming.queryId") or ""
    batch = ctx.getLocalProperty("streaming.sql.batchId") or ""
    row = 0
    while True:
        yield f"{query}:{batch}:{ctx.partitionId()}:{row}"
        row += 1


class JetStreamStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.options = _WriteOptions(options, schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Written:
        ids = None if self.options.msg_id_column else _streaming_msg_ids()
        return self.options.publish(iterator, ids)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Every publish was acknowledged by the stream when its task ended."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Acknowledged publishes stay; a replay of the batch is deduplicated by its ids."""


class JetStreamDataSource(DataSource):
    """``spark.read.format("jetstream")`` / ``df.write.format("jetstream")`` and their streaming forms."""

    @classmethod
    def name(cls) -> str:
        return "jetstream"

    def schema(self) -> str:
        return SCHEMA

    def reader(self, schema: StructType) -> JetStreamReader:
        return JetStreamReader(dict(self.options))

    def streamReader(self, schema: StructType) -> JetStreamStreamReader:
        return JetStreamStreamReader(dict(self.options))

    def writer(self, schema: StructType, overwrite: bool) -> JetStreamWriter:
        if overwrite:
            raise JetStreamError("the jetstream data source only appends (a stream keeps its history)")
        return JetStreamWriter(dict(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> JetStreamStreamWriter:
        if overwrite:
            raise JetStreamError("the jetstream data source only appends (a stream keeps its history)")
        return JetStreamStreamWriter(dict(self.options), schema)
