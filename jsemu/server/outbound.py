"""The one outbound path for what the server itself sends to a subject.

API replies, PubAcks, Direct Get answers, statuses and consumer deliveries all go to a
subject through :class:`Outbound`. JetStream code sees it only as a :class:`Sender`:
"send these messages to this subject" (``send*``), or, for a consumer, "deliver these
messages to this subject, each shown with its own subject and reply" (``deliver``: the
server's deliver-subject rewrite, a whole delivery run in one call).

A subject is resolved once to a *plan*: the subscriptions that take it when they are all
plain client subscriptions (no queue group, no ``UNSUB`` limit), with the head of their
frames pre-encoded (``b"HMSG <subject> <sid> "``, as ``protocol.encoder.frame_heads``).
Plans are cached per subject and dropped with the sublist's match cache on every
``Change`` (see ``server/subscriber.py``).

Who is in a plan does not depend on the subject but on the sublist's match result, and the
sublist hands out one shared ``MatchResult`` for every subject with the same subscribers:
so the members (subscription, connection, ``b" <sid> "``) are worked out once per shared
result (``_members``, dropped on the same ``Change``s) and a plan for a new subject only
puts its subject in front of each. That is the case of replies to many inboxes under one
wildcard that many clients share: every reply subject is new, the subscribers the same
(``benchmarks/fanout.py``). Plans wider than ``_WIDE`` targets are kept apart, a few
hundred at most, so a stream of one-off reply subjects fanning out to thousands of
clients never fills the per-subject cache with millions of targets.
A subject whose plan is empty (anything unusual listens, or nobody) is routed like any
message, one message at a time. So is one that a connection takes through two of its
subscriptions: nats-server delivers message by message (m1 to each, then m2 to each), which
a plan's block of a whole run per target would not keep (``tests/server/test_delivery_order.py``). Each connection owns its queue and its counters
(``ClientConnection.queue``); the server flushes every touched connection once per read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Protocol

from ..protocol.encoder import (
    EMPTY_REPLY,
    Delivery,
    delivery_frames,
    join_tails,
    message_frame,
    message_frames,
    payload_frames,
    split_tail,
)
from .connection import ClientConnection
from .sublist import MatchResult, Sublist, Subscription

__all__ = ["Outbound", "Sender"]

# Plans kept before the cache starts over.
_PLANS_MAX = 1 << 18
# A plan with more targets than this is wide: at most _WIDE_PLANS of them are kept. Every
# target is a tuple the cyclic GC tracks: keeping 256 wide plans of 2,000 targets made
# building a new one 2.5x slower (collections walking the kept ones) than keeping 16.
_WIDE = 64
_WIDE_PLANS = 16
_MESSAGE = itemgetter(3)

#: (subscription, its connection, b"HMSG <subject> <sid> ", b"MSG <subject> <sid> ")
_Target = tuple[Subscription, ClientConnection, bytes, bytes]
#: (subscription, its connection, b" <sid> "): a plan's target without its subject.
_Member = tuple[Subscription, ClientConnection, bytes]

#: ``Server.route``: (producer, subject, reply, header length, message) -> delivered.
RouteFn = Callable[[object, bytes, bytes | None, int, bytes], bool]

#: ``Server.route_shown``: (subject, subject shown, reply, header length, message) -> delivered.
RouteShownFn = Callable[[bytes, bytes, bytes | None, int, bytes], bool]


class Sender(Protocol):
    """Sending messages (without a reply subject of their own) to one subject."""

    def send(self, subject: bytes, hdr: int, msg: bytes) -> None:
        """One message; ``hdr`` is its header length, -1 for none."""
        ...

    def send_via_sendq(self, subject: bytes, hdr: int, msg: bytes) -> None:
        """One message as nats-server's server send queue delivers it into an account
        (``sendInternalAccountMsg``, ``publishAdvisory``, ``$SYS`` replies and events): with
        an empty reply, so its control line has two spaces before the size. (What a stream
        or consumer queue sends, and API replies, go through ``send``: one space.)"""
        ...

    def send_payloads(self, subject: bytes, payloads: Sequence[bytes]) -> None:
        """Header-less messages, in order (a pipelining publisher's acks)."""
        ...

    def send_messages(self, subject: bytes, items: Sequence[tuple[int, bytes]]) -> None:
        """``(header length or -1, message)`` for each message, in order."""
        ...

    def send_tails(self, subject: bytes, tails: list[bytes], size: int) -> None:
        """HMSGs given as ``protocol.encoder.hmsg_tail`` parts (``size``: their message
        bytes in all), in order: joined into one buffer when every listener is a plain,
        header-capable subscription, else re-framed for each."""
        ...

    def deliver(self, subject: bytes, items: Sequence[Delivery]) -> bool:
        """A consumer's delivery run to the subscribers of ``subject`` (a pull request's
        inbox, a push consumer's deliver subject): each item ``(subject shown, reply,
        header length or -1, message)``, in order. False when nobody listens."""
        ...

    def has_interest(self, subject: bytes) -> bool:
        """Whether anybody listens on ``subject``."""
        ...

    def pending_bytes(self, subject: bytes) -> int:
        """The most output bytes any client listening on ``subject`` has not yet had
        written to its socket: what a deliverer consults before sending more."""
        ...


class Outbound:
    """The :class:`Sender` of one server."""

    __slots__ = ("_members", "_plans", "_route", "_route_shown", "_sublist", "_wide")

    def __init__(self, sublist: Sublist, route: RouteFn, route_shown: RouteShownFn) -> None:
        self._sublist = sublist
        self._route = route
        self._route_shown = route_shown
        #: subject -> its plan; () when messages to it must be routed.
        self._plans: dict[bytes, tuple[_Target, ...]] = {}
        #: subject -> its plan, for plans of more than ``_WIDE`` targets.
        self._wide: dict[bytes, tuple[_Target, ...]] = {}
        #: shared match result -> its members; () when messages must be routed.
        self._members: dict[MatchResult, tuple[_Member, ...]] = {}
        sublist.derive(self._plans)
        sublist.derive(self._wide)
        sublist.derive(self._members)

    def reroute(self, route: RouteFn, route_shown: RouteShownFn | None = None) -> None:
        """Send what has no plan through ``route`` (and deliveries through ``route_shown``)
        from now on (a cluster's routing)."""
        self._route = route
        if route_shown is not None:
            self._route_shown = route_shown

    def plan(self, subject: bytes) -> tuple[_Target, ...]:
        """The cached plan of ``subject`` (made on first use)."""
        plan = self._plans.get(subject)
        if plan is None:
            plan = self._make_plan(subject)
        return plan

    def _make_plan(self, subject: bytes) -> tuple[_Target, ...]:
        plan = self._wide.get(subject)
        if plan is not None:
            return plan
        result = self._sublist.match(subject)
        members = self._members.get(result)
        if members is None:
            members = self._members_of(result)
        if members:
            hmsg = b"HMSG " + subject
            pmsg = b"MSG " + subject
            plan = tuple([(sub, conn, hmsg + tail, pmsg + tail) for sub, conn, tail in members])
            if len(plan) > _WIDE:
                wide = self._wide
                if len(wide) >= _WIDE_PLANS:
                    wide.clear()
                wide[subject] = plan
                return plan
        else:
            plan = ()
        plans = self._plans
        if len(plans) >= _PLANS_MAX:
            plans.clear()
        plans[subject] = plan
        return plan

    def _members_of(self, result: MatchResult) -> tuple[_Member, ...]:
        members: tuple[_Member, ...] = ()
        if not result.qsubs:
            found = []
            for sub in result.psubs:
                conn = sub.client
                if type(conn) is not ClientConnection or sub.max or sub.closed:
                    break
                found.append((sub, conn, b" " + sub.sid + b" "))
            else:
                # A connection with two matching subscriptions gets each message for both in turn
                # (nats-server's order); a plan sends a run as a block per target: routed instead.
                if len(found) < 2 or len({member[1] for member in found}) == len(found):
                    members = tuple(found)
        self._members[result] = members
        return members

    def send(self, subject: bytes, hdr: int, msg: bytes) -> None:
        plan = self._plans.get(subject)
        if plan is None:
            plan = self._make_plan(subject)
        if not plan:
            self._route(None, subject, None, hdr, msg)
            return
        for sub, conn, hmsg, pmsg in plan:
            if conn.closed:
                continue
            sub.nm += 1
            conn.queue(message_frame(hmsg, pmsg, conn.headers, hdr, msg), 1, len(msg))

    def send_via_sendq(self, subject: bytes, hdr: int, msg: bytes) -> None:
        plan = self.plan(subject)
        if not plan:
            self._route(None, subject, EMPTY_REPLY, hdr, msg)
            return
        for sub, conn, hmsg, pmsg in plan:
            if conn.closed:
                continue
            sub.nm += 1
            conn.queue(message_frame(hmsg + b" ", pmsg + b" ", conn.headers, hdr, msg), 1, len(msg))

    def send_payloads(self, subject: bytes, payloads: Sequence[bytes]) -> None:
        plan = self.plan(subject)
        if not plan:
            for payload in payloads:
                self._route(None, subject, None, -1, payload)
            return
        count = len(payloads)
        for sub, conn, _, pmsg in plan:
            if conn.closed:
                continue
            sub.nm += count
            conn.queue_frames(payload_frames(pmsg, payloads), sum(map(len, payloads)))

    def send_messages(self, subject: bytes, items: Sequence[tuple[int, bytes]]) -> None:
        if not items:
            return
        plan = self.plan(subject)
        if not plan:
            for hdr, msg in items:
                self._route(None, subject, None, hdr, msg)
            return
        count = len(items)
        for sub, conn, hmsg, pmsg in plan:
            if conn.closed:
                continue
            sub.nm += count
            conn.queue_frames(message_frames(hmsg, pmsg, conn.headers, items), sum(len(m) for _, m in items))

    def send_tails(self, subject: bytes, tails: list[bytes], size: int) -> None:
        plan = self._plans.get(subject)  # inlined ``plan``: every Direct Get reply comes here
        if plan is None:
            plan = self._make_plan(subject)
        if plan:
            for _, conn, _, _ in plan:
                if not conn.headers and not conn.closed:
                    break
            else:
                count = len(tails)
                for sub, conn, hmsg, _ in plan:
                    if conn.closed:
                        continue
                    sub.nm += count
                    conn.queue(join_tails(hmsg, tails), count, size)
                return
        # Somebody unusual listens (or lacks header support): frame each message for it.
        self.send_messages(subject, [split_tail(tail) for tail in tails])

    def deliver(self, subject: bytes, items: Sequence[Delivery]) -> bool:
        plan = self._plans.get(subject)  # inlined ``plan``: every consumer delivery comes here
        if plan is None:
            plan = self._make_plan(subject)
        if not plan:  # nobody, or somebody unusual: routed one message at a time
            delivered = False
            route_shown = self._route_shown
            for shown, reply, hdr, msg in items:
                if route_shown(subject, shown, reply, hdr, msg):
                    delivered = True
            return delivered
        count = len(items)
        size = sum(map(len, map(_MESSAGE, items)))
        delivered = False
        for sub, conn, _, _ in plan:
            if conn.closed:
                continue
            sub.nm += count
            conn.queue(delivery_frames(sub.sid, conn.headers, items), count, size)
            delivered = True
        return delivered

    def has_interest(self, subject: bytes) -> bool:
        if self._plans.get(subject):
            return True
        result = self._sublist.match(subject)
        return bool(result.psubs or result.qsubs)

    def pending_bytes(self, subject: bytes) -> int:
        result = self._sublist.match(subject)
        most = 0
        for group in (result.psubs, *result.qsubs):
            for sub in group:
                conn = sub.client
                if type(conn) is ClientConnection:
                    most = max(most, conn.pending_bytes())
        return most
