"""Messages over a route in runs: one write per client read, one delivery per routed run.

Theory of operation
-------------------
A busy route carries runs: a client pipelining publishes to one subject on this server
becomes, on the other, a stretch of ``RMSG`` frames with one account, subject and reply.
Handled one message at a time, each frame costs a match, a routing call and a frame built
from scratch on both ends; handled as a run, those costs are paid once.

Sending: when a route is the one target of a publish subject (no local subscriber, no queue
group), the account's learned route (``server/subscriber.py``'s fast lane) is the route's
:meth:`RmsgHeads.batch` for that account, a stable ``FastBatch`` per (route, account), and a
client's run of publishes reaches the route as one buffer. The head of each frame
(``RMSG <account> <subject> [<reply>] ``) depends on nothing but those three names and is
cached per account, bounded; a message with headers leaves the run and goes through
``send_msg`` as before.

Receiving: ``RouteParser.feed_to`` hands over each run of common frames (no queues, no
headers); :func:`deliver_run` matches its subject once and, when the account's reply plan
for it (``server/outbound.py``: plain client subscriptions only, made and dropped with the
sublist's caches) is not empty, queues the run's ``MSG`` frames to each subscriber as one
buffer. Anything else (an ack, a JetStream delivery's ``@`` reply, a route or an internal
subscriber among the targets, an ``UNSUB`` limit) is delivered one message at a time by
``deliver_from_route``, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .ack_lane import ACK_PREFIX
from .connection import ClientConnection

if TYPE_CHECKING:
    from .route import RouteConnection
    from .routing import Router
    from .sublist import Subscription
    from .subscriber import FastBatch

__all__ = ["RmsgHeads", "deliver_run", "frames"]

log = logging.getLogger("jsemu.server")

#: Heads kept per account before its cache starts over.
_HEADS_MAX = 1 << 14

#: ``deliver_from_route`` (router, route, subject, reply, hdr, msg, queues).
DeliverOne = Callable[["Router", "RouteConnection", bytes, "bytes | None", int, bytes, tuple[bytes, ...]], None]


class RmsgHeads:
    """The sending side of one route: per account, its ``FastBatch`` and its frame heads."""

    __slots__ = ("_batches", "_heads", "_route")

    def __init__(self, route: RouteConnection) -> None:
        self._route = route
        #: router -> the route's FastBatch for that account (one stable object each).
        self._batches: dict[Router, FastBatch] = {}
        #: account -> (subject, reply) -> b"RMSG <account> <subject> [<reply>] ".
        self._heads: dict[bytes, dict[tuple[bytes, bytes | None], bytes]] = {}

    def batch(self, router: Router) -> FastBatch:
        found = self._batches.get(router)
        if found is None:
            account = router.name.encode()

            def send_run(
                subjects: Sequence[bytes], replies: Sequence[bytes | None], hdrs: object, msgs: Sequence[bytes]
            ) -> None:
                self.send_run(account, subjects, replies, hdrs, msgs)  # type: ignore[arg-type]

            found = self._batches[router] = send_run
        return found

    def head(self, account: bytes, subject: bytes, reply: bytes | None) -> bytes:
        """``b"RMSG <account> <subject> [<reply>] "``, cached (``reply`` None: none)."""
        heads = self._heads.get(account)
        if heads is None or len(heads) >= _HEADS_MAX:
            heads = self._heads[account] = {}
        head = heads.get((subject, reply))
        if head is None:
            if reply is not None:
                head = b"RMSG %b %b %b " % (account, subject, reply)
            else:
                head = b"RMSG %b %b " % (account, subject)
            heads[(subject, reply)] = head
        return head

    def send_run(
        self,
        account: bytes,
        subjects: Sequence[bytes],
        replies: Sequence[bytes | None],
        hdrs: Sequence[int] | None,
        msgs: Sequence[bytes],
    ) -> None:
        """A run of publishes whose one target is this route, as one buffer."""
        route = self._route
        if route.closed:
            return
        if hdrs is not None and max(hdrs) > 0:  # headers: frame by frame (``send_msg``)
            for subject, reply, hdr, msg in zip(subjects, replies, hdrs, msgs):
                route.send_msg(account, subject, reply, hdr, msg, [])
            return
        n = len(msgs)
        head = self.head
        if subjects.count(subjects[0]) == n and replies.count(replies[0]) == n:  # the usual run
            data = frames(head(account, subjects[0], replies[0] or None), msgs)
        else:
            data = b"".join(
                [
                    b"%b%d\r\n%b\r\n" % (head(account, s, r or None), len(m), m)
                    for s, r, m in zip(subjects, replies, msgs)
                ]
            )
        route.queue_run(data, n, sum(map(len, msgs)))


def frames(head: bytes, msgs: Sequence[bytes]) -> bytes:
    """``<head><size>\\r\\n<msg>\\r\\n`` for each message, as one buffer: a single join when
    all are one size (a benchmark's, a sensor's), else one format each."""
    size = len(msgs[0])
    if min(map(len, msgs)) == size == max(map(len, msgs)):
        first = b"%b%d\r\n" % (head, size)
        return first + (b"\r\n" + first).join(msgs) + b"\r\n"
    return b"".join([b"%b%d\r\n%b\r\n" % (head, len(m), m) for m in msgs])


def deliver_run(
    router: Router,
    route: RouteConnection,
    subject: bytes,
    reply: bytes | None,
    payloads: list[bytes],
    deliver_one: DeliverOne,
) -> None:
    """A run of routed messages (no queues, no headers) to this server's subscribers."""
    targets: list[tuple[Subscription, ClientConnection, bytes]] | None = None
    if subject[:8] != ACK_PREFIX and (reply is None or b"@" not in reply):
        plan = router.outbound.plan(subject)
        if plan:
            targets = [(sub, conn, pmsg) for sub, conn, _, pmsg in plan]
        else:
            targets = _local_targets(router, route, subject)
    if targets is None or (len(targets) > 1 and len({id(t[1]) for t in targets}) < len(targets)):
        # A client with two subscriptions gets each message on both before the next one
        # (nats-server's order): one message at a time.
        for msg in payloads:
            try:
                deliver_one(router, route, subject, reply, -1, msg, ())
            except Exception:  # an internal subscriber's fault is not the route's
                log.exception("delivering a routed message on %r failed", subject)
        return
    n = len(payloads)
    size = sum(map(len, payloads))
    for sub, conn, pmsg in targets:
        if conn.closed:
            continue
        sub.nm += n
        conn.queue(frames(pmsg + reply + b" " if reply is not None else pmsg, payloads), n, size)


def _local_targets(
    router: Router, route: RouteConnection, subject: bytes
) -> list[tuple[Subscription, ClientConnection, bytes]] | None:
    """The plain client subscriptions a routed message without queues goes to when the reply
    plan has none: routes' interest (other servers') and queue groups (the frame names none)
    left out, as ``deliver_from_route`` does; None when anything else listens."""
    found = []
    for sub in router.sublist.match(subject).psubs:
        conn = sub.client
        if conn.__class__ is route.__class__:
            continue
        if conn.__class__ is not ClientConnection or sub.max or sub.closed:
            return None
        found.append((sub, conn, b"MSG %b %b " % (subject, sub.sid)))
    return found
