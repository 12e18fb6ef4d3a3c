"""Direct Get batch replies parsed straight into Arrow columns.

Rows crossing Spark's Python data source one tuple at a time cost about 20 µs each; a task
that yields ``pyarrow.RecordBatch``es pays per batch instead. The frames of a batch reply are
cut with one regular expression match each (the ``HMSG`` line and the header block with the
server's six Direct Get lines), the columns collect bytes, and Arrow converts subjects,
timestamps and payloads in bulk. A frame the expression does not take (a status, a stored
header block with a status line, a frame cut by the end of a read) goes the general way,
through ``NatsClient.next_frame``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .client import DG_LINES, JetStreamError, split_headers

if TYPE_CHECKING:
    from .client import NatsClient

__all__ = ["ARROW_SCHEMA", "Columns", "read_batch"]

#: ``SCHEMA`` as Spark's ``to_arrow_schema(..., timezone="UTC")`` writes it (a test checks).
ARROW_SCHEMA = pa.schema(
    [
        ("stream", pa.string()),
        ("seq", pa.int64()),
        ("subject", pa.string()),
        ("time", pa.timestamp("us", tz="UTC")),
        ("time_ns", pa.int64()),
        ("headers", pa.list_(pa.field("element", pa.struct([("key", pa.string()), ("value", pa.string())])))),
        ("data", pa.binary()),
    ]
)

# One message of a batch reply: group 1 the header length, 2 the total length, 3 the header
# block, 4 the stored header lines, 5 stream, 6 subject, 7 sequence, 8 timestamp.
_FRAME = re.compile(
    rb"HMSG [^ \r\n]+ [^ \r\n]+ (\d+) (\d+)\r\n"
    rb"(NATS/1\.0\r\n((?:[^\r\n]+\r\n)*?)"
    rb"Nats-Stream: ([^\r\n]*)\r\nNats-Subject: ([^\r\n]*)\r\nNats-Sequence: (\d+)\r\n"
    rb"Nats-Time-Stamp: ([^\r\n]*)\r\nNats-Num-Pending: \d+\r\nNats-Last-Sequence: \d+\r\n\r\n)"
)


def _strings(values: list[bytes]) -> pa.Array:
    """UTF-8 bytes as a string column; invalid bytes become U+FFFD, as ``direct_batch`` decodes."""
    raw = pa.array(values, pa.binary())
    try:
        return raw.cast(pa.string())
    except pa.ArrowInvalid:
        return pa.array([v.decode("utf-8", "replace") for v in values], pa.string())


class Columns:
    """The columns of the messages read so far (cleared by ``batch``)."""

    __slots__ = (
        "data",
        "hdr_keys",
        "hdr_offsets",
        "hdr_values",
        "seqs",
        "stamps",
        "streams",
        "subjects",
        "times_ns",
    )

    def __init__(self) -> None:
        self.streams: list[bytes] = []
        self.subjects: list[bytes] = []
        self.seqs: list[int] = []
        self.stamps: list[bytes] = []  # RFC 3339 (Direct Get) ...
        self.times_ns: list[int] = []  # ... or nanoseconds (a consumer's ack subject): one of the two
        self.data: list[bytes] = []
        self.hdr_offsets: list[int] = [0]
        self.hdr_keys: list[bytes] = []
        self.hdr_values: list[bytes] = []

    def __len__(self) -> int:
        return len(self.seqs)

    def add_headers(self, lines: bytes) -> None:
        """The stored header lines of one message (``K: V\\r\\n`` each), order and duplicates kept."""
        if lines:
            for key, value in split_headers(b"NATS/1.0\r\n" + lines)[1]:
                self.hdr_keys.append(key)
                self.hdr_values.append(value)
        self.hdr_offsets.append(len(self.hdr_keys))

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` messages."""
        del self.streams[n:], self.subjects[n:], self.seqs[n:], self.stamps[n:], self.times_ns[n:], self.data[n:]
        del self.hdr_offsets[n + 1 :]
        del self.hdr_keys[self.hdr_offsets[-1] :], self.hdr_values[self.hdr_offsets[-1] :]

    def batch(self) -> pa.RecordBatch:
        """The messages as a RecordBatch of ``ARROW_SCHEMA``; the columns start empty again."""
        if self.times_ns:
            stamps = pa.array(self.times_ns, pa.int64()).cast(pa.timestamp("ns", tz="UTC"))
        else:
            stamps = pa.array(self.stamps, pa.binary()).cast(pa.string()).cast(pa.timestamp("ns", tz="UTC"))
        entries = pa.StructArray.from_arrays(
            [
                _strings(self.hdr_keys),
                _strings(self.hdr_values),
            ],
            fields=list(ARROW_SCHEMA.field("headers").type.value_type),
        )
        headers = pa.ListArray.from_arrays(pa.array(self.hdr_offsets, pa.int32()), entries).cast(
            ARROW_SCHEMA.field("headers").type
        )
        out = pa.RecordBatch.from_arrays(
            [
                _strings(self.streams),
                pa.array(self.seqs, pa.int64()),
                _strings(self.subjects),
                stamps.cast(pa.timestamp("us", tz="UTC"), safe=False),  # truncated, as Spark keeps µs
                stamps.cast(pa.int64()),
                headers,
                pa.array(self.data, pa.binary()),
            ],
            schema=ARROW_SCHEMA,
        )
        self.__init__()  # type: ignore[misc]
        return out


def read_batch(nc: NatsClient, stream: str, request: dict[str, Any], cols: Columns) -> tuple[int, int]:
    """Send one Direct Get batch request and add its messages to ``cols``; returns how many
    came and the last sequence (0 if none). 204 and 404 end it, as in ``direct_batch``."""
    inbox = nc.send_request(f"$JS.API.DIRECT.GET.{stream}", request)
    got = last = 0
    match = _FRAME.match
    streams, subjects, seqs, stamps, data = cols.streams, cols.subjects, cols.seqs, cols.stamps, cols.data
    hdr_offsets, add_headers = cols.hdr_offsets, cols.add_headers
    inbox_len = len(inbox)
    while True:
        buf, pos = nc.reader.window()
        end = len(buf)
        while True:
            m = match(buf, pos)
            if m is None:
                break
            hlen, total, block, lines, stream_name, subject, seq_text, stamp = m.groups()
            block_end = m.end()
            body_end = block_end - len(block) + int(total)
            if body_end + 2 > end or len(block) != int(hlen):
                break
            if buf[pos + 5 : pos + 5 + inbox_len] != inbox or buf[pos + 5 + inbox_len] != 32:
                break  # not this request's: the general way skips it
            streams.append(stream_name)
            subjects.append(subject)
            last = int(seq_text)
            seqs.append(last)
            stamps.append(stamp)
            data.append(buf[block_end:body_end])
            if lines:
                add_headers(lines)
            else:
                hdr_offsets.append(hdr_offsets[-1])
            got += 1
            pos = body_end + 2
        nc.reader.skip_to(pos)
        subj, hlen, msg = nc.next_frame()
        if subj != inbox:
            continue
        if hlen < 0:
            raise JetStreamError("Direct Get reply without headers")
        status, pairs = split_headers(msg[:hlen])
        if status != b"NATS/1.0":
            code = status.split(b" ")[1] if b" " in status else b""
            if code in (b"204", b"404"):
                return got, last
            raise JetStreamError(status.decode("utf-8", "replace"))
        keys = tuple(k for k, _ in pairs[-len(DG_LINES) :])
        if keys != DG_LINES:
            raise JetStreamError(f"unexpected Direct Get header lines {list(keys)!r}")
        dg = dict(pairs[-len(DG_LINES) :])
        streams.append(dg[b"Nats-Stream"])
        subjects.append(dg[b"Nats-Subject"])
        last = int(dg[b"Nats-Sequence"])
        seqs.append(last)
        stamps.append(dg[b"Nats-Time-Stamp"])
        data.append(msg[hlen:])
        for key, value in pairs[: -len(DG_LINES)]:
            cols.hdr_keys.append(key)
            cols.hdr_values.append(value)
        hdr_offsets.append(len(cols.hdr_keys))
        got += 1
