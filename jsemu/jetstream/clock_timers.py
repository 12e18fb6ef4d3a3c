"""Timers on the server's clock (ack wait, pull request expiry, inactive threshold).

Deadlines are clock nanoseconds, never wall-clock sleeps: one event-loop timer is armed for
the earliest deadline (re-armed if it fires early because the clock was frozen), and
:meth:`ClockTimers.run_due` runs whatever is due; the control plane calls it after moving
the clock, so a test that advances a frozen clock by ``ack_wait`` sees the redelivery at once.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable

from ..store import Clock

__all__ = ["ClockTimers", "Timer"]

#: Longest wall-clock wait before re-checking (covers a clock that is moved or frozen).
_MAX_WAIT = 1.0


class Timer:
    """One scheduled callback; ``cancel`` makes it a no-op."""

    __slots__ = ("callback", "cancelled", "deadline")

    def __init__(self, deadline: int, callback: Callable[[], None]) -> None:
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ClockTimers:
    """A heap of clock deadlines with one event-loop wake-up for the earliest."""

    def __init__(self, clock: Clock, loop: Callable[[], asyncio.AbstractEventLoop | None]) -> None:
        self.clock = clock
        self._loop = loop
        self._heap: list[tuple[int, int, Timer]] = []
        self._ids = itertools.count()
        self._handle: asyncio.TimerHandle | None = None
        self._armed_for = 0

    def at(self, deadline: int, callback: Callable[[], None]) -> Timer:
        timer = Timer(deadline, callback)
        heapq.heappush(self._heap, (deadline, next(self._ids), timer))
        if self._handle is None or deadline < self._armed_for:
            self._arm()
        return timer

    def no_later_than(self, timer: Timer | None, deadline: int, callback: Callable[[], None]) -> Timer:
        """A timer that fires by ``deadline``: ``timer`` itself if it is live and due by
        then, else a new one (``timer`` cancelled). Each due check re-arms for what is left."""
        if timer is not None and not timer.cancelled and timer.deadline <= deadline:
            return timer
        if timer is not None:
            timer.cancel()
        return self.at(deadline, callback)

    def run_due(self) -> None:
        """Run every timer whose deadline has come, earliest first (a callback may add more)."""
        heap = self._heap
        while heap:
            deadline, _, timer = heap[0]
            if timer.cancelled:
                heapq.heappop(heap)
                continue
            if deadline > self.clock.now_ns():
                break
            heapq.heappop(heap)
            timer.callback()
        self._arm()

    def _fire(self) -> None:
        self._handle = None
        self.run_due()

    def _arm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
        if not self._heap:
            return
        loop = self._loop()
        if loop is None:
            return
        deadline = self._heap[0][0]
        wait = min(max(0.0, (deadline - self.clock.now_ns()) / 1e9), _MAX_WAIT)
        self._armed_for = deadline
        self._handle = loop.call_later(wait, self._fire)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._heap.clear()
