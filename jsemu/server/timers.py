"""Deadlines on the server's clock for connection timers (the authentication timeout).

The server layer only declares what it needs, :class:`DeadlineTimers` ("call this at that
clock time"); the app hands it JetStream's ``ClockTimers``, which the control plane runs
after every clock step, so moving the controlled clock past a deadline fires it at once.
A bare core server uses :class:`LoopTimers`: the event loop, reading the same clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from ..store.clock import Clock

__all__ = ["Cancellable", "DeadlineTimers", "LoopTimers"]


class Cancellable(Protocol):
    def cancel(self) -> None: ...


class DeadlineTimers(Protocol):
    """Run ``callback`` once the clock reads ``deadline`` (nanoseconds) or later."""

    def at(self, deadline: int, callback: Callable[[], None]) -> Cancellable: ...


class LoopTimers:
    """:class:`DeadlineTimers` on the event loop (the clock is read once, when armed)."""

    def __init__(self, clock: Clock, loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
        self.clock = clock
        self._loop = loop

    def at(self, deadline: int, callback: Callable[[], None]) -> Cancellable:
        return self._loop().call_later(max(0.0, (deadline - self.clock.now_ns()) / 1e9), callback)
