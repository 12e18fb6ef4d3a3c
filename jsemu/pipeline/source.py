"""The ``jetstream`` PySpark data source: read a stream through Direct Get batches, write rows
as acknowledged publishes.

    spark.dataSource.register(JetStreamDataSource)
    df = spark.read.format("jetstream").option("url", "nats://127.0.0.1:4222").option("stream", "KV_b").load()
    df.write.format("jetstream").option("url", ...).mode("append").save()

Read options: ``url``, ``stream`` (required); ``subject`` (a filter with ``next_by_subj``
semantics, wildcards allowed); ``start_seq`` or ``start_time`` (RFC 3339); ``batch`` (messages
per Direct Get request, default 1000); ``max_bytes``; ``partitions`` (default: one per 100k
sequences, at most 64). The last sequence is fixed when the read is planned, so a read is
consistent: messages stored later are not part of it. Each partition is a sequence range read
by one task over its own connection (with replicas or mirrors, any member of the Direct Get
group may answer).

Write options: ``url``; ``msg_id_column`` (a column whose value is sent as ``Nats-Msg-Id`` so a
re-run is deduplicated by the stream); ``window`` (publishes in flight per task, default
1000). Rows need ``subject`` and ``data`` and may have ``headers``; a refused publish fails the
task (and the job) with the server's error.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage
from pyspark.sql.types import StructType

from ..timefmt import format_ns, parse_rfc3339_ns
from .client import DirectMessage, JetStreamError, NatsClient

__all__ = ["SCHEMA", "JetStreamDataSource"]

SCHEMA = (
    "stream string, seq long, subject string, time timestamp, time_ns long, "
    "headers array<struct<key:string,value:string>>, data binary"
)
_PER_PARTITION = 100_000
_MAX_PARTITIONS = 64


@dataclass(frozen=True)
class SeqRange(InputPartition):
    """Sequences ``first..last`` of the stream, read by one task."""

    first: int
    last: int


def _option(options: dict[str, str], name: str) -> str:
    value = options.get(name)
    if not value:
        raise ValueError(f"the jetstream data source needs the {name!r} option")
    return value


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def row_of(msg: DirectMessage) -> tuple[Any, ...]:
    """A message as a row of ``SCHEMA`` (``time`` exact to the microsecond, ``time_ns`` whole)."""
    when = _EPOCH + timedelta(microseconds=msg.time_ns // 1000)
    return (msg.stream, msg.seq, msg.subject, when, msg.time_ns, msg.headers, msg.data)


class JetStreamReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.url = _option(options, "url")
        self.stream = _option(options, "stream")
        self.subject = options.get("subject") or ""
        self.batch = int(options.get("batch") or 1000)
        self.max_bytes = int(options.get("max_bytes") or 0)
        self.start_seq = int(options.get("start_seq") or 0)
        self.start_time = options.get("start_time") or ""
        self.partition_count = int(options.get("partitions") or 0)

    def _first_seq(self, nc: NatsClient, state: dict[str, Any]) -> int:
        first = max(int(state["first_seq"]), self.start_seq)
        if self.start_time:
            # The first sequence at or after the time, as the server finds it.
            when = format_ns(parse_rfc3339_ns(self.start_time))
            found = list(nc.direct_batch(self.stream, {"start_time": when, "batch": 1}))
            first = max(first, found[0].seq if found else int(state["last_seq"]) + 1)
        return first

    def partitions(self) -> Sequence[InputPartition]:
        with NatsClient(self.url) as nc:
            state = nc.stream_info(self.stream)["state"]
            first, last = self._first_seq(nc, state), int(state["last_seq"])
        if first > last or int(state["messages"]) == 0:
            return [SeqRange(1, 0)]
        span = last - first + 1
        count = self.partition_count or min(_MAX_PARTITIONS, max(1, -(-span // _PER_PARTITION)))
        count = max(1, min(count, span))
        step = -(-span // count)
        return [SeqRange(s, min(last, s + step - 1)) for s in range(first, last + 1, step)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, SeqRange)
        seq, last = partition.first, partition.last
        if seq > last:
            return
        with NatsClient(self.url) as nc:
            while seq <= last:
                request: dict[str, Any] = {"seq": seq, "batch": min(self.batch, last - seq + 1)}
                if self.subject:
                    request["next_by_subj"] = self.subject
                if self.max_bytes:
                    request["max_bytes"] = self.max_bytes
                got = 0
                for msg in nc.direct_batch(self.stream, request):
                    if msg.seq > last:
                        return
                    got += 1
                    seq = msg.seq + 1
                    yield row_of(msg)
                if not got:
                    return


@dataclass
class Written(WriterCommitMessage):
    count: int
    last_seq: int


class JetStreamWriter(DataSourceWriter):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.url = _option(options, "url")
        self.msg_id_column = options.get("msg_id_column") or ""
        self.window = int(options.get("window") or 1000)
        names = set(schema.fieldNames())
        for needed in ("subject", "data"):
            if needed not in names:
                raise ValueError(f"rows written to jetstream need a {needed!r} column")
        self.has_headers = "headers" in names

    def _messages(self, rows: Iterator[Any]) -> Iterator[tuple[str, list[tuple[str, str]] | None, bytes]]:
        for row in rows:
            headers = [(h[0], h[1]) for h in row["headers"]] if self.has_headers and row["headers"] else []
            if self.msg_id_column:
                headers = [(k, v) for k, v in headers if k.lower() != "nats-msg-id"]
                headers.append(("Nats-Msg-Id", str(row[self.msg_id_column])))
            data = row["data"]
            yield row["subject"], headers or None, bytes(data) if data is not None else b""

    def write(self, iterator: Iterator[Any]) -> Written:
        with NatsClient(self.url) as nc:
            acks = nc.publish_acked(self._messages(iterator), self.window)
        return Written(len(acks), max((int(a.get("seq", 0)) for a in acks), default=0))


class JetStreamDataSource(DataSource):
    """``spark.read.format("jetstream")`` / ``df.write.format("jetstream")``."""

    @classmethod
    def name(cls) -> str:
        return "jetstream"

    def schema(self) -> str:
        return SCHEMA

    def reader(self, schema: StructType) -> JetStreamReader:
        return JetStreamReader(dict(self.options))

    def writer(self, schema: StructType, overwrite: bool) -> JetStreamWriter:
        if overwrite:
            raise JetStreamError("the jetstream data source only appends (a stream keeps its history)")
        return JetStreamWriter(dict(self.options), schema)
