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
mismatching last record: :func:`replay` stops there and cuts the file back to the last
whole record, so what was acknowledged is never corrupted.

Like nats-server's default (``sync_interval`` of two minutes), records are not fsynced
one by one: a power cut may lose the latest writes, a crashed process does not.
"""

from __future__ import annotations

import os
import pickle
import struct
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from .records import Append, Compact, Purge, PurgeEx, Record, Remove, Skip, SkipMany, UpdateLimits, decode

__all__ = ["FORMAT_VERSION", "MAGIC", "WriteAheadLog", "replay"]

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


def _records(data: bytes, start: int, read: Any) -> tuple[list[Record], int]:
    """The whole records from ``start`` on and the end of the last one."""
    out: list[Record] = []
    good = start
    size = len(data)
    while good + _HEADER.size <= size:
        length, crc = _HEADER.unpack_from(data, good)
        begin = good + _HEADER.size
        end = begin + length
        if end > size or zlib.crc32(data[begin:end]) != crc:
            break
        try:
            record = read(data[begin:end])
        except Exception:  # noqa: BLE001 - a record we can not read ends the log like a torn one
            break
        out.append(record)
        good = end
    return out, good


def _frame(payload: bytes) -> bytes:
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def _file_header() -> bytes:
    return _FILE_HEADER.pack(MAGIC, FORMAT_VERSION)


def replay(path: Path) -> list[Record]:
    """The whole records of ``path`` in order; a torn tail is cut off the file, and a
    format 1 file is rewritten in format 2."""
    if not path.exists():
        return []
    data = path.read_bytes()
    if data.startswith(MAGIC):
        if len(data) < _FILE_HEADER.size:
            os.truncate(path, 0)  # torn while writing the header: nothing was logged
            return []
        _, version = _FILE_HEADER.unpack_from(data)
        if version != FORMAT_VERSION:
            raise ValueError(f"{path}: write-ahead log format {version} is newer than this jsemu ({FORMAT_VERSION})")
        records, good = _records(data, _FILE_HEADER.size, decode)
        if good != len(data):
            os.truncate(path, good)
        return records
    records, _ = _records(data, 0, _legacy_record)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        f.write(_file_header() + b"".join(_frame(r.encode()) for r in records))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return records


class WriteAheadLog:
    """Appends records to one stream's log file (format 2; replay a format 1 file first)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.exists() and not path.read_bytes()[: len(MAGIC)] in (MAGIC, b""):
            replay(path)  # never append format 2 records to a format 1 file
        self._file: BinaryIO | None = path.open("ab")
        if self._file.tell() == 0:
            self._file.write(_file_header())
            self._file.flush()

    def append(self, record: Record) -> None:
        if self._file is None:
            return
        self._file.write(_frame(record.encode()))
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
