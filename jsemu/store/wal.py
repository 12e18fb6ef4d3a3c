"""An append-only write-ahead log of store mutations, for streams that outlive the process.

Each record is ``<length u32><crc32 u32><payload>`` where the payload is one pickled
mutation ``(method name, args, kwargs)`` of :class:`StreamStore` (the same entries the
replication log carries). A record is written to the OS before the publish is
acknowledged, so a killed process loses nothing it acknowledged. A crash in the middle of
a write leaves a short or mismatching last record: :func:`replay` stops there and cuts the
file back to the last whole record, so what was acknowledged is never corrupted.

Like nats-server's default (``sync_interval`` of two minutes), records are not fsynced
one by one: a power cut may lose the latest writes, a crashed process does not.
"""

from __future__ import annotations

import os
import pickle
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["WriteAheadLog", "replay"]

_HEADER = struct.Struct("<II")

Entry = tuple[str, tuple[Any, ...], dict[str, Any]]


def replay(path: Path) -> Iterator[Entry]:
    """The whole records of ``path`` in order; a torn tail is cut off the file."""
    if not path.exists():
        return
    good = 0
    with path.open("rb") as f:
        data = f.read()
    size = len(data)
    while good + _HEADER.size <= size:
        length, crc = _HEADER.unpack_from(data, good)
        start = good + _HEADER.size
        end = start + length
        if end > size or zlib.crc32(data[start:end]) != crc:
            break
        try:
            entry = pickle.loads(data[start:end])
        except Exception:  # noqa: BLE001 - a record we can not read ends the log like a torn one
            break
        yield entry
        good = end
    if good != size:
        os.truncate(path, good)


class WriteAheadLog:
    """Appends records to one stream's log file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO | None = path.open("ab")

    def append(self, entry: Entry) -> None:
        if self._file is None:
            return
        payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.write(_HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
