"""An append-only write-ahead log of store mutations, for streams that outlive the process.

The file starts with ``JSEMUWAL`` and a ``u16`` format version (:data:`FORMAT_VERSION`),
then records ``<length u32><crc32 u32><payload>`` where the payload is one encoded
:class:`~.records.Record` (a record-type byte and its fields, :mod:`.records`): the same
records the replication log carries, saved without any Python name, so renaming a store
method or class does not break a saved store. A file with a newer version is refused
rather than misread. Version 3 added the :class:`~.column_snapshot.Columns` record
(code 10) that a compacted log starts with; a version 2 log (no such record) still loads,
and is appended to as it is until its first compaction rewrites it as version 3. Version 4
added the :class:`~.records.LastTime` record (code 11) a compaction writes when the last
messages are deleted; version 2 and 3 logs load and are rewritten as version 4 the same way.
Version 5 logs limits with their time (:class:`~.records.UpdateLimitsAt`, code 12, in place
of ``UpdateLimits``, code 8, which older logs hold and still replay): an older jsemu refuses
the file rather than reading its first record as damage.

A record is written to the OS before the publish is acknowledged, so a killed process
loses nothing it acknowledged. A crash in the middle of a write leaves a short or
mismatching last record; a damaged disk can leave one anywhere. :func:`read_log` stops at
the first record that is torn, fails its CRC or does not decode, keeps every record before
it (as nats-server keeps a block's messages before a bad one), says where in one line
(:attr:`LogContents.damage`), moves the bytes from there on to ``<log>.damaged`` and cuts
the log back, so new records follow whole ones. A file that does not start with the header
is damaged at byte 0: nothing of it is replayed, all of it is set aside.

The log never grows without bound: :meth:`WriteAheadLog.rewrite` replaces it, crash-safely
(a new file, fsynced, renamed over the old one, the directory fsynced), with the records
that rebuild the current state (:mod:`.compaction`).

Like nats-server's default (``sync_interval`` of two minutes), records are not fsynced
one by one: a power cut may lose the latest writes, a crashed process does not.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import BinaryIO

from .column_snapshot import COLUMNS_CODE, Columns, decode_columns
from .records import AppendRun, Record, decode
from .wal_stretch import MIN_STRETCH, append_stretch

__all__ = ["FORMAT_VERSION", "MAGIC", "LogContents", "WriteAheadLog", "log_bytes", "read_log"]

MAGIC = b"JSEMUWAL"
FORMAT_VERSION = 5
#: Versions this jsemu reads: 2 is 3 without ``Columns`` records.
READABLE_VERSIONS = (2, 3, 4, 5)
_FILE_HEADER = struct.Struct("<8sH")
_HEADER = struct.Struct("<II")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_TWO_U32 = struct.Struct("<II")
#: A frame's header and the start of an ``Append`` payload: length, checksum, code, subject length.
_APPEND_FRAME = struct.Struct("<IIBI")
#: Same-shaped ``Append`` frames are decoded this many at a time at first (:mod:`.wal_stretch`),
#: four times as many after each full stretch, up to _STRETCH_MAX: a log of mixed shapes pays
#: little for the attempts, a uniform one is read in a few large stretches.
_STRETCH_FIRST = 256
_STRETCH_MAX = 65536


def _records(data: bytes, start: int, runs: bool = False) -> tuple[list[Record], int, str, int]:
    """The whole records from ``start`` on, the end of the last one, and what is wrong
    with the bytes after it ("" when there are none), and where the last ``Columns``
    record ends (0 without one). With ``runs``, consecutive
    ``Append`` records come back as one ``AppendRun`` each, decoded straight into its
    columns (a restart reads one per stored message: no object per message)."""
    out: list[Record] = []
    good = start
    size = len(data)
    view = memoryview(data)  # the checksum reads the bytes in place
    why = ""
    header, u32, i64, crc32, read = _HEADER.unpack_from, _U32.unpack_from, _I64.unpack_from, zlib.crc32, decode
    append_head, two = _APPEND_FRAME.unpack_from, _TWO_U32.unpack_from
    subjects: list[bytes] = []
    hdrs: list[bytes] = []
    datas: list[bytes] = []
    tss: list[int] = []
    columns_end = 0
    try_at = start  # where a stretch of same-shaped appends is next tried
    window = _STRETCH_FIRST
    while good < size:
        if good + 8 > size:
            why = "torn record header"
            break
        length, crc = header(data, good)
        begin = good + 8
        end = begin + length
        if end > size:
            why = "torn record"
            break
        if crc32(view[begin:end]) != crc:
            why = "checksum mismatch"
            break
        if runs and data[begin] == 1 and length >= 21:  # ``records._decode_append``, inline
            if good >= try_at:
                stretch = append_stretch(data, view, good, window)
                if stretch is not None:
                    more, more_datas, more_tss, good = stretch
                    subjects += more
                    hdrs += repeat(b"", len(more))
                    datas += more_datas
                    tss += more_tss
                    window = min(window * 4, _STRETCH_MAX) if len(more) == window else _STRETCH_FIRST
                    continue
                try_at = good + MIN_STRETCH * (8 + length)  # not before as many frames as it takes
                window = _STRETCH_FIRST
            n = append_head(data, good)[3]
            pos = begin + 5 + n
            subject = data[begin + 5 : pos]
            if pos + 8 <= end:
                hlen, dlen = two(data, pos)
                if not hlen:  # the usual message: no headers, so both lengths at once
                    hdr = b""
                    pos += 8
                else:
                    pos += 4
                    hdr = data[pos : pos + hlen]
                    pos += hlen
                    dlen = u32(data, pos)[0] if pos + 4 <= end else end
                    pos += 4
                if pos + dlen + 8 == end:
                    subjects.append(subject)
                    hdrs.append(hdr)
                    datas.append(data[pos : pos + dlen])
                    tss.append(i64(data, pos + dlen)[0])
                    good = end
                    continue
            # a malformed Append: ``decode`` below says what is wrong with it
        if subjects:
            out.append(AppendRun(subjects, hdrs, datas, tss))
            subjects, hdrs, datas, tss = [], [], [], []
        try:
            record = decode_columns(data, begin, end) if data[begin] == COLUMNS_CODE else read(data[begin:end])
        except Exception as exc:  # noqa: BLE001 - a record we can not read ends the log like a torn one
            why = f"undecodable record ({exc})"
            break
        out.append(record)
        good = end
        if type(record) is Columns:
            columns_end = end
    if subjects:
        out.append(AppendRun(subjects, hdrs, datas, tss))
    return out, good, why, columns_end


@dataclass
class LogContents:
    """What :func:`read_log` found: the whole records and, if the log was damaged, one line
    saying where (nats-server's kind of words: what, which file, where, what was kept)."""

    records: list[Record]
    damage: str = ""
    #: Where the last ``Columns`` record ends: the records after it were logged since the
    #: last compaction (0: no compaction wrote this log, or the store was empty).
    columns_end: int = 0


def _frame(payload: bytes) -> bytes:
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def _file_header() -> bytes:
    return _FILE_HEADER.pack(MAGIC, FORMAT_VERSION)


def _damage(path: Path, data: bytes, good: int, records: int, why: str) -> str:
    """Keep the bytes from ``good`` on beside the log, and the line that reports them."""
    kept = path.with_name(path.name + ".damaged")
    kept.write_bytes(data[good:])
    return (
        f"Write-ahead log {str(path)!r} damaged at byte {good} ({why}): "
        f"kept {records} records before it, moved {len(data) - good} bytes to {kept.name!r}"
    )


def read_log(path: Path, runs: bool = False) -> LogContents:
    """The whole records of ``path`` in order (with ``runs``, consecutive ``Append`` records
    as ``AppendRun`` columns). Damage (a torn or corrupt record anywhere, or no file header)
    ends the log there: it is reported, set aside and cut off."""
    if not path.exists():
        return LogContents([])
    data = path.read_bytes()
    if len(data) < _FILE_HEADER.size and MAGIC.startswith(data[: len(MAGIC)]):
        if data:
            os.truncate(path, 0)  # torn while writing the header: nothing was logged
        return LogContents([])
    if not data.startswith(MAGIC):
        damage = _damage(path, data, 0, 0, "no write-ahead log header")
        os.truncate(path, 0)
        return LogContents([], damage)
    _, version = _FILE_HEADER.unpack_from(data)
    if version not in READABLE_VERSIONS:
        raise ValueError(f"{path}: write-ahead log format {version} is newer than this jsemu ({FORMAT_VERSION})")
    records, good, why, columns_end = _records(data, _FILE_HEADER.size, runs)
    damage = ""
    if good != len(data):
        damage = _damage(path, data, good, _count(records), why)
        os.truncate(path, good)
    return LogContents(records, damage, columns_end)


def log_bytes(records: Iterable[Record]) -> bytes:
    """A whole log of ``records`` as bytes (a stream snapshot carries one)."""
    return _file_header() + b"".join(_frame(record.encode()) for record in records)


def _count(records: list[Record]) -> int:
    """Records in the log (an ``AppendRun`` stands for one per message)."""
    return sum(
        len(r.subjects) if isinstance(r, AppendRun) else r.count if isinstance(r, Columns) else 1 for r in records
    )


def _write_atomically(path: Path, records: Iterable[Record]) -> None:
    """A whole new log in place of ``path``: written beside it, fsynced, renamed, the
    directory fsynced, so a crash leaves either the old log or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        f.write(_file_header())
        chunk: list[bytes] = []
        for record in records:
            chunk.append(_frame(record.encode()))
            if len(chunk) >= 4096:
                f.write(b"".join(chunk))
                chunk.clear()
        f.write(b"".join(chunk))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _head(path: Path) -> bytes:
    """The first bytes of ``path``, where the magic goes (b"" for no file)."""
    try:
        with path.open("rb") as f:
            return f.read(len(MAGIC))
    except FileNotFoundError:
        return b""


class WriteAheadLog:
    """Appends records to one stream's log file. ``size`` is the file's length in bytes, for
    whoever decides when to :meth:`rewrite`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if _head(path) not in (MAGIC, b""):
            read_log(path)  # never append records to a file that is not a log: set it aside
        self._file: BinaryIO | None = self._open()

    def _open(self) -> BinaryIO:
        file = self.path.open("ab")
        if file.tell() == 0:
            file.write(_file_header())
            file.flush()
        self.size = file.tell()
        return file

    @property
    def empty(self) -> bool:
        """No record yet (only the file header)."""
        return self.size <= _FILE_HEADER.size

    def append(self, record: Record) -> None:
        if self._file is None:
            return
        frame = _frame(record.encode())
        self._file.write(frame)
        self._file.flush()
        self.size += len(frame)

    def rewrite(self, records: Iterable[Record]) -> None:
        """Replace the whole log with ``records`` (crash-safe: the old log or the new one)."""
        if self._file is None:
            return
        self._file.close()
        _write_atomically(self.path, records)
        self._file = self._open()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
