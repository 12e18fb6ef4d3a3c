"""Subscribers inside the server (API dispatch, Direct Get responders)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server.sublist import Subscription
    from ..server.subscriber import FastBatch, SkipFn

__all__ = ["DeliverFn", "InternalSubscriber"]

log = logging.getLogger("jsemu.jetstream")

#: (subject, reply, header length or -1, message); may return False for "not mine".
DeliverFn = Callable[[bytes, bytes | None, int, bytes], bool | None]


class InternalSubscriber:
    """Hands each message to a callback, like a client connection receives it.

    The callback may return False to say the message was not for it, so the publisher can
    still get no-responders. An exception is logged and swallowed: a bug in a handler must
    not cost the publisher its connection (the test suite fails on any such log record).
    """

    __slots__ = ("fast_batch", "fn", "owner", "skips")
    echo = True

    def __init__(
        self,
        fn: DeliverFn,
        owner: object = None,
        *,
        fast_batch: FastBatch | None = None,
        skips: SkipFn | None = None,
    ) -> None:
        self.fn = fn
        #: What the subscription serves (a Direct Get responder), for queue policies.
        self.owner = owner
        #: ``fn`` for a run of publishes, for a connection's fast lane; only for an ``fn``
        #: that never declines a message (the contract is in ``server/subscriber.py``).
        self.fast_batch = fast_batch
        #: Subjects this subscriber always declines (it is then no reason to leave the fast lane).
        self.skips = skips

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        try:
            return self.fn(subject, reply, hdr, msg) is not False
        except Exception:
            log.exception("internal handler failed for %r", subject)
        return True
