"""Message routing within one account: its subscriptions, learned routes and outbound path.

nats-server gives every account its own sublist, so a message published in one account is
never matched against another's subscriptions. :class:`Router` is that per-account part:
the core server is the router of the global account ``$G`` (a server without accounts has
this one router), and each configured account (``server/accounts.py``) is a router of its
own. Connections route through the router of the account they logged in to.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .ack_lane import ACK_PREFIX
from .run_lanes import NO_INTEREST, RunLane
from .subject_mapping import SubjectMappings
from .subscriber import FastBatch

if TYPE_CHECKING:
    from .ack_lane import AckLane
    from .client_info import ClientInfo
    from .faults import FaultInjector
    from .outbound import Outbound
    from .queue_policy import QueuePolicies
    from .sublist import Sublist, Subscription

__all__ = ["GLOBAL_ACCOUNT", "Router"]

#: The account of users that are not in any configured account.
GLOBAL_ACCOUNT = "$G"

# Learned routes kept before the cache starts over.
_LEARNED_ROUTES_MAX = 1 << 18

_DOMAIN_API_GROUPS = frozenset((b"STREAM", b"CONSUMER", b"DIRECT", b"META", b"SERVER", b"ACCOUNT"))


def _owner(sub: Subscription) -> object:
    """The connection behind a subscription's subscriber when that is a filter in front of
    it (a ``DenyFilter``): its own messages are not echoed either."""
    return getattr(sub.client, "conn", None)


class Router:
    """One account's subject space: who gets a message published in it."""

    #: The account's name (``$G`` for the core server).
    name: str
    sublist: Sublist
    #: Publish subject -> the ``fast_batch`` that takes it (False: none), for
    #: connections' fast lane: the learned routes of ``learn_route``.
    learned_routes: dict[bytes, FastBatch | bool]
    #: Publish subject -> its run lane (``server/run_lanes.py``), learned with ``learned_routes``
    #: (where it is False) and cleared with them.
    run_lanes: dict[bytes, RunLane]
    #: Everything the server itself sends to a subject of this account.
    outbound: Outbound
    #: The direct route of this account's JetStream acks (``server/ack_lane.py``): it
    #: knows only this account's consumers, so an ack never crosses accounts.
    ack_lane: AckLane
    #: With a JetStream domain, the prefix of subjects mapped onto the local JetStream API.
    domain_api: bytes | None
    rng: random.Random
    queue_policies: QueuePolicies
    faults: FaultInjector
    trace: deque[tuple[Any, ...]] | None
    #: The account's ``msg_trace`` destination: where a sampled ``traceparent`` publish's
    #: trace event goes (``server/msg_trace.py``); None without one.
    msg_trace_dest: bytes | None = None
    #: ``msg_trace { sampling }``: the percentage of such publishes traced.
    msg_trace_sampling: int = 100
    #: The account's subject mappings (``server/subject_mapping.py``), applied to what its clients
    #: publish before routing; None without (the publish path checks only that).
    mappings: SubjectMappings | None = None
    #: The producer of the message ``route`` is handing out (None: the server itself); read
    #: only through :meth:`requester`, at the start of an internal subscriber's ``deliver``.
    origin: object = None

    def requester(self) -> ClientInfo | None:
        """The client whose message is being routed, as a record (``ClientInfo``), for the
        JetStream API audit; None when the server itself published it."""
        describe = getattr(self.origin, "client_record", None)
        return describe() if describe is not None else None

    def map_domain(self, subject: bytes) -> bytes:
        """nats-server's JetStream domain mappings (``generateJSMappingTable``):
        ``$JS.<d>.API.INFO`` and ``$JS.<d>.API.<STREAM|CONSUMER|DIRECT|META|SERVER|ACCOUNT>.>``
        go to ``$JS.API...``; ``$JS.<d>.API.$KV.>`` and ``.$OBJ.>`` to ``$KV.>`` and ``$OBJ.>``.
        Anything else under the prefix is left alone."""
        prefix = self.domain_api
        if prefix is None or not subject.startswith(prefix):
            return subject
        rest = subject[len(prefix) :]
        if rest == b"INFO":
            return b"$JS.API.INFO"
        head, dot, tail = rest.partition(b".")
        if not dot or not tail:
            return subject
        if head in _DOMAIN_API_GROUPS:
            return b"$JS.API." + rest
        if head in (b"$KV", b"$OBJ"):
            return rest
        return subject

    def route(self, producer: object, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """Deliver one message to every matching subscription and one member per queue
        group. Returns whether anybody received it (for no-responders)."""
        if subject[:8] == ACK_PREFIX and self.ack_lane.deliver(subject, reply, hdr, msg):
            return True
        self.origin = producer
        result = self.sublist.match(subject)
        delivered = False
        no_echo = producer is not None and not getattr(producer, "echo", True)
        for sub in result.psubs:
            if no_echo and (sub.client is producer or _owner(sub) is producer):
                continue
            if not sub.max and not sub.closed:  # the common case of _deliver, inlined
                sub.nm += 1
                if sub.client.deliver(sub, subject, reply, hdr, msg):
                    delivered = True
            elif self._deliver(sub, subject, reply, hdr, msg):
                delivered = True
        for group in result.qsubs:
            n = len(group)
            start = self._queue_start(subject, group)
            for i in range(n):
                sub = group[(start + i) % n]
                if no_echo and (sub.client is producer or _owner(sub) is producer):
                    continue
                if self._deliver(sub, subject, reply, hdr, msg):
                    delivered = True
                    break
        return delivered

    def route_shown(self, subject: bytes, shown: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """``route`` for a message the server itself sends to ``subject`` but shows with
        another subject (a consumer's delivery: the stored message's own subject); no
        producer, so no echo rule."""
        result = self.sublist.match(subject)
        delivered = False
        for sub in result.psubs:
            if self._deliver(sub, shown, reply, hdr, msg):
                delivered = True
        for group in result.qsubs:
            n = len(group)
            start = self._queue_start(subject, group)
            for i in range(n):
                if self._deliver(group[(start + i) % n], shown, reply, hdr, msg):
                    delivered = True
                    break
        return delivered

    def _queue_start(self, subject: bytes, group: list[Subscription]) -> int:
        """The member of a queue group tried first (random, unless a queue policy says)."""
        if self.queue_policies.rules:
            return self.queue_policies.start(subject, group)
        n = len(group)
        start = self.rng.randrange(n) if n > 1 else 0
        return start

    def learn_route(self, subject: bytes) -> FastBatch | bool:
        """Whether client publishes on ``subject`` can skip ``route``, and to which
        ``fast_batch``: when exactly one internal subscriber with one takes them (a stream,
        a single Direct Get responder), other internal subscribers only pass (``skips``),
        and no fault rule, trace or queue policy is in play (the contract is in
        ``server/subscriber.py``). Kept in ``learned_routes`` until the next ``Change``."""
        if subject[:8] == ACK_PREFIX:  # one-off subjects: the ack lane's, never cached
            lane = self.ack_lane
            if lane.target(subject) is not None and self._fast_lane_free():
                return lane.fast_batch
            return False
        routes = self.learned_routes
        if len(routes) >= _LEARNED_ROUTES_MAX:
            routes.clear()
            self.run_lanes.clear()
        batch = routes[subject] = self._fast_batch_for(subject) or False
        return batch

    def learn_stretch(self, subjects: Sequence[bytes], start: int) -> tuple[int, FastBatch | bool]:
        """``learn_route`` from ``subjects[start]`` on while it gives the same answer: where
        that stretch ends and the answer (a run of acks is checked by the ack lane in bulk)."""
        first = subjects[start]
        if first[:8] == ACK_PREFIX and self._fast_lane_free():
            handler = self.ack_lane.one_consumer(subjects, start)
            if handler is not None:  # the rest of the run: straight to its consumer
                return len(subjects), handler
            end = self.ack_lane.stretch(subjects, start)
            if end > start:
                return end, self.ack_lane.fast_batch
        routes = self.learned_routes
        batch = routes.get(first)
        if batch is None:
            batch = self.learn_route(first)
        end = start + 1
        n = len(subjects)
        while end < n:
            subject = subjects[end]
            nxt = routes.get(subject)
            if nxt is None:
                nxt = self.learn_route(subject)
            if nxt != batch:  # equal bound methods are one route (as ``count`` in ``_pub_run``)
                break
            end += 1
        return end, batch

    def _fast_lane_free(self) -> bool:
        """No fault rule, trace, queue policy or domain mapping in play."""
        return not (self.faults.rules or self.trace is not None or self.queue_policies.rules or self.domain_api)

    def _fast_batch_for(self, subject: bytes) -> FastBatch | None:
        if not self._fast_lane_free() or subject[:5] == b"$NRG.":
            return None
        result = self.sublist.match_uncached(subject)
        target: Subscription | None = None
        for sub in result.psubs:
            skips = getattr(sub.client, "skips", None)
            if skips is not None and skips(subject):
                continue
            if target is not None:
                return None
            target = sub
        for group in result.qsubs:
            if len(group) != 1 or target is not None:
                return None
            target = group[0]
        if target is None:  # nobody, or only subscribers that skip it
            if not result.psubs and not result.qsubs:
                self.run_lanes[subject] = NO_INTEREST
            return None
        if target.max or target.closed:
            return None
        client = target.client
        if target.queue is None:
            account_batch = getattr(client, "account_batch", None)
            if account_batch is not None:  # a route: one fast_batch per account it carries
                routed: FastBatch = account_batch(self)
                return routed
            run_lane = getattr(client, "run_lane", None)
            if run_lane is not None:  # a client: no fast_batch, a run lane (server/run_lanes.py)
                self.run_lanes[subject] = run_lane(target)
                return None
        batch: FastBatch | None = getattr(client, "fast_batch", None)
        return batch

    def _deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        if sub.closed:
            return False
        if sub.max:
            sub.nm += 1
            if sub.nm > sub.max:
                self._auto_unsubscribe(sub)
                return False
            ok = sub.client.deliver(sub, subject, reply, hdr, msg)
            if sub.nm >= sub.max:
                self._auto_unsubscribe(sub)
            return ok
        sub.nm += 1
        return sub.client.deliver(sub, subject, reply, hdr, msg)

    def _auto_unsubscribe(self, sub: Subscription) -> None:
        unsubscribe: Callable[[Subscription], None] | None = getattr(sub.client, "unsubscribe", None)
        if unsubscribe is not None:
            unsubscribe(sub)
        else:
            sub.closed = True
            self.sublist.remove(sub)
