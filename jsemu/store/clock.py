"""Time sources for the store: one protocol, a wall clock and a manual clock for tests.

The store never reads the system time itself, so expiry (max age) and the dedup window are
driven by whatever clock it is given and are deterministic under :class:`ManualClock`.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Anything that can tell the time in integer nanoseconds since the Unix epoch."""

    def now_ns(self) -> int: ...


class SystemClock:
    """Wall-clock time, as nats-server uses (``time.Now().UnixNano()``)."""

    __slots__ = ()

    def now_ns(self) -> int:
        return time.time_ns()


class ManualClock:
    """A clock that only moves when told to, so tests can freeze and step time exactly."""

    __slots__ = ("_now",)

    def __init__(self, start_ns: int = 1_767_225_600_000_000_000) -> None:
        self._now = start_ns

    def now_ns(self) -> int:
        return self._now

    def advance(self, ns: int) -> None:
        """Move forward by ``ns`` (a negative value moves backwards, like a wall-clock step)."""
        self._now += ns

    def set(self, ns: int) -> None:
        self._now = ns

    def __repr__(self) -> str:
        return f"ManualClock({self._now})"
