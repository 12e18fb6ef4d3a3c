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
not written, internal subscribers are still called, as in Go). A stream stores the
message with ``Nats-Trace-Dest: trace disabled`` and a service import forwards it so, so
nothing downstream traces it again; a stream export delivers it unchanged but untraced.
nats-server makes a stream export out of one *shadow* subscription in the exporting account
per matching subscription of the importer, in the order they subscribed: its ``se`` events
are one per importer subscription (or queue group) that takes the message, none without,
and jsemu lists them after the exporter's own subscribers (importers that subscribed last).

Cost: nothing for a message without headers; a connection checks an HPUB's header block
for ``Nats-Trace-Dest`` (and ``traceparent`` where its account has a ``msg_trace``
destination) before its fast lane (:func:`may_trace`), and only a traced message comes here,
to its own copy of the routing loop (:func:`publish_traced`), so ``Router.route`` is untouched.

jsemu adds what only an emulator knows in a top-level ``"jsemu"`` object, which clients'
decoders ignore: ``path`` (``general``: a traced message never takes the fast lane),
``internal`` (the internal subscribers that received it: ``stream:S``, ``direct_get:S``,
``service_import:<account>``, ``stream_export:<account>``, ``internal``) and ``fault`` (the
``server.control`` fault rule that held the message back, by its filter).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.encoder import OK, encode_err, go_quote
from ..protocol.gojson import dumps
from ..protocol.headers import remove_header
from ..protocol.texts import ERR_INVALID_PUBLISH_SUBJECT, ERR_PUBLISH_DENIED, ERR_PUBLISH_REPLY_DENIED
from ..protocol.trace_headers import (
    TRACE_DEST,
    TRACE_DISABLED,
    TRACE_ONLY,
    TRACE_ORIGIN_ACCOUNT,
    is_trace_only,
    trace_headers,
)
from ..subjects import is_valid_literal_subject, is_valid_subject, subject_is_literal
from ..timefmt import format_ns
from .ack_lane import ACK_PREFIX
from .imports import StreamForwarder
from .reserved import is_reserved_reply

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .routing import Router
    from .sublist import Subscription

__all__ = ["MsgTrace", "TracedSubscriber", "may_trace", "publish_traced"]

#: ``c.kind`` of a client connection in the events (``CLIENT``).
KIND_CLIENT = 0
_TRACE_PARENT_LOWER = b"traceparent"

ERR_NO_ECHO = "Not delivered because of no echo"
ERR_SUB_DENY = "Not delivered because subscription denies this subject"
ERR_SUB_CLOSED = "Not delivered because subscription is closed"
ERR_CLIENT_CLOSED = "Not delivered because client is closed"
ERR_AUTO_UNSUB = "Not delivered because auto-unsubscribe exceeded"


def _now() -> str:
    return format_ns(time.time_ns())


class MsgTrace:
    """One traced message: where its event goes and the events so far."""

    __slots__ = ("account", "dest", "event", "extra", "only")

    def __init__(self, account: Router, dest: bytes, only: bool, headers: dict[str, list[str]], size: int) -> None:
        self.account = account
        self.dest = dest
        #: ``Nats-Trace-Only``: trace, do not deliver to clients.
        self.only = only
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

    def jetstream(self, stream: str) -> dict[str, Any]:
        """The ``js`` event of the stream that takes the message, for it to complete."""
        self.internal(f"stream:{stream}")
        return self.add("js", stream=stream)

    def send(self, server: Any) -> None:
        """The event, from the server into the publisher's account (two spaces in ``MSG``:
        no reply, as nats-server's send queue writes it)."""
        body = {"server": server.envelope.server_info(), **self.event, "jsemu": self.extra}
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


def _valid_publish_subject(subject: str) -> bool:
    return is_valid_subject(subject) and subject_is_literal(subject)


def start_trace(
    conn: ClientConnection, subject: bytes, hdr: int, msg: bytes, found: tuple[dict[str, list[str]], bool]
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
    trace = MsgTrace(account, dest_bytes, only, headers, len(msg))
    trace.add(
        "in",
        kind=KIND_CLIENT,
        cid=conn.cid,
        name=str(conn.opts.get("name") or "") or None,
        acc=account.name,
        subj=subject.decode("utf-8", "replace"),
    )
    return False, trace


def _disable(hdr: int, msg: bytes) -> tuple[int, bytes]:
    """The client's ``setHeader(Nats-Trace-Dest, "trace disabled")``: the line removed and
    added again at the end of the block."""
    block = remove_header(msg[: hdr - 2], TRACE_DEST) or b"NATS/1.0\r\n"
    block += TRACE_DEST + b": " + TRACE_DISABLED + b"\r\n\r\n"
    return len(block), block + msg[hdr:]


def publish_traced(
    conn: ClientConnection, subject: bytes, reply: bytes | None, hdr: int, msg: bytes
) -> tuple[bool, int, bytes]:
    """A publish whose header block may ask for a trace: whether it was handled here
    (``_process_pub`` with the trace), else the header length and message the caller routes
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
    conn.last_in = conn.read_time
    conn.in_msgs += 1
    conn.in_bytes += len(msg)
    if trace is None:
        return True, hdr, msg
    try:
        _publish(conn, trace, subject, reply, hdr, msg)
    finally:
        trace.send(conn.server)
    return True, hdr, msg


def _publish(
    conn: ClientConnection, trace: MsgTrace, subject: bytes, reply: bytes | None, hdr: int, msg: bytes
) -> None:
    """``ClientConnection._process_pub``'s checks and routing, repeated here so that its own
    path pays nothing for tracing; a refused publish is an ingress error."""
    if conn.pedantic and not is_valid_literal_subject(subject.decode("latin-1")):
        conn.send(encode_err(ERR_INVALID_PUBLISH_SUBJECT))
    error = None
    if (
        conn.perms is not None
        and not conn.perms.can_publish(subject)
        and (conn.replies is None or not conn.replies.use(subject, conn.server.clock.now_ns()))
    ) or subject[:5] == b"$NRG.":
        error = ERR_PUBLISH_DENIED.format(go_quote(subject))
    elif reply is not None and is_reserved_reply(reply):
        error = ERR_PUBLISH_REPLY_DENIED.format(go_quote(reply))
    if error is not None:
        conn.send(encode_err(error))
        trace.ingress()["error"] = error
        return
    if conn.verbose:
        conn.send(OK)
    account = conn.account
    if account.domain_api is not None:
        subject = account.map_domain(subject)
    if account.faults.rules and account.faults.intercept(conn, subject, reply, hdr, msg):
        trace.extra["fault"] = "held back by a fault rule"
        return
    if not route_traced(trace, account, conn, subject, reply, hdr, msg) and reply and conn.no_responders:
        conn.send_no_responders(subject, reply)


def route_traced(
    trace: MsgTrace, account: Router, producer: Any, subject: bytes, reply: bytes | None, hdr: int, msg: bytes
) -> bool:
    """``Router.route`` for a traced message (``processMsgResults`` with ``deliverMsg``'s
    trace calls): the same subscriptions in the same order, each recorded."""
    if subject[:8] == ACK_PREFIX and not trace.only and account.ack_lane.deliver(subject, reply, hdr, msg):
        trace.internal("ack_lane")
        return True
    account.origin = producer
    result = account.sublist.match(subject)
    delivered = False
    exports = []
    for sub in result.psubs:
        if sub.client.__class__ is StreamForwarder:
            exports.append(sub)  # nats-server's shadow subscriptions: see the module docstring
        elif _deliver(trace, account, producer, sub, subject, reply, hdr, msg):
            delivered = True
    for sub in exports:
        if _deliver(trace, account, producer, sub, subject, reply, hdr, msg):
            delivered = True
    for group in result.qsubs:
        n = len(group)
        start = account._queue_start(subject, group)
        for i in range(n):
            if _deliver(trace, account, producer, group[(start + i) % n], subject, reply, hdr, msg):
                delivered = True
                break
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
        trace.egress(conn, sub, ERR_NO_ECHO)
        return False
    deny = getattr(client, "deny", None)
    if deny is not None and deny.any(subject):
        trace.egress(conn, sub, ERR_SUB_DENY)
        return False
    if sub.closed:
        trace.egress(conn, sub, ERR_SUB_CLOSED)
        return False
    if trace.only:
        trace.egress(conn, sub)
        return True
    if sub.max and sub.nm >= sub.max:
        trace.egress(conn, sub, ERR_AUTO_UNSUB)
        account._deliver(sub, subject, reply, hdr, msg)  # counts it and unsubscribes
        return False
    if conn.closed:
        trace.egress(conn, sub, ERR_CLIENT_CLOSED)
        return False
    trace.egress(conn, sub)
    return account._deliver(sub, subject, reply, hdr, msg)
