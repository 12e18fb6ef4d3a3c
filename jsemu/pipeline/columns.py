"""Direct Get batch replies parsed straight into Arrow columns.

Rows crossing Spark's Python data source one tuple at a time cost about 20 µs each; a task
that yields ``pyarrow.RecordBatch``es pays per batch instead. The frames of a batch reply are
cut with one regular expression match each (the ``HMSG`` line and the header block with the
server's six Direct Get lines), the columns collect bytes, and Arrow converts subjects,
timestamps and payloads in bulk. A frame the expression does not take (a status, a stored
header block with a status line, a frame cut by the end of a read) goes the general way,
through ``NatsClient.next_frame``.

Most of a read is frames of one shape (no stored headers, a payload without CRLF), and a
window of received bytes full of them is cut without a Python step per frame
(``_cut_plain_run``): Arrow splits the window on CRLF, every tenth line is one column (the ``HMSG`` line, ``NATS/1.0``, the six Direct Get lines, the empty line, the
payload), and Arrow checks and converts the columns in bulk. A frame is taken only if its
sizes agree with its lines exactly (the header lines add up to its header length, the payload
line is its payload length), so a payload or stored header that contains CRLF, a status, or
any other reply ends the run, and the expression above takes over from there. This halves
the reader's CPU per row (about 1.8 µs to 0.9 µs, the largest Python cost of a first read in
Spark after the workers' start-up; ``python -m benchmarks.pipeline_first``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

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


def _strings(values: list[bytes] | pa.Array) -> pa.Array:
    """UTF-8 bytes as a string column; invalid bytes become U+FFFD, as ``direct_batch`` decodes."""
    raw = values if isinstance(values, pa.Array) else pa.array(values, pa.binary())
    try:
        return raw.cast(pa.string())
    except pa.ArrowInvalid:
        return pa.array([v.decode("utf-8", "replace") for v in raw.to_pylist()], pa.string())


def _record_batch(
    streams: pa.Array, seqs: pa.Array, subjects: pa.Array, stamps: pa.Array, headers: pa.Array, data: pa.Array
) -> pa.RecordBatch:
    """The columns (``stamps`` as nanosecond timestamps) as a RecordBatch of ``ARROW_SCHEMA``."""
    return pa.RecordBatch.from_arrays(
        [
            _strings(streams),
            seqs,
            _strings(subjects),
            stamps.cast(pa.timestamp("us", tz="UTC"), safe=False),  # truncated, as Spark keeps µs
            stamps.cast(pa.int64()),
            headers,
            data,
        ],
        schema=ARROW_SCHEMA,
    )


class Columns:
    """The columns of the messages read so far (cleared by ``batch``)."""

    __slots__ = (
        "data",
        "hdr_keys",
        "hdr_offsets",
        "hdr_values",
        "part_rows",
        "parts",
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
        #: Messages already in Arrow (runs ``_cut_plain_run`` took), in order, before those above.
        self.parts: list[pa.RecordBatch] = []
        self.part_rows = 0

    def __len__(self) -> int:
        return self.part_rows + len(self.seqs)

    def add_part(self, part: pa.RecordBatch) -> None:
        """Messages converted in bulk, after those collected so far."""
        if self.seqs:
            collected = len(self.seqs)
            self.parts.append(self._lists_batch())
            self.part_rows += collected
        self.parts.append(part)
        self.part_rows += part.num_rows

    def keep_through(self, last: int) -> None:
        """Drop the messages past sequence ``last`` at the end (a filtered batch may run past a
        range; sequences only grow within a read)."""
        if not self.parts:
            keep = len(self.seqs)
            while keep and self.seqs[keep - 1] > last:
                keep -= 1
            self.truncate(keep)
            return
        whole = self.batch()
        keep = int(pc.sum(pc.less_equal(whole.column("seq"), last)).as_py() or 0)
        self.add_part(whole.slice(0, keep))

    def add_headers(self, lines: bytes) -> None:
        """The stored header lines of one message (``K: V\\r\\n`` each), order and duplicates kept."""
        if lines:
            for key, value in split_headers(b"NATS/1.0\r\n" + lines)[1]:
                self.hdr_keys.append(key)
                self.hdr_values.append(value)
        self.hdr_offsets.append(len(self.hdr_keys))

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` messages (of those collected as lists: no ``parts``)."""
        assert not self.parts, "truncate: use keep_through once runs are in Arrow"
        del self.streams[n:], self.subjects[n:], self.seqs[n:], self.stamps[n:], self.times_ns[n:], self.data[n:]
        del self.hdr_offsets[n + 1 :]
        del self.hdr_keys[self.hdr_offsets[-1] :], self.hdr_values[self.hdr_offsets[-1] :]

    def batch(self) -> pa.RecordBatch:
        """The messages as a RecordBatch of ``ARROW_SCHEMA``; the columns start empty again."""
        if not self.parts:
            return self._lists_batch()
        parts = self.parts
        if self.seqs:
            parts.append(self._lists_batch())
        self.parts, self.part_rows = [], 0
        if len(parts) == 1:
            return parts[0]
        return pa.Table.from_batches(parts).combine_chunks().to_batches()[0]

    def _lists_batch(self) -> pa.RecordBatch:
        """The messages collected as lists, as a RecordBatch; the lists start empty again."""
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
        out = _record_batch(
            pa.array(self.streams, pa.binary()),
            pa.array(self.seqs, pa.int64()),
            pa.array(self.subjects, pa.binary()),
            stamps,
            headers,
            pa.array(self.data, pa.binary()),
        )
        parts, part_rows = self.parts, self.part_rows
        self.__init__()  # type: ignore[misc]
        self.parts, self.part_rows = parts, part_rows
        return out


#: Below this many bytes left in a window, frames are cut one by one (the bulk cut costs about
#: 60 Arrow calls whatever it cuts).
_BULK_MIN_BYTES = 16_384
#: The bytes a bulk cut splits: the first, and at most. A cut splits twice what the one
#: before took, so a run broken every few frames (a payload with CRLF) splits little in vain.
_BULK_FIRST_BYTES = 262_144
_BULK_MAX_BYTES = 1 << 20
_PLAIN_START = b"NATS/1.0\r\nNats-Stream: "
#: The Direct Get lines of a frame without stored headers, after ``NATS/1.0``: line 2 to 7.
_DG_PREFIXES = [k + b": " for k in DG_LINES]
_SIZES = rb"^(?P<hlen>\d{1,9}) (?P<total>\d{1,9})$"


def _first_false(mask: pa.Array) -> int:
    """The index of the first false in ``mask``, or its length."""
    found = int(pc.index(mask, False).as_py())
    return len(mask) if found < 0 else found


def _plain_ahead(buf: bytes, pos: int) -> bool:
    """Whether the frame at ``pos`` starts like a plain one (no stored headers): the bulk cut's
    cheap probe, so a stream whose messages all have headers never splits a window in vain."""
    nl = buf.find(b"\r\n", pos)
    return nl >= 0 and buf.startswith(_PLAIN_START, nl + 2)


def _cut_plain_run(buf: bytes, pos: int, stop: int, head: bytes, cols: Columns) -> tuple[int, int, int]:
    """Take the frames of ``buf[pos:stop]`` shaped ``HMSG <head><hlen> <total>``, ``NATS/1.0``, the
    six Direct Get lines, an empty line and a payload without CRLF, up to the first frame that
    is not, or is not whole; add them to ``cols``. Returns (position after them, how many,
    last sequence)."""
    # ``buf[pos:stop]`` as a one-value Arrow array without a copy, split on CRLF in Arrow.
    window = pa.Array.from_buffers(
        pa.binary(), 1, [None, pa.array([pos, stop], pa.int32()).buffers()[1], pa.py_buffer(buf)]
    )
    lines = pc.split_pattern(window, b"\r\n").flatten()
    n = (len(lines) - 1) // 10  # a whole frame's payload is followed by CRLF, so by one more element
    if n == 0:
        return pos, 0, 0
    frames = pa.FixedSizeListArray.from_arrays(lines.slice(0, n * 10), 10)
    col = [pc.list_element(frames, k) for k in range(10)]
    # Checks that cannot fail on any bytes: the shape of every line.
    sizes = pc.extract_regex(pc.binary_slice(col[0], len(head), 1 << 30), _SIZES)
    seq_text = pc.binary_slice(col[4], len(_DG_PREFIXES[2]), 1 << 30)
    ok = pc.and_(pc.starts_with(col[0], head), sizes.is_valid())
    ok = pc.and_(ok, pc.equal(col[1], b"NATS/1.0"))
    for k, prefix in enumerate(_DG_PREFIXES):
        ok = pc.and_(ok, pc.starts_with(col[k + 2], prefix))
    ok = pc.and_(ok, pc.match_substring_regex(seq_text, rb"^\d{1,18}$"))
    ok = pc.and_(ok, pc.equal(pc.binary_length(col[8]), 0))
    n = _first_false(ok)
    if n == 0:
        return pos, 0, 0
    col = [c.slice(0, n) for c in col]
    sizes = sizes.slice(0, n)
    # The sizes agree with the lines: the header block is lines 1 to 8 (each with its CRLF),
    # the payload is line 9.
    hlen = sizes.field(0).cast(pa.string()).cast(pa.int64())
    total = sizes.field(1).cast(pa.string()).cast(pa.int64())
    lens = [pc.binary_length(c).cast(pa.int64()) for c in col]
    header = lens[1]
    for k in range(2, 9):
        header = pc.add(header, lens[k])
    ok = pc.and_(pc.equal(pc.add(header, 16), hlen), pc.equal(pc.add(hlen, lens[9]), total))
    n = _first_false(ok)
    if n == 0:
        return pos, 0, 0
    col = [c.slice(0, n) for c in col]
    seqs = seq_text.slice(0, n).cast(pa.string()).cast(pa.int64())
    stamps = pc.binary_slice(col[5], len(_DG_PREFIXES[3]), 1 << 30)
    cols.add_part(
        _record_batch(
            pc.binary_slice(col[2], len(_DG_PREFIXES[0]), 1 << 30),
            seqs,
            pc.binary_slice(col[3], len(_DG_PREFIXES[1]), 1 << 30),
            stamps.cast(pa.string()).cast(pa.timestamp("ns", tz="UTC")),
            pa.ListArray.from_arrays(
                pa.array([0] * (n + 1), pa.int32()), pa.array([], ARROW_SCHEMA.field("headers").type.value_type)
            ),
            col[9],
        )
    )
    # Each frame: its HMSG line and CRLF, the header block and payload (``total``), CRLF.
    taken = int(pc.sum(lens[0].slice(0, n)).as_py()) + int(pc.sum(total.slice(0, n)).as_py()) + 4 * n
    return pos + taken, n, int(seqs[n - 1].as_py())


def read_batch(nc: NatsClient, stream: str, request: dict[str, Any], cols: Columns) -> tuple[int, int]:
    """Send one Direct Get batch request and add its messages to ``cols``; returns how many
    came and the last sequence (0 if none). 204 and 404 end it, as in ``direct_batch``."""
    inbox = nc.send_request(f"$JS.API.DIRECT.GET.{stream}", request)
    got = last = 0
    match = _FRAME.match
    streams, subjects, seqs, stamps, data = cols.streams, cols.subjects, cols.seqs, cols.stamps, cols.data
    hdr_offsets, add_headers = cols.hdr_offsets, cols.add_headers
    inbox_len = len(inbox)
    head = b"HMSG " + inbox + b" 1 "  # NatsClient subscribes its inboxes as sid 1
    chunk = _BULK_FIRST_BYTES
    while True:
        buf, pos = nc.reader.window()
        end = len(buf)
        bulk = True  # until a cut takes nothing in this window
        while True:
            if bulk and end - pos >= _BULK_MIN_BYTES and _plain_ahead(buf, pos):
                start = pos
                pos, taken, taken_last = _cut_plain_run(buf, pos, min(end, pos + chunk), head, cols)
                chunk = min(_BULK_MAX_BYTES, max(_BULK_FIRST_BYTES, 2 * (pos - start)))
                if taken:
                    got += taken
                    last = taken_last
                    # ``add_part`` moved the lists' messages into Arrow and started new lists.
                    streams, subjects, seqs, stamps = cols.streams, cols.subjects, cols.seqs, cols.stamps
                    data, hdr_offsets = cols.data, cols.hdr_offsets
                else:
                    bulk = False
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
