"""``rate_limit_bps`` of a push consumer: Go's ``golang.org/x/time/rate`` limiter, on the
server's clock.

nats-server (``setRateLimit``) makes ``rate.NewLimiter(bps / 8, burst)``: bytes per second,
with a burst of the stream's ``max_msg_size`` (else the server's ``max_payload``), full at
the start. Before each message, ``loopAndGatherMsgs`` reserves its size (subject, ack reply,
header and payload: ``sz``) with ``ReserveN(now, sz)`` and sleeps for the reservation's
delay before delivering it. A reservation always succeeds unless the message is bigger
than the burst, which waits forever (``InfDuration``); at a rate of 0 the burst is all
there ever is.
"""

from __future__ import annotations

__all__ = ["NEVER", "TokenBucket"]

#: The delay of a reservation that can never be met (Go's ``InfDuration``).
NEVER = -1
_SECOND = 1_000_000_000


class TokenBucket:
    """``rate.Limiter`` with ``ReserveN(now, n).DelayFrom(now)`` as :meth:`reserve`."""

    __slots__ = ("burst", "last", "rate", "tokens")

    def __init__(self, bps: int, burst: int) -> None:
        self.rate = bps // 8  # bytes per second, as Go's integer division
        self.burst = burst
        self.tokens = float(burst)  # a new limiter is full at its first use
        self.last: int | None = None

    def reserve(self, now: int, n: int) -> int:
        """Take ``n`` bytes at ``now`` (clock ns); the nanoseconds to wait before sending
        them (0: at once), or :data:`NEVER`."""
        if self.rate == 0:
            if self.burst >= n:
                self.burst -= n
                return 0
            return NEVER
        if n > self.burst:
            return NEVER
        if self.last is not None and now > self.last:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate / _SECOND)
        self.last = now
        self.tokens -= n
        if self.tokens >= 0:
            return 0
        return int(-self.tokens / self.rate * _SECOND)
