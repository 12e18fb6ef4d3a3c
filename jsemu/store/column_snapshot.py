"""A stream store's messages as a few large columns: the body of a compacted write-ahead log.

Why: a restart used to decode one ``Append`` record per kept message and store them one
by one; with a million messages that is seconds of Python. A compacted log
(:func:`~.compaction.state_records`) now carries the live messages as :class:`Columns`
records instead, each one a chunk of up to :data:`CHUNK_MSGS` messages whose fields are
whole arrays, read back with ``array.frombytes`` and a few slices, and stored by
:meth:`~.stream_store.StreamStore.load_columns` without a record per message. The
write-ahead log frames a ``Columns`` record like any other (``<length u32><crc32
u32><payload>``, :mod:`.wal`), so the checksum, the damage handling and the atomic rewrite
are the log's; publishes after the compaction follow it as ordinary records.

Format of the payload (little-endian; ``n`` messages, ``k`` distinct subjects, the
subjects numbered in order of first appearance)::

    u8  code (10)
    u8  flags              bit 0: header columns present; bit 1: grouped sequences present
    u8  index width        1, 2 or 4 bytes per subject number
    u32 n
    u32 k
    u64 seqs[n]            ascending live sequences
    i64 tss[n]             timestamps (ns)
    u32 subject_len[k]     then the k subjects, concatenated
    uW  index[n]           each message's subject number
    u32 counts[k]          messages per subject
    u64 grouped[n]         (bit 1) the sequences ordered by subject number, then sequence;
                           absent when that order is ``seqs`` itself (one subject, one
                           message per subject, or each subject's messages in one stretch)
    u32 hdr_len[n]         (bit 0) then the header blocks, concatenated
    u32 data_len[n]        then the bodies, concatenated

The per-subject indexes come straight from ``counts`` and the grouped sequences (one array
slice per subject). A payload that does not add up (lengths, subject numbers, counts,
sequence order) does not decode (``ValueError``): the log treats it as damage, as it does a
torn record. Applying ``Columns`` is the same as applying, message by message, a skip of
the sequences before each one and its ``Append`` (:meth:`Columns.appends`), which is what a
store that can not take the chunk in bulk gets.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
from operator import le, lt
from typing import TYPE_CHECKING, Any, ClassVar

from .records import Append, Record, SkipMany

if TYPE_CHECKING:
    from .interface import Body, Store

__all__ = ["CHUNK_BYTES", "CHUNK_MSGS", "COLUMNS_CODE", "Columns", "decode_columns"]

COLUMNS_CODE = 10
#: Messages per ``Columns`` record, and the bytes they may carry, so a record stays far
#: below the log's 4 GiB frame limit and a compaction never copies the whole store at once.
CHUNK_MSGS = 1 << 20
CHUNK_BYTES = 256 << 20

_HEAD = struct.Struct("<BBBII")
_HAS_HDRS = 1
_HAS_GROUPED = 2
_WIDTH = {1: "B", 2: "H", 4: "I"}
_BIG = sys.byteorder == "big"
# Equal-length bodies are cut by one compiled struct, this many at a time.
_CUT = 4096


def _arr(code: str, data: bytes | memoryview, pos: int, n: int) -> tuple[array[int], int]:
    out = array(code)
    end = pos + n * out.itemsize
    if end > len(data):
        raise ValueError("truncated Columns record")
    out.frombytes(data[pos:end])
    if _BIG:
        out.byteswap()
    return out, end


def _ascending(seqs: array[int], thorough: bool) -> bool:
    """Ascending from 1 on, as far as a cheap look tells: the ends always; every pair where
    the chunk has gaps (their slots are placed one by one) or ``thorough``."""
    first, last, n = seqs[0], seqs[-1], len(seqs)
    if not first or last - first < n - 1:
        return False
    if last - first == n - 1 and not thorough:
        return True  # no gaps: a single stretch whose ends agree with its length
    return all(map(lt, seqs, islice(seqs, 1, None)))


def _past(index: array[int], k: int) -> bool:
    """Whether a subject number is ``k`` or more (one byte wide: by deleting the good ones, in C)."""
    if index.itemsize == 1:
        return bool(index.tobytes().translate(None, bytes(range(k))))
    return max(index) >= k


def _raw(values: array[int]) -> bytes:
    if _BIG:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _cut(data: bytes, pos: int, lens: array[int]) -> tuple[list[bytes], int]:
    """``len(lens)`` bytes objects cut from ``data`` at ``pos`` on, and where they end."""
    n = len(lens)
    if not n:
        return [], pos
    size = lens[0]
    same = lens.count(size) == n
    end = pos + (size * n if same else sum(lens))
    if end > len(data):
        raise ValueError("truncated Columns record")
    if same:  # all the same length (the usual stream): cut by struct, in C
        if not size:
            return [b""] * n, end
        out: list[bytes] = []
        full = n - n % _CUT
        if full:
            for run in struct.Struct(f"{size}s" * _CUT).iter_unpack(memoryview(data)[pos : pos + full * size]):
                out.extend(run)
        if full < n:
            out.extend(struct.unpack_from(f"{size}s" * (n - full), data, pos + full * size))
        return out, end
    offsets = list(accumulate(lens, initial=pos))
    return [data[a:b] for a, b in zip(offsets, islice(offsets, 1, None))], end


@dataclass(frozen=True, slots=True, eq=True)
class Columns(Record):
    """Live messages of a store, ascending by sequence, as columns (see the module docstring).

    ``table`` holds each subject once; ``index`` numbers each message's subject in it;
    ``counts`` and ``grouped`` (None when it would equal ``seqs``) give each subject's
    sequences; ``hdrs`` is None when no message has headers."""

    CODE: ClassVar[int] = COLUMNS_CODE
    METHOD: ClassVar[str] = "load_columns"
    seqs: array[int]
    table: list[bytes]
    index: array[int]
    counts: array[int]
    grouped: array[int] | None
    hdrs: list[bytes] | None
    datas: list[bytes]
    tss: array[int]
    #: ``len`` of each header block (None with ``hdrs``) and of each body, as encoded.
    hdr_lens: array[int] | None
    data_lens: array[int]

    @property
    def count(self) -> int:
        return len(self.seqs)

    def apply(self, store: Store) -> Any:
        """True when the store took the whole chunk; False (nothing done) otherwise."""
        return store.load_columns(self)

    def time_ns(self) -> int:
        return max(self.tss, default=0)

    def subjects(self) -> list[bytes]:
        """Each message's subject (the table's shared objects)."""
        if len(self.table) == 1:
            return self.table * len(self.seqs)
        return list(map(self.table.__getitem__, self.index))

    def bodies(self) -> list[Body]:
        """Each message's stored body: its data, or ``(hdr, data)`` when it has headers."""
        hdrs = self.hdrs
        if hdrs is None:
            return self.datas  # type: ignore[return-value]  # a list of bytes is a list of bodies
        return [(h, d) if h else d for h, d in zip(hdrs, self.datas)]

    def appends(self, last: int) -> list[Record]:
        """The same, one record at a time, for a store whose last sequence is ``last``."""
        out: list[Record] = []
        hdrs = self.hdrs if self.hdrs is not None else [b""] * len(self.seqs)
        for seq, subject, hdr, data, ts in zip(self.seqs, self.subjects(), hdrs, self.datas, self.tss):
            if seq > last + 1:
                out.append(SkipMany(0, seq - last - 1))
            out.append(Append(subject, hdr, data, ts))
            last = seq
        return out

    @classmethod
    def of_live(
        cls, seqs: Sequence[int], subjects: Sequence[bytes], bodies: Sequence[Body], tss: Sequence[int]
    ) -> Columns:
        """The chunk of these live messages (``StoreReader.live_columns``' columns)."""
        table = list(dict.fromkeys(subjects))
        numbers = dict(zip(table, range(len(table))))
        k = len(table)
        index = array("B" if k <= 0xFF else "H" if k <= 0xFFFF else "I", map(numbers.__getitem__, subjects))
        tally = Counter(index)
        counts = array("I", map(tally.__getitem__, range(k)))
        seq_col = array("Q", seqs)
        grouped = None
        if k > 1 and not all(map(le, index, islice(index, 1, None))):
            order = sorted(range(len(index)), key=index.__getitem__)  # stable: by sequence within a subject
            grouped = array("Q", map(seq_col.__getitem__, order))
        if tuple not in set(map(type, bodies)):
            hdrs, datas = None, list(bodies)
        else:
            hdrs = [b[0] if type(b) is tuple else b"" for b in bodies]
            datas = [b[1] if type(b) is tuple else b for b in bodies]
            if not any(hdrs):
                hdrs = None
        hdr_lens = array("I", map(len, hdrs)) if hdrs is not None else None
        data_lens = array("I", map(len, datas))
        return cls(seq_col, table, index, counts, grouped, hdrs, datas, array("q", tss), hdr_lens, data_lens)  # type: ignore[arg-type]

    def encode(self) -> bytes:
        n, k = len(self.seqs), len(self.table)
        flags = (_HAS_HDRS if self.hdrs is not None else 0) | (_HAS_GROUPED if self.grouped is not None else 0)
        parts = [
            _HEAD.pack(COLUMNS_CODE, flags, self.index.itemsize, n, k),
            _raw(self.seqs),
            _raw(self.tss),
            _raw(array("I", map(len, self.table))),
            *self.table,
            _raw(self.index),
            _raw(self.counts),
        ]
        if self.grouped is not None:
            parts.append(_raw(self.grouped))
        if self.hdrs is not None and self.hdr_lens is not None:
            parts.append(_raw(self.hdr_lens))
            parts.extend(self.hdrs)
        parts.append(_raw(self.data_lens))
        parts.extend(self.datas)
        return b"".join(parts)


def decode_columns(data: bytes, start: int = 0, end: int | None = None) -> Columns:
    """The ``Columns`` record of ``data[start:end]`` (without copying it first);
    ``ValueError`` when it does not add up."""
    if end is None:
        end = len(data)
    view = memoryview(data)[:end]
    try:
        code, flags, width, n, k = _HEAD.unpack_from(view, start)
    except struct.error:
        raise ValueError("truncated Columns record") from None
    if code != COLUMNS_CODE or width not in _WIDTH or flags & ~(_HAS_HDRS | _HAS_GROUPED) or not n or not k:
        raise ValueError("bad Columns record header")
    if k > n:
        raise ValueError("bad Columns record: more subjects than messages")
    pos = start + _HEAD.size
    seqs, pos = _arr("Q", view, pos, n)
    tss, pos = _arr("q", view, pos, n)
    subject_lens, pos = _arr("I", view, pos, k)
    table, pos = _cut(data, pos, subject_lens)
    index, pos = _arr(_WIDTH[width], view, pos, n)
    counts, pos = _arr("I", view, pos, k)
    grouped = None
    if flags & _HAS_GROUPED:
        grouped, pos = _arr("Q", view, pos, n)
    hdrs = hdr_lens = None
    if flags & _HAS_HDRS:
        hdr_lens, pos = _arr("I", view, pos, n)
        hdrs, pos = _cut(data, pos, hdr_lens)
    data_lens, pos = _arr("I", view, pos, n)
    datas, pos = _cut(data, pos, data_lens)
    if pos != end:
        raise ValueError(f"bad Columns record: {end - pos} bytes left over")
    # Cheap checks that the columns agree (the checksum already vouches for the bytes).
    if _past(index, k) or sum(counts) != n or 0 in counts or b"" in table:
        raise ValueError("bad Columns record: subjects do not add up")
    if not _ascending(seqs, grouped is not None or hdrs is not None):
        raise ValueError("bad Columns record: sequences out of order")
    return Columns(seqs, table, index, counts, grouped, hdrs, datas, tss, hdr_lens, data_lens)
