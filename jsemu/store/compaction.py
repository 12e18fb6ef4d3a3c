"""Compaction: the shortest log that rebuilds a store, and when to write it.

A write-ahead log of every mutation grows with the stream's history, not with what it
holds: 300k publishes to a ``max_msgs: 1000`` stream log 300k appends for 1000 messages.
:func:`state_records` is the store's state as records (the live messages with their
sequences and timestamps, the gaps as skips), so replaying them into a fresh store gives
the same messages, sequences and deletes. They are replayed with no limits and the
store's limits are applied last: messages are rebuilt as they were stored, never judged
again under limits they were not stored under (a ``max_msgs_per_subject`` or a discard
policy changed since must not drop or refuse a message already kept).

:class:`CompactingLog` rewrites its log that way whenever the log has grown past
:data:`MIN_COMPACT_BYTES` plus twice the store's bytes, so a restart replays O(live data)
records and the rewrites cost amortised O(1) per logged record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from .interface import Body, StoreReader
from .limits import StoreLimits
from .records import Append, Compact, Record, SkipMany, UpdateLimits
from .wal import WriteAheadLog

__all__ = ["MIN_COMPACT_BYTES", "CompactingLog", "state_records"]

#: Logs smaller than this (plus twice the live bytes) are left alone: replaying them is quick.
MIN_COMPACT_BYTES = 1 << 20

_BATCH = 4096


def _body(body: Body) -> tuple[bytes, bytes]:
    return body if isinstance(body, tuple) else (b"", body)


def state_records(store: StoreReader) -> Iterator[Record]:
    """Records that rebuild ``store``'s state in a fresh store of the same stream."""
    yield UpdateLimits(StoreLimits())
    first, last = store.first_seq, store.last_seq
    if first > 0 or last > 0:
        yield Compact(first if store.msgs else last + 1)
    at = first - 1 if store.msgs else last
    start = first
    while store.msgs:
        batch = store.live_entries(start, _BATCH)
        if not batch:
            break
        for seq, subject, body, ts in batch:
            if seq > at + 1:
                yield SkipMany(0, seq - at - 1)
            hdr, data = _body(body)
            yield Append(subject, hdr, data, ts)
            at = seq
        start = batch[-1][0] + 1
    if last > at:
        yield SkipMany(0, last - at)
    yield UpdateLimits(store.limits)


class CompactingLog(WriteAheadLog):
    """A stream's write-ahead log that rewrites itself as :func:`state_records` of
    ``store()`` once it is much bigger than the data it describes."""

    def __init__(self, path: Path, store: Callable[[], StoreReader]) -> None:
        super().__init__(path)
        self._store = store

    def append(self, record: Record) -> None:
        super().append(record)
        if self.size > MIN_COMPACT_BYTES and self.size > MIN_COMPACT_BYTES + 2 * self._store().bytes:
            self.compact()

    def compact(self) -> None:
        """Rewrite the log as the store's current state."""
        self.rewrite(state_records(self._store()))

    def start(self) -> None:
        """A new log starts with the limits its first messages are stored under."""
        if self.empty:
            super().append(UpdateLimits(self._store().limits))
