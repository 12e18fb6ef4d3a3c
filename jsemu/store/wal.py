"""An append-only write-ahead log of store mutations, for streams that outlive the process.

Format 2 (written now): the file starts with ``JSEMUWAL`` and a ``u16`` format version, then
records ``<length u32><crc32 u32><payload>`` where the payload is one encoded
:class:`~.records.Record` (a record-type byte and its fields, :mod:`.records`): the same
records the replication log carries, saved without any Python name, so renaming a store
method or class does not break a saved store.

Format 1 (jsemu before the records): no file header, each payload a pickled
``(method name, args, kwargs)``. It is still read, through :data:`_LEGACY` (the method
names of that time, frozen here), and the file is rewritten in format 2 on the first
replay, so new records are never appended to an old-format file.

A record is written to the OS before the publish is acknowledged, so a killed process
loses nothing it acknowledged. A crash in the middle of a write leaves a short or
mismatching last record; a damaged disk can leave one anywhere. :func:`read_log` stops at
the first record that is torn, fails its CRC or does not decode, keeps every record before
it (as nats-server keeps a block's messages before a bad one), says where in one line
(:attr:`LogContents.damage`), moves the bytes from there on to ``<log>.damaged`` and cuts
the log back, so new records follow whole ones.

The log never grows without bound: :meth:`WriteAheadLog.rewrite` replaces it, crash-safely
(a new file, fsynced, renamed over the old one, the directory fsynced), with the records
that rebuild the current state (:mod:`.compaction`).

Like nats-server's default (``sync_interval`` of two minutes), records are not fsynced
one by one: a power cut may lose the latest writes, a crashed process does not.
"""

from __future__ import annotations

import os
import pickle
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .records import Append, Compact, Purge, PurgeEx, Record, Remove, Skip, SkipMany, UpdateLimits, decode

__all__ = ["FORMAT_VERSION", "MAGIC", "LogContents", "WriteAheadLog", "read_log", "replay"]

MAGIC = b"JSEMUWAL"
FORMAT_VERSION = 2
_FILE_HEADER = struct.Struct("<8sH")
_HEADER = struct.Struct("<II")

#: Format 1 payloads name ``StreamStore`` methods as they were called then.
_LEGACY: dict[str, type[Record]] = {
    "append": Append,
    "skip_msg": Skip,
    "skip_msgs": SkipMany,
    "remove": Remove,
    "purge": Purge,
    "purge_ex": PurgeEx,
    "compact": Compact,
    "update_limits": UpdateLimits,
}


def _legacy_record(payload: bytes) -> Record:
    name, args, kwargs = pickle.loads(payload)
    return _LEGACY[name](*args, **kwargs)


def _records(data: bytes, start: int, read: Any) -> tuple[list[Record], int, str]:
    """The whole records from ``start`` on, the end of the last one, and what is wrong
    with the bytes after it ("" when there are none)."""
    out: list[Record] = []
    good = start
    size = len(data)
    view = memoryview(data)  # the checksum reads the bytes in place
    why = ""
    while good < size:
        if good + _HEADER.size > size:
            why = "torn record header"
            break
        length, crc = _HEADER.unpack_from(data, good)
        begin = good + _HEADER.size
        end = begin + length
        if end > size:
            why = "torn record"
            break
        if zlib.crc32(view[begin:end]) != crc:
            why = "checksum mismatch"
            break
        try:
            record = read(data[begin:end])
        except Exception as exc:  # noqa: BLE001 - a record we can not read ends the log like a torn one
            why = f"undecodable record ({exc})"
            break
        out.append(record)
        good = end
    return out, good, why


@dataclass
class LogContents:
    """What :func:`read_log` found: the whole records and, if the log was damaged, one line
    saying where (nats-server's kind of words: what, which file, where, what was kept)."""

    records: list[Record]
    damage: str = ""


def _frame(payload: bytes) -> bytes:
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def _file_header() -> bytes:
    return _FILE_HEADER.pack(MAGIC, FORMAT_VERSION)


def replay(path: Path) -> list[Record]:
    """The whole records of ``path`` in order (:func:`read_log` without the damage report)."""
    return read_log(path).records


def _damage(path: Path, data: bytes, good: int, records: int, why: str) -> str:
    """Keep the bytes from ``good`` on beside the log, and the line that reports them."""
    kept = path.with_name(path.name + ".damaged")
    kept.write_bytes(data[good:])
    return (
        f"Write-ahead log {str(path)!r} damaged at byte {good} ({why}): "
        f"kept {records} records before it, moved {len(data) - good} bytes to {kept.name!r}"
    )


def read_log(path: Path) -> LogContents:
    """The whole records of ``path`` in order. Damage (a torn or corrupt record anywhere)
    ends the log there: it is reported, set aside and cut off. A format 1 file is
    rewritten in format 2."""
    if not path.exists():
        return LogContents([])
    data = path.read_bytes()
    if data.startswith(MAGIC):
        if len(data) < _FILE_HEADER.size:
            os.truncate(path, 0)  # torn while writing the header: nothing was logged
            return LogContents([])
        _, version = _FILE_HEADER.unpack_from(data)
        if version != FORMAT_VERSION:
            raise ValueError(f"{path}: write-ahead log format {version} is newer than this jsemu ({FORMAT_VERSION})")
        records, good, why = _records(data, _FILE_HEADER.size, decode)
        damage = ""
        if good != len(data):
            damage = _damage(path, data, good, len(records), why)
            os.truncate(path, good)
        return LogContents(records, damage)
    records, good, why = _records(data, 0, _legacy_record)
    damage = _damage(path, data, good, len(records), why) if good != len(data) and good > 0 else ""
    _write_atomically(path, records)
    return LogContents(records, damage)


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


class WriteAheadLog:
    """Appends records to one stream's log file (format 2; replay a format 1 file first).
    ``size`` is the file's length in bytes, for whoever decides when to :meth:`rewrite`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.exists() and not path.read_bytes()[: len(MAGIC)] in (MAGIC, b""):
            replay(path)  # never append format 2 records to a format 1 file
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
