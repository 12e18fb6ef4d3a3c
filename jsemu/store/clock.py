"""Time sources for the store: one protocol, a wall clock and a manual clock for tests.

The store never reads the system time itself, so expiry (max age) and the dedup window are
driven by whatever clock it is given and are deterministic under :class:`ManualClock`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ControlledClock", "ManualClock", "SystemClock"]


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


class ControlledClock:
    """Wall-clock time that a test (or the control plane) can freeze, step and set.

    Until told otherwise it is the system clock. ``freeze`` stops it where it is,
    ``advance`` and ``set`` move it (frozen or not), ``resume`` lets it run again from
    wherever it was moved to.
    """

    __slots__ = ("_frozen_at", "_offset", "now_ns")

    def __init__(self) -> None:
        self._offset = 0
        self._frozen_at: int | None = None
        #: The current reading: ``time.time_ns`` itself while the clock is plain wall time
        #: (the store reads it per message), else a method that shifts or freezes it.
        self.now_ns: Callable[[], int] = time.time_ns

    def _retarget(self) -> None:
        if self._frozen_at is not None:
            self.now_ns = self._frozen_now
        elif self._offset:
            self.now_ns = self._shifted_now
        else:
            self.now_ns = time.time_ns

    def _frozen_now(self) -> int:
        assert self._frozen_at is not None
        return self._frozen_at

    def _shifted_now(self) -> int:
        return time.time_ns() + self._offset

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def freeze(self, at_ns: int | None = None) -> int:
        """Stop the clock (at ``at_ns`` if given); returns the frozen time."""
        self._frozen_at = self.now_ns() if at_ns is None else at_ns
        self._retarget()
        return self._frozen_at

    def resume(self) -> None:
        """Run again from the current reading."""
        if self._frozen_at is not None:
            self._offset = self._frozen_at - time.time_ns()
            self._frozen_at = None
            self._retarget()

    def advance(self, ns: int) -> int:
        if self._frozen_at is not None:
            self._frozen_at += ns
        else:
            self._offset += ns
            self._retarget()
        return self.now_ns()

    def set(self, ns: int) -> None:
        if self._frozen_at is not None:
            self._frozen_at = ns
        else:
            self._offset = ns - time.time_ns()
            self._retarget()

    def reset(self) -> None:
        """Back to plain wall-clock time."""
        self._offset = 0
        self._frozen_at = None
        self._retarget()

    def __repr__(self) -> str:
        return f"ControlledClock(frozen={self.frozen}, now={self.now_ns()})"
