"""Service and stream imports between accounts, routed as nats-server routes them.

A *stream import* (``{stream: {account: A, subject: "feed.>"}, prefix: "p"}`` or ``to:``) is
an internal subscription in the exporting account: every message published there on the
subject is routed again in the importing account, on ``p.<subject>`` (or ``to``), with its
reply subject and headers unchanged.

A *service import* (``{service: {account: A, subject: "svc.x"}, to: "local.x"}``) is an
internal subscription in the importing account on ``to`` (or the subject): a request is
routed in the exporting account on the exported subject, with a ``Nats-Request-Info``
header (``{"acc":"<importer>","rtt":<ns>}``) added after the request's own headers and the
reply subject replaced by ``_R_.<prefix>.<token>``; the first message to that reply subject
goes back to the requester's reply subject (a singleton response: later ones are dropped). An
export whose ``response_type`` is ``Stream`` or ``Chunked`` keeps the mapping: every response
goes back until one is not delivered, an empty message (no headers, no body) ends it, or none
came for the export's response threshold (nats-server's default two minutes; its sweeper drops a
mapping between one and two thresholds after its last response, jsemu at the first response
later than one, on the server's clock).
When nobody in the exporting account takes the request, the requester gets no responders,
for its own subject. Only accounts with imports pay for any of this: a subject with an
import subscription leaves the fast lane because the forwarder has no ``fast_batch``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..ids import random_token
from ..protocol.gojson import dumps
from ..protocol.headers import remove_header
from ..protocol.trace_headers import TRACE_DEST, TRACE_DISABLED
from ..subject_transform import SubjectTransform
from ..subjects import subject_is_literal
from .sublist import Subscription

if TYPE_CHECKING:
    from .msg_trace import MsgTrace
    from .routing import Router

__all__ = ["Export", "Import", "Wiring", "unwire_imports", "wire_imports"]

#: The subscriptions one wiring of imports made: each with the router whose sublist holds it.
Wiring = list[tuple["Router", Subscription]]

#: Requests waiting for their response, per (importer, exporter), before the oldest is forgotten.
_PENDING_MAX = 100_000

#: nats-server's ``DEFAULT_SERVICE_EXPORT_RESPONSE_THRESHOLD``: how long a response may take.
RESPONSE_THRESHOLD_NS = 120_000_000_000

#: A service export's response types that allow more than one response.
MULTIPLE_RESPONSES = frozenset({"Stream", "Chunked"})


@dataclass(frozen=True)
class Export:
    """One entry of an account's ``exports``."""

    kind: Literal["service", "stream"]
    subject: str
    #: A service's ``response_type`` (``""``: Singleton) and response threshold (ns; 0: default).
    response: str = ""
    threshold_ns: int = 0
    #: An account JWT's: importers need an activation token, revoked up to these times
    #: (importer key or ``*``, unix seconds).
    token_req: bool = False
    revocations: tuple[tuple[str, int], ...] = ()
    #: ``account_token_position``: the (1-based) token of the subject that must be the
    #: importer's own account key (then no activation token is needed); 0: none.
    token_position: int = 0


@dataclass(frozen=True)
class Import:
    """One entry of an account's ``imports``: ``subject`` of ``account``, seen locally on
    ``to`` (a literal subject) or ``prefix.<subject>`` (streams), else on ``subject``."""

    kind: Literal["service", "stream"]
    account: str
    subject: str
    to: str = ""
    prefix: str = ""
    #: A service: the export's ``response_type`` (``""``: Singleton) and response threshold
    #: (ns; 0: nats-server's default).
    response: str = ""
    threshold_ns: int = 0
    #: When the activation token the import holds by expires (unix seconds; 0: never): the
    #: import stops forwarding then, as nats-server removes it (its clients stay connected).
    expires: int = 0
    #: A service import's exporter subject with ``$N`` references to the wildcards of ``to``
    #: (a JWT ``local_subject`` that reorders them); empty: the wildcards in order.
    mapped: str = ""


class StreamForwarder:
    """In the exporting account: routes each message again in the importing account."""

    __slots__ = ("busy", "expires_ns", "importer", "mapping", "now_ns", "prefix", "to")

    def __init__(self, importer: Router, imp: Import, now_ns: Callable[[], int] = time.time_ns) -> None:
        self.importer = importer
        self.now_ns = now_ns
        self.expires_ns = imp.expires * 1_000_000_000
        self.to = imp.to.encode()
        self.prefix = imp.prefix.encode() + b"." if imp.prefix else b""
        #: ``to`` of a wildcard import: its ``$N`` references (and ``>``) filled from the
        #: subject, as nats-server's stream import transform (``feed.*.b`` -> ``lb.$1``).
        self.mapping = SubjectTransform(imp.subject, imp.to) if imp.to and not subject_is_literal(imp.subject) else None
        #: Forwarding now: imports that lead back here (A imports B's, B imports A's) stop.
        self.busy = False

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        if self.busy:
            return True
        if self.expires_ns and self.now_ns() >= self.expires_ns:
            return False
        self.busy = True
        try:
            self.importer.route(None, self._target(subject), reply, hdr, msg)
        finally:
            self.busy = False
        return True

    def deliver_traced(
        self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trace: MsgTrace
    ) -> bool:
        """A traced message: an ``se`` event per subscription of the importer that takes it
        (nats-server's shadow subscriptions), then delivered untraced (no ``allow_trace``),
        or not at all for a trace-only message."""
        if self.expires_ns and self.now_ns() >= self.expires_ns:
            return False
        target = self._target(subject)
        found = self.importer.sublist.match(target)
        takers = len(found.psubs) + len(found.qsubs)  # one shadow subscription each, in Go
        if not takers:
            return False
        for _ in range(takers):
            trace.add("se", acc=self.importer.name, to=target.decode("utf-8", "replace"))
        trace.internal(f"stream_export:{self.importer.name}")
        return True if trace.only else self.deliver(sub, subject, reply, hdr, msg)

    def _target(self, subject: bytes) -> bytes:
        if self.mapping is not None:
            return self.mapping.match(subject) or self.to
        return self.to or self.prefix + subject


class Responses:
    """In the exporting account, on ``_R_.<prefix>.*``: the response to each forwarded request
    goes back to the requester's reply subject in the importing account (the first one only,
    unless the export streams its responses)."""

    __slots__ = ("importer", "now_ns", "pending", "prefix")

    def __init__(self, importer: Router, now_ns: Callable[[], int]) -> None:
        self.importer = importer
        self.now_ns = now_ns
        self.prefix = b"_R_." + random_token(6) + b"."
        #: token -> [the requester's reply subject, more than one response, threshold (ns),
        #: when the request or the last response went through (ns)].
        self.pending: dict[bytes, list[Any]] = {}

    def reply_for(self, reply: bytes, imp: Import) -> bytes:
        token = random_token(6)
        pending = self.pending
        if len(pending) >= _PENDING_MAX:
            del pending[next(iter(pending))]
        threshold = imp.threshold_ns or RESPONSE_THRESHOLD_NS
        pending[token] = [reply, imp.response in MULTIPLE_RESPONSES, threshold, self.now_ns()]
        return self.prefix + token

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        token = subject[len(self.prefix) :]
        entry = self.pending.get(token)
        if entry is None:
            return True
        original, multiple, threshold, since = entry
        now = self.now_ns()
        if now - since > threshold:
            del self.pending[token]
            return True
        if not multiple:
            del self.pending[token]
            self.importer.route(None, original, reply, hdr, msg)
            return True
        if not self.importer.route(None, original, reply, hdr, msg) or not msg:
            self.pending.pop(token, None)  # nobody took it, or an empty message: the end
        else:
            entry[3] = now
        return True


class ServiceForwarder:
    """In the importing account, on the local subject: forwards requests to the exporter."""

    __slots__ = ("busy", "exporter", "imp", "importer", "info_head", "mapping", "responses", "subject")

    def __init__(self, importer: Router, exporter: Router, imp: Import, responses: Responses) -> None:
        self.importer = importer
        self.exporter = exporter
        self.imp = imp
        #: The exported subject when the import renames a literal one (``to``).
        self.subject = imp.subject.encode() if imp.to else b""
        #: ``to`` with wildcards: each wildcard's tokens land in the exported subject's same
        #: wildcard (``$JS.A.API.>`` -> ``$JS.API.>``, ``local.*.y`` -> ``svc.*.x``).
        self.mapping: SubjectTransform | None = None
        if imp.mapped:
            self.mapping = SubjectTransform(imp.to, imp.mapped)
        elif imp.to and not subject_is_literal(imp.to):
            dest, n = [], 0
            for token in imp.subject.split("."):
                if token == "*":
                    n += 1
                    token = f"${n}"
                dest.append(token)
            self.mapping = SubjectTransform(imp.to, ".".join(dest))
        self.responses = responses
        self.info_head = b'Nats-Request-Info: {"acc":' + dumps(importer.name).encode() + b',"rtt":'
        #: Forwarding now: a service import that leads back here stops.
        self.busy = False

    def _rtt_ns(self, reply: bytes | None) -> int:
        """The requester's round-trip time: the connection subscribed to the reply subject."""
        if reply is not None:
            for sub in self.importer.sublist.match(reply).psubs:
                rtt = getattr(sub.client, "rtt", None)
                if rtt is not None:
                    return int(rtt * 1e9)
        return 0

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        if self.busy or (self.imp.expires and self.responses.now_ns() >= self.imp.expires * 1_000_000_000):
            return False
        self.busy = True
        try:
            return self._forward(subject, reply, hdr, msg)
        finally:
            self.busy = False

    def deliver_traced(
        self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trace: MsgTrace
    ) -> bool:
        """A traced request: an ``si`` event, then forwarded with ``Nats-Trace-Dest: trace
        disabled`` after ``Nats-Request-Info`` (no ``allow_trace``: the exporter's side is
        not traced), or not at all for a trace-only message."""
        target = self._target(subject)
        trace.service_import(self.exporter.name, subject.decode("utf-8", "replace"), target.decode())
        if trace.only or self.busy:
            return True
        block = remove_header(msg[: hdr - 2], TRACE_DEST) or b"NATS/1.0\r\n"
        self.busy = True
        try:
            trailer = TRACE_DEST + b": " + TRACE_DISABLED + b"\r\n"
            return self._forward(subject, reply, len(block) + 2, block + msg[hdr - 2 :], trailer)
        finally:
            self.busy = False

    def _target(self, subject: bytes) -> bytes:
        target = self.subject or subject
        if self.mapping is not None:
            target = self.mapping.match(subject) or target
        return target

    def _forward(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trailer: bytes = b"") -> bool:
        line = self.info_head + str(self._rtt_ns(reply)).encode() + b"}\r\n" + trailer + b"\r\n"
        if hdr > 0:
            block = msg[: hdr - 2] + line
            body = msg[hdr:]
        else:
            block = b"NATS/1.0\r\n" + line
            body = msg
        forwarded = self.responses.reply_for(reply, self.imp) if reply else None
        target = self._target(subject)
        delivered = self.exporter.route(None, target, forwarded, len(block), block + body)
        if not delivered and forwarded is not None:
            self.responses.pending.pop(forwarded[len(self.responses.prefix) :], None)
        return delivered


def wire_imports(
    routers: dict[str, Router], imports: Mapping[str, Sequence[Import]], now_ns: Callable[[], int] = time.time_ns
) -> Wiring:
    """Subscribe the forwarders of every account's imports (``imports``: by importing account);
    the subscriptions made, for :func:`unwire_imports`. ``now_ns``: the server's clock (unix ns),
    which response thresholds and activation expiry count on."""
    wiring: Wiring = []
    for name, entries in imports.items():
        importer = routers[name]
        responses: dict[str, Responses] = {}
        for imp in entries:
            exporter = routers[imp.account]
            if imp.kind == "stream":
                sub = Subscription(StreamForwarder(importer, imp, now_ns), imp.subject.encode(), None, b"$IMPORT")
                exporter.sublist.insert(sub)
                wiring.append((exporter, sub))
                continue
            answers = responses.get(imp.account)
            if answers is None:
                answers = responses[imp.account] = Responses(importer, now_ns)
                sub = Subscription(answers, answers.prefix + b"*", None, b"$IMPORT")
                exporter.sublist.insert(sub)
                wiring.append((exporter, sub))
            local = (imp.to or imp.subject).encode()
            sub = Subscription(ServiceForwarder(importer, exporter, imp, answers), local, None, b"$IMPORT")
            importer.sublist.insert(sub)
            wiring.append((importer, sub))
    return wiring


def unwire_imports(wiring: Wiring) -> None:
    """Remove what :func:`wire_imports` subscribed (a reload's imports replace them all, as
    nats-server's ``configureAccounts`` replaces an account's service imports)."""
    for router, sub in wiring:
        sub.closed = True
        router.sublist.remove(sub)
