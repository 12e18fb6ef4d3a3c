"""The stream's ``Nats-Msg-Id`` duplicate window (Go ``stream.go``: checkMsgId/storeMsgId/purgeMsgIds).

Entries live in a dict for lookup and a deque in insertion order for expiry, so dropping
expired ids costs amortised O(1) per id, like Go's ``ddarr``/``ddindex`` pair.
"""

from __future__ import annotations

from collections import deque
from itertools import compress, repeat
from operator import is_
from typing import TYPE_CHECKING, cast

from ..protocol.headers import slice_header
from .clock import Clock

if TYPE_CHECKING:
    from .interface import StoreReader

_MSG_ID = b"Nats-Msg-Id"

__all__ = ["DedupWindow"]


class _Entry:
    __slots__ = ("msg_id", "seq", "ts")

    def __init__(self, msg_id: bytes, seq: int, ts: int) -> None:
        self.msg_id = msg_id
        self.seq = seq
        self.ts = ts


def _key(msg_id: bytes | str) -> bytes:
    """Ids arrive as header bytes or as str; one key space so both spellings find each other."""
    if isinstance(msg_id, str):
        return msg_id.encode("utf-8", "surrogateescape")
    return bytes(msg_id)


class DedupWindow:
    """Message-id window of ``window_ns`` (``duplicate_window``); <= 0 disables it, as in Go.

    An entry is expired once ``now - ts >= window`` (Go ``purgeMsgIds``). Go purges on a timer,
    so it may still report an id shortly after the window; here expiry is exact at lookup time.
    """

    __slots__ = ("_clock", "_map", "_queue", "_window")

    def __init__(self, window_ns: int, clock: Clock) -> None:
        self._window = window_ns
        self._clock = clock
        self._map: dict[bytes, _Entry] = {}
        self._queue: deque[_Entry] = deque()

    def __len__(self) -> int:
        self._purge(self._clock.now_ns())
        return len(self._map)

    def _purge(self, now: int) -> None:
        # Stops at the first unexpired entry in insertion order, exactly like Go's loop.
        queue, mp, window = self._queue, self._map, self._window
        while queue and now - queue[0].ts >= window:
            entry = queue.popleft()
            # A later record of the same id replaced this one in the map; keep that one.
            if mp.get(entry.msg_id) is entry:
                del mp[entry.msg_id]

    def lookup(self, msg_id: bytes | str) -> int | None:
        """Sequence of an unexpired earlier message with this id, else None."""
        if not msg_id or not self._map:
            return None
        now = self._clock.now_ns()
        self._purge(now)
        entry = self._map.get(_key(msg_id))
        if entry is None or now - entry.ts >= self._window:
            return None
        return entry.seq

    def record(self, msg_id: bytes | str, seq: int, ts_ns: int) -> None:
        """Remember ``msg_id`` for the window (no-op when disabled or the id is empty)."""
        if self._window <= 0 or not msg_id:
            return
        self._purge(self._clock.now_ns())
        entry = _Entry(_key(msg_id), seq, ts_ns)
        self._map[entry.msg_id] = entry
        self._queue.append(entry)

    def set_window(self, ns: int) -> None:
        """Apply a changed ``duplicate_window``; disabling forgets every id (Go drops ddmap)."""
        self._window = ns
        if ns <= 0:
            self.clear()
        else:
            self._purge(self._clock.now_ns())

    def rebuild(self, store: StoreReader) -> bytes | None:
        """Go ``rebuildDedupe`` after a restart: remember the ``Nats-Msg-Id`` of every stored
        message from the first one inside the window on. Returns the last message's id
        (``b""`` without one) when the window reached it, else None (Go's ``lmsgId`` rule)."""
        start = store.seq_from_time(self._clock.now_ns() - self._window)
        last = store.last_seq
        if start == 0 or start > last:
            return None
        if not store.may_have_headers:  # no id anywhere: only whether the last message is there
            return b"" if store.entry(last) is not None else None
        seqs, _, bodies, tss = store.live_columns(start, last - start + 1)
        last_id: bytes | None = None
        # Only a message with headers can carry an id: those are picked out first.
        for i in list(compress(range(len(bodies)), map(is_, map(type, bodies), repeat(tuple)))):  # in C
            msg_id = slice_header(_MSG_ID, cast("tuple[bytes, bytes]", bodies[i])[0])
            if msg_id:
                self.record(msg_id, seqs[i], tss[i])
                if seqs[i] == last:
                    last_id = msg_id
        if seqs and seqs[-1] == last and last_id is None:
            last_id = b""
        return last_id

    def clear(self) -> None:
        self._map.clear()
        self._queue.clear()
