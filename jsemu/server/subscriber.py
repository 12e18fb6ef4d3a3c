"""The subscriber contract: what the router needs from whoever owns a subscription.

Every subscriber (a client connection, an internal handler) takes messages one at a time
through ``deliver``. An internal subscriber may also offer the fast lane's entries, read by
``Server.learn_route`` with ``getattr``, so neither is part of the required protocol:

* ``fast_batch``: a :data:`FastHandler` that takes a whole run of client publishes as
  columns, without ``route`` and its per-message checks (faults, trace, queue policies,
  max-msgs, echo), which ``learn_route`` has ruled out for the subject beforehand;
* ``skips(subject)``: True for subjects it always declines, so that it is no reason to
  leave the fast lane when another subscriber takes those publishes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .sublist import Subscription

__all__ = ["FastHandler", "SkipFn", "Subscriber"]

#: Takes client publishes on its subjects as columns: subjects, replies, header lengths
#: (None: all -1, no headers) and messages.
FastHandler = Callable[[Sequence[bytes], Sequence[bytes | None], Sequence[int] | None, Sequence[bytes]], None]

#: True for a publish subject the subscriber always declines.
SkipFn = Callable[[bytes], bool]


class Subscriber(Protocol):
    """Whoever owns a subscription: a client connection or an internal handler."""

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """Hand over one message; False if it was not delivered (e.g. echo is off)."""
        ...
