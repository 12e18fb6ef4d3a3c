"""Compaction: the shortest log that rebuilds a store, and when to write it.

A write-ahead log of every mutation grows with the stream's history, not with what it
holds: 300k publishes to a ``max_msgs: 1000`` stream log 300k appends for 1000 messages.
:func:`state_records` is the store's state as records (the live messages with their
sequences and timestamps as :class:`~.column_snapshot.Columns` chunks, which a restart
loads in bulk; a gap after the last one as a skip), so replaying them into a fresh store gives
the same messages, sequences and deletes. They are replayed with no limits and the
store's limits are applied last: messages are rebuilt as they were stored, never judged
again under limits they were not stored under (a ``max_msgs_per_subject`` or a discard
policy changed since must not drop or refuse a message already kept).

:class:`CompactingLog` rewrites its log that way whenever the records logged since the
last rewrite have grown past :data:`MIN_COMPACT_BYTES` plus the store's bytes, so a restart
loads the columns and replays at most O(live data) records after them, and the rewrites
cost amortised O(1) per logged record; a clean stop (:meth:`CompactingLog.checkpoint`)
rewrites it too, so a restart after one loads columns only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from .column_snapshot import CHUNK_BYTES, CHUNK_MSGS, Columns
from .interface import Body, StoreReader
from .limits import StoreLimits
from .records import Compact, LastTime, Record, SkipMany, UpdateLimitsAt
from .wal import WriteAheadLog

__all__ = ["CHECKPOINT_BYTES", "MIN_COMPACT_BYTES", "CompactingLog", "state_records"]

#: A tail smaller than this (plus the live bytes) is left alone: replaying it is quick.
MIN_COMPACT_BYTES = 1 << 20
#: A clean stop compacts a tail larger than this (a few thousand records to replay).
CHECKPOINT_BYTES = 64 << 10


def state_records(store: StoreReader) -> Iterator[Record]:
    """Records that rebuild ``store``'s state in a fresh store of the same stream: the live
    messages as :class:`~.column_snapshot.Columns` chunks (their gaps are dead slots), then
    its limits as of now."""
    now = store.clock.now_ns()
    yield UpdateLimitsAt(StoreLimits(), now)
    first, last = store.first_seq, store.last_seq
    if first > 0 or last > 0:
        yield Compact(first if store.msgs else last + 1)
    at = first - 1 if store.msgs else last
    start = first
    limit = CHUNK_MSGS
    while store.msgs:
        seqs, subjects, bodies, tss = store.live_columns(start, limit)
        if not seqs:
            break
        if limit > 1 and sum(map(len, subjects)) + sum(map(_size, bodies)) > CHUNK_BYTES:
            limit = max(1, limit // 2)  # big messages: fewer to a chunk
            continue
        yield Columns.of_live(seqs, subjects, bodies, tss)
        at = seqs[-1]
        start = at + 1
    if last > at:
        yield SkipMany(0, last - at)
    last_ts = store.state().last_ts
    if last_ts and (last > at or not store.msgs):  # the last messages deleted: their time stays
        yield LastTime(last_ts)
    yield UpdateLimitsAt(store.limits, now)


def _size(body: Body) -> int:
    if isinstance(body, tuple):
        return len(body[0]) + len(body[1])
    return len(body)


class CompactingLog(WriteAheadLog):
    """A stream's write-ahead log that rewrites itself as :func:`state_records` of
    ``store()`` once the records logged since its last rewrite (the tail, from byte
    ``compacted`` on: where the records of the last rewrite end) outweigh the data it
    describes, and on :meth:`checkpoint` (a clean stop) once there is any tail to speak of."""

    def __init__(self, path: Path, store: Callable[[], StoreReader], compacted: int = 0) -> None:
        super().__init__(path)
        self._store = store
        self._compacted = compacted

    def append(self, record: Record) -> None:
        super().append(record)
        if self.size - self._compacted > MIN_COMPACT_BYTES + self._store().bytes:
            self.compact()

    def compact(self) -> None:
        """Rewrite the log as the store's current state."""
        self.rewrite(state_records(self._store()))
        self._compacted = self.size

    def checkpoint(self) -> None:
        """Compact when more than :data:`CHECKPOINT_BYTES` were logged since the last
        rewrite, so the next start loads columns instead of replaying records."""
        if self.size - self._compacted > CHECKPOINT_BYTES:
            self.compact()

    def start(self) -> None:
        """A new log starts with the limits its first messages are stored under."""
        if self.empty:
            store = self._store()
            super().append(UpdateLimitsAt(store.limits, store.clock.now_ns()))
