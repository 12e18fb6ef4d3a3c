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
goes back to the requester's reply subject (a singleton response: later ones are dropped).
When nobody in the exporting account takes the request, the requester gets no responders,
for its own subject. Only accounts with imports pay for any of this: a subject with an
import subscription leaves the fast lane because the forwarder has no ``fast_batch``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

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


@dataclass(frozen=True)
class Export:
    """One entry of an account's ``exports``."""

    kind: Literal["service", "stream"]
    subject: str


@dataclass(frozen=True)
class Import:
    """One entry of an account's ``imports``: ``subject`` of ``account``, seen locally on
    ``to`` (a literal subject) or ``prefix.<subject>`` (streams), else on ``subject``."""

    kind: Literal["service", "stream"]
    account: str
    subject: str
    to: str = ""
    prefix: str = ""


class StreamForwarder:
    """In the exporting account: routes each message again in the importing account."""

    __slots__ = ("busy", "importer", "prefix", "to")

    def __init__(self, importer: Router, imp: Import) -> None:
        self.importer = importer
        self.to = imp.to.encode()
        self.prefix = imp.prefix.encode() + b"." if imp.prefix else b""
        #: Forwarding now: imports that lead back here (A imports B's, B imports A's) stop.
        self.busy = False

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        if self.busy:
            return True
        self.busy = True
        try:
            self.importer.route(None, self.to or self.prefix + subject, reply, hdr, msg)
        finally:
            self.busy = False
        return True

    def deliver_traced(
        self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trace: MsgTrace
    ) -> bool:
        """A traced message: an ``se`` event per subscription of the importer that takes it
        (nats-server's shadow subscriptions), then delivered untraced (no ``allow_trace``),
        or not at all for a trace-only message."""
        target = self.to or self.prefix + subject
        found = self.importer.sublist.match(target)
        takers = len(found.psubs) + len(found.qsubs)  # one shadow subscription each, in Go
        if not takers:
            return False
        for _ in range(takers):
            trace.add("se", acc=self.importer.name, to=target.decode("utf-8", "replace"))
        trace.internal(f"stream_export:{self.importer.name}")
        return True if trace.only else self.deliver(sub, subject, reply, hdr, msg)


class Responses:
    """In the exporting account, on ``_R_.<prefix>.*``: the first response to each forwarded
    request goes back to the requester's reply subject in the importing account."""

    __slots__ = ("importer", "pending", "prefix")

    def __init__(self, importer: Router) -> None:
        self.importer = importer
        self.prefix = b"_R_." + random_token(6) + b"."
        #: token -> the requester's reply subject.
        self.pending: dict[bytes, bytes] = {}

    def reply_for(self, reply: bytes) -> bytes:
        token = random_token(6)
        pending = self.pending
        if len(pending) >= _PENDING_MAX:
            del pending[next(iter(pending))]
        pending[token] = reply
        return self.prefix + token

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        original = self.pending.pop(subject[len(self.prefix) :], None)
        if original is not None:
            self.importer.route(None, original, reply, hdr, msg)
        return True


class ServiceForwarder:
    """In the importing account, on the local subject: forwards requests to the exporter."""

    __slots__ = ("busy", "exporter", "importer", "info_head", "mapping", "responses", "subject")

    def __init__(self, importer: Router, exporter: Router, imp: Import, responses: Responses) -> None:
        self.importer = importer
        self.exporter = exporter
        #: The exported subject when the import renames a literal one (``to``).
        self.subject = imp.subject.encode() if imp.to else b""
        #: ``to`` with wildcards: each wildcard's tokens land in the exported subject's same
        #: wildcard (``$JS.A.API.>`` -> ``$JS.API.>``, ``local.*.y`` -> ``svc.*.x``).
        self.mapping: SubjectTransform | None = None
        if imp.to and not subject_is_literal(imp.to):
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
        if self.busy:
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
        forwarded = self.responses.reply_for(reply) if reply else None
        target = self._target(subject)
        delivered = self.exporter.route(None, target, forwarded, len(block), block + body)
        if not delivered and forwarded is not None:
            self.responses.pending.pop(forwarded[len(self.responses.prefix) :], None)
        return delivered


def wire_imports(routers: dict[str, Router], imports: Mapping[str, Sequence[Import]]) -> Wiring:
    """Subscribe the forwarders of every account's imports (``imports``: by importing account);
    the subscriptions made, for :func:`unwire_imports`."""
    wiring: Wiring = []
    for name, entries in imports.items():
        importer = routers[name]
        responses: dict[str, Responses] = {}
        for imp in entries:
            exporter = routers[imp.account]
            if imp.kind == "stream":
                sub = Subscription(StreamForwarder(importer, imp), imp.subject.encode(), None, b"$IMPORT")
                exporter.sublist.insert(sub)
                wiring.append((exporter, sub))
                continue
            answers = responses.get(imp.account)
            if answers is None:
                answers = responses[imp.account] = Responses(importer)
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
