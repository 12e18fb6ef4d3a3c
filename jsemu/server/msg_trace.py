"""Message tracing as nats-server 2.15.1 does it (ADR-41, ``server/msgtrace.go``).

A client publishes with ``Nats-Trace-Dest: <subject>`` (or, in an account with a
``msg_trace`` destination, with a sampled W3C ``traceparent``); the server then sends one
*trace event* to that subject, in the publisher's account, as a plain message from the
server (``sendInternalAccountSysMsg``): ``{"server": <ServerInfo>, "request": {"header":
<the block as a map>, "msgsize": <header + payload>}, "events": [...]}``, the events in the
order they happened: ``in`` (ingress: the publisher, its account, the subject, a publish
permission error), ``si`` (a service import the message crossed), ``se`` (a stream export),
``js`` (the stream that took it: the stored subject, ``nointerest``, or the store's error)
and ``eg`` (egress: one per client subscription it went to, ``queue`` for a queue group,
``error`` when it was not delivered, ``acc`` when that is another account). Internal
subscribers (the JetStream API, Direct Get responders) receive a traced message without an
egress event; ``Nats-Trace-Only: true`` traces without delivering to clients (the stream is
not written, internal subscribers are still called, as in Go). The JetStream API is a service
import from the system account on nats-server: ``si`` there, and a trace-only request stops
(``jetstream/api/dispatch.py``). A stream stores the
message with ``Nats-Trace-Dest: trace disabled`` and a service import forwards it so, so
nothing downstream traces it again; a stream export delivers it unchanged but untraced.
nats-server makes a stream export out of one *shadow* subscription in the exporting account
per matching subscription of the importer: its ``se`` events are one per importer
subscription (or queue group) that takes the message, none without. (Subscriptions of one
subject node come in a Go map's order there, so events of one level may come in any order;
jsemu's order is its sublist's.)

Cost: nothing for a message without headers; a connection checks an HPUB's header block
for ``Nats-Trace-Dest`` (and ``traceparent`` where its account has a ``msg_trace``
destination) before its fast lane (:func:`may_trace`), and only a traced message comes here
(:func:`publish_traced`). Its checks are the connection's own: it goes back through
``ClientConnection.process_pub`` with its trace (one copy of the publish checks for both
paths), which routes it with this module's copy of the routing loop (:func:`route_traced`),
so ``Router.route`` is untouched.

jsemu adds what only an emulator knows in a top-level ``"jsemu"`` object, which clients'
decoders ignore: ``path`` (``general``: a traced message never takes the fast lane),
``internal`` (the internal subscribers that received it: ``stream:S``, ``direct_get:S``,
``service_import:<account>``, ``stream_export:<account>``, ``internal``) and ``fault`` (the
``server.control`` fault rule that held the message back: its ``id``, ``filter``, ``action``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.encoder import encode_err, go_quote
from ..protocol.gojson import dumps
from ..protocol.headers import remove_header
from ..protocol.texts import (
    ERR_PUBLISH_DENIED,
    TRACE_AUTO_UNSUB,
    TRACE_CLIENT_CLOSED,
    TRACE_MAX_PAYLOAD,
    TRACE_NO_ECHO,
    TRACE_SUB_CLOSED,
    TRACE_SUB_DENY,
)
from ..protocol.trace_headers import (
    TRACE_DEST,
    TRACE_DISABLED,
    TRACE_ONLY,
    TRACE_ORIGIN_ACCOUNT,
    is_trace_only,
    trace_headers,
)
from ..subjects import is_valid_subject, subject_is_literal, subject_matches
from ..timefmt import format_ns
from .ack_lane import ACK_PREFIX

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .routing import Router
    from .sublist import Subscription

__all__ = [
    "DROPPED",
    "MsgTrace",
    "TracedSubscriber",
    "intercept_traced",
    "may_trace",
    "moved_header",
    "publish_traced",
    "route_traced",
    "trace_oversized",
]

#: ``c.kind`` of a client connection and of a route in the events (``CLIENT``, ``ROUTER``).
KIND_CLIENT = 0
KIND_ROUTER = 1
#: The hop id a message crosses a route with.
TRACE_HOP = b"Nats-Trace-Hop"
_TRACE_PARENT_LOWER = b"traceparent"


def _now() -> str:
    return format_ns(time.time_ns())


class MsgTrace:
    """One traced message: where its event goes and the events so far."""

    __slots__ = ("account", "dest", "event", "extra", "hop", "hops", "only")

    def __init__(
        self, account: Router, dest: bytes, only: bool, headers: dict[str, list[str]], size: int, hop: str = ""
    ) -> None:
        self.account = account
        self.dest = dest
        #: ``Nats-Trace-Only``: trace, do not deliver to clients.
        self.only = only
        #: ``Nats-Trace-Hop`` of a message that came over a route ("" from a client).
        self.hop = hop
        #: Routes the message was sent to (``hops`` in the event).
        self.hops = 0
        self.event: dict[str, Any] = {"request": {"header": headers, "msgsize": size}, "events": []}
        #: jsemu's own details (the module docstring).
        self.extra: dict[str, Any] = {"path": "general"}

    def add(self, event_type: str, **fields: Any) -> dict[str, Any]:
        """Append an event of ``kind`` (``in``, ``si``, ``se``, ``js``, ``eg``), stamped now;
        fields that are None are left out (Go's ``omitempty``)."""
        event = {"type": event_type, "ts": _now(), **{k: v for k, v in fields.items() if v is not None}}
        self.event["events"].append(event)
        return event

    def ingress(self) -> dict[str, Any]:
        first: dict[str, Any] = self.event["events"][0]
        return first

    def internal(self, what: str) -> None:
        self.extra.setdefault("internal", []).append(what)

    def egress(self, conn: Any, sub: Subscription, error: str | None = None) -> None:
        acc = conn.account.name
        self.add(
            "eg",
            kind=KIND_CLIENT,
            cid=conn.cid,
            name=str(conn.opts.get("name") or "") or None,
            acc=acc if acc != self.ingress()["acc"] else None,
            sub=sub.subject.decode("utf-8", "replace"),
            queue=sub.queue.decode("utf-8", "replace") if sub.queue else None,
            error=error,
        )

    def route_egress(self, route: Any) -> bytes:
        """The ``eg`` event of a route the message is sent to; its hop id (``setHopHeader``),
        for the ``Nats-Trace-Hop`` header the message crosses with."""
        self.hops += 1
        nhop = f"{self.hop}.{self.hops}" if self.hop else str(self.hops)
        self.add("eg", kind=KIND_ROUTER, cid=route.rid, name=route.remote_name or None, hop=nhop)
        return nhop.encode()

    def service_import(self, account: str, subject: str, to: str) -> None:
        """An ``si`` event: the message crossed a service import into ``account``."""
        self.add("si", acc=account, **{"from": subject}, to=to)
        self.internal(f"service_import:{account}")

    def jetstream(self, stream: str) -> dict[str, Any]:
        """The ``js`` event of the stream that takes the message, for it to complete."""
        self.internal(f"stream:{stream}")
        return self.add("js", stream=stream)

    def send(self, server: Any) -> None:
        """The event, from the server into the publisher's account (two spaces in ``MSG``:
        no reply, as nats-server's send queue writes it)."""
        body: dict[str, Any] = {"server": server.envelope.server_info(), "request": self.event["request"]}
        if self.hops:
            body["hops"] = self.hops
        body |= {"events": self.event["events"], "jsemu": self.extra}
        self.account.outbound.send_via_sendq(self.dest, -1, dumps(body).encode())


class TracedSubscriber(Protocol):
    """An internal subscriber with something to say in a trace (a stream, an import)."""

    def deliver_traced(
        self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trace: MsgTrace
    ) -> bool: ...


def may_trace(account: Router, hdr: int, msg: bytes) -> bool:
    """Whether an HPUB's header block may ask for a trace (cheap: a substring search; the
    block is read properly by :func:`start_trace`)."""
    if msg.find(TRACE_DEST, 0, hdr) >= 0:
        return True
    return account.msg_trace_dest is not None and _TRACE_PARENT_LOWER in msg[:hdr].lower()


#: ``start_trace``'s answer for a ``traceparent`` publish the sampling left out.
_NOT_SAMPLED = MsgTrace.__new__(MsgTrace)
#: The trace ``ClientConnection.process_pub`` is given for a trace-only publish with no valid
#: destination: it is counted and parsed as any HPUB (pedantic), then dropped.
DROPPED = MsgTrace.__new__(MsgTrace)


def _valid_publish_subject(subject: str) -> bool:
    return is_valid_subject(subject) and subject_is_literal(subject)


def start_trace(
    conn: ClientConnection,
    subject: bytes,
    hdr: int,
    msg: bytes,
    found: tuple[dict[str, list[str]], bool],
    size: int = -1,
) -> tuple[bool, MsgTrace | None]:
    """``initMsgTrace``: whether the message must be dropped (a trace-only message whose
    trace cannot be made, or a destination the publisher may not publish to), and its trace."""
    headers, external = found
    account = conn.account
    only = False
    if not external:
        values = headers.get(TRACE_ONLY)
        only = values is not None and is_trace_only(values[0])
        dest = headers[TRACE_DEST.decode()][0]
    if TRACE_ORIGIN_ACCOUNT in headers:
        return only, None  # the caller marks the header "trace disabled" and delivers
    if external:
        if account.msg_trace_dest is None:
            return False, None
        dest = account.msg_trace_dest.decode()
        # Sampling below 100% is drawn per message (Go's rand.Int31n(100) <= sampling).
        if account.msg_trace_sampling < 100 and conn.server.rng.randrange(100) > account.msg_trace_sampling:
            return False, _NOT_SAMPLED
    if not _valid_publish_subject(dest):
        return only, None
    dest_bytes = dest.encode()
    perms = conn.perms
    if dest_bytes[:5] == b"_GR_." or (
        dest_bytes[:5] == b"$NRG." and account.name != conn.server.options.system_account
    ):
        conn.send(encode_err(ERR_PUBLISH_DENIED.format(go_quote(dest_bytes))))
        return True, None
    if perms is not None and not perms.can_publish(dest_bytes):
        conn.send(encode_err(ERR_PUBLISH_DENIED.format(go_quote(dest_bytes))))
        return True, None
    trace = MsgTrace(account, dest_bytes, only, headers, size if size >= 0 else len(msg))
    trace.add(
        "in",
        kind=KIND_CLIENT,
        cid=conn.cid,
        name=str(conn.opts.get("name") or "") or None,
        acc=account.name,
        subj=subject.decode("utf-8", "replace"),
    )
    return False, trace


def moved_header(hdr: int, msg: bytes, key: bytes, value: bytes) -> tuple[int, bytes]:
    """The client's ``setHeader(key, value)``: any ``key`` line removed and the new one
    added at the end of the block."""
    block = remove_header(msg[: hdr - 2], key) or b"NATS/1.0\r\n"
    block += key + b": " + value + b"\r\n\r\n"
    return len(block), block + msg[hdr:]


def _disable(hdr: int, msg: bytes) -> tuple[int, bytes]:
    """``Nats-Trace-Dest: trace disabled``, so that no server further on traces it."""
    return moved_header(hdr, msg, TRACE_DEST, TRACE_DISABLED)


def publish_traced(
    conn: ClientConnection, subject: bytes, reply: bytes | None, hdr: int, msg: bytes
) -> tuple[bool, int, bytes]:
    """A publish whose header block may ask for a trace: whether it was handled here
    (``process_pub`` with the trace), else the header length and message the caller routes
    as usual (a block with ``Nats-Trace-Origin-Account`` comes back marked "trace disabled")."""
    found = trace_headers(msg[:hdr])
    if found is None:
        return False, hdr, msg
    skip, trace = start_trace(conn, subject, hdr, msg, found)
    if trace is _NOT_SAMPLED or (trace is None and not skip and TRACE_ORIGIN_ACCOUNT in found[0]):
        # Delivered, marked so that no server further on traces it.
        hdr, msg = _disable(hdr, msg)
        return False, hdr, msg
    if trace is None and not skip:
        return False, hdr, msg
    try:
        conn.process_pub(subject, reply, hdr, msg, DROPPED if trace is None else trace)
    finally:
        if trace is not None:
            trace.send(conn.server)
    return True, hdr, msg


def trace_oversized(conn: ClientConnection, subject: bytes, size: int, block: bytes) -> None:
    """An HPUB over the maximum payload, about to cost the client its connection: if the
    header bytes that came with its control line ask for a trace, the event says so (an
    ``in`` with ``maximum payload exceeded``; ``sendMsgTraceIngressErrEvent``)."""
    found = trace_headers(block)
    if found is None:
        return
    _, trace = start_trace(conn, subject, len(block), block, found, size)
    if trace is not None and trace is not _NOT_SAMPLED:
        trace.ingress()["error"] = TRACE_MAX_PAYLOAD
        trace.send(conn.server)


def intercept_traced(
    trace: MsgTrace, account: Router, conn: ClientConnection, subject: bytes, reply: bytes | None, hdr: int, msg: bytes
) -> bool:
    """``FaultInjector.intercept`` for a traced publish: the rule that held it back is named in
    the trace's ``jsemu`` object."""
    text = subject.decode("utf-8", "replace")
    rule = next((f for f in account.faults.rules if subject_matches(text, f.filter)), None)
    if rule is not None and account.faults.intercept(conn, subject, reply, hdr, msg):
        trace.extra["fault"] = {"id": rule.id, "filter": rule.filter, "action": rule.action}
        return True
    return False


def route_traced(
    trace: MsgTrace,
    account: Router,
    producer: Any,
    subject: bytes,
    reply: bytes | None,
    hdr: int,
    msg: bytes,
    from_route: tuple[bytes, ...] | None = None,
) -> bool:
    """``Router.route`` for a traced message (``processMsgResults`` with ``deliverMsg``'s
    trace calls): the same subscriptions in the same order, each recorded; in a cluster,
    each route with interest gets it once with its hop id. ``from_route``: the message came
    over a route naming these queue groups, so it goes to local subscribers only."""
    if subject[:8] == ACK_PREFIX and not trace.only and account.ack_lane.deliver(subject, reply, hdr, msg):
        trace.internal("ack_lane")
        return True
    account.origin = producer
    result = account.sublist.match(subject)
    delivered = False
    #: Route -> the remote queue groups picked (``_local_then_routes`` of ``cluster.py``).
    routes: dict[Any, list[bytes]] = {}
    for sub in result.psubs:
        client = sub.client
        if hasattr(client, "send_msg"):  # a route's interest
            if from_route is None:
                routes.setdefault(client, [])
        elif _deliver(trace, account, producer, sub, subject, reply, hdr, msg):
            delivered = True
    for group in result.qsubs:
        if from_route is not None and group[0].queue not in from_route:
            continue
        n = len(group)
        start = account._queue_start(subject, group)
        for i in range(n):
            sub = group[(start + i) % n]
            if hasattr(sub.client, "send_msg"):
                if from_route is None:
                    routes.setdefault(sub.client, []).append(sub.queue or b"")
                    break
                continue
            if _deliver(trace, account, producer, sub, subject, reply, hdr, msg):
                delivered = True
                break
    for route, queues in routes.items():
        # Trace-only too: the server there traces without delivering.
        nhop = trace.route_egress(route)
        hop_hdr, hop_msg = moved_header(hdr, msg, TRACE_HOP, nhop)
        if route.send_msg(account.name.encode(), subject, reply, hop_hdr, hop_msg, queues):
            delivered = True
    return delivered


def _deliver(
    trace: MsgTrace,
    account: Router,
    producer: Any,
    sub: Subscription,
    subject: bytes,
    reply: bytes | None,
    hdr: int,
    msg: bytes,
) -> bool:
    client = sub.client
    conn: Any = getattr(client, "conn", client)
    if getattr(conn, "cid", None) is None:  # an internal subscriber: no egress event
        traced = getattr(client, "deliver_traced", None)
        if traced is not None:
            return bool(traced(sub, subject, reply, hdr, msg, trace))
        label = getattr(getattr(client, "owner", None), "label", None)  # a Direct Get responder
        trace.internal(f"direct_get:{label}" if label else "internal")
        return account._deliver(sub, subject, reply, hdr, msg)
    if conn is producer and not conn.echo:
        trace.egress(conn, sub, TRACE_NO_ECHO)
        return False
    deny = getattr(client, "deny", None)
    if deny is not None and deny.any(subject):
        trace.egress(conn, sub, TRACE_SUB_DENY)
        return False
    if sub.closed:
        trace.egress(conn, sub, TRACE_SUB_CLOSED)
        return False
    if trace.only:
        trace.egress(conn, sub)
        return True
    if sub.max and sub.nm >= sub.max:
        trace.egress(conn, sub, TRACE_AUTO_UNSUB)
        account._deliver(sub, subject, reply, hdr, msg)  # counts it and unsubscribes
        return False
    if conn.closed:
        trace.egress(conn, sub, TRACE_CLIENT_CLOSED)
        return False
    trace.egress(conn, sub)
    return account._deliver(sub, subject, reply, hdr, msg)
