"""The ``$JS.API.>`` endpoint of one account's JetStream: requests in, handlers of the table, replies out.

It sits above the service rather than inside it, so the service (streams, consumers, their
lifetimes) never names a handler: the composition root (``jsemu/app.py``) makes one
``JetStreamApi`` per account with JetStream and starts it before the service, as nats-server
subscribes its API before it restores streams. A request is routed like any message to the
account's ``$JS.API.>`` internal subscription (``jsAllAPI``), found in the table by its
tokens, answered through the account's outbound path, counted in the account's API statistics
and, while someone listens, audited (``$JS.EVENT.ADVISORY.API``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...protocol.gojson import dumps
from ...server.sublist import Subscription
from ..events.api_audit import AUDIT_SUBJECT, send_api_audit
from ..internal import InternalSubscriber
from .registry import API_PREFIX, ApiRequest, QuietError
from .table import find_handler

if TYPE_CHECKING:
    from ..context import JetStreamTrace
    from ..service import JetStream
    from .system import SystemJetStream

__all__ = ["JetStreamApi", "is_direct_get"]

_DIRECT_GET = b"$JS.API.DIRECT.GET"
_MSG_NEXT = b"$JS.API.CONSUMER.MSG.NEXT."


def is_direct_get(subject: bytes) -> bool:
    """The subjects the API import leaves alone: Direct Gets, which the streams' responders
    answer, and pull requests, which each consumer takes on its own subscription."""
    return subject.startswith((_DIRECT_GET, _MSG_NEXT))


class ApiImport(InternalSubscriber):
    """The API's subscriber: on nats-server the account's ``$JS.API.>`` is a service import
    from the system account, so a traced request shows an ``si`` event into it, and a
    trace-only one goes no further (its requester gets no responders)."""

    __slots__ = ("system_account",)

    def __init__(self, fn: Any, system_account: str) -> None:
        super().__init__(fn, skips=is_direct_get)
        #: The account the API is imported from (``$SYS`` unless ``system_account`` says).
        self.system_account = system_account

    def deliver_traced(
        self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trace: JetStreamTrace
    ) -> bool:
        if is_direct_get(subject):
            return False  # the streams' own subscriptions answer, not the import
        text = subject.decode("utf-8", "replace")
        trace.service_import(self.system_account, text, text)
        return False if trace.only else self.deliver(sub, subject, reply, hdr, msg)


class JetStreamApi:
    """The ``$JS.API.>`` subscriber of one account with JetStream."""

    def __init__(self, js: JetStream, system: SystemJetStream | None = None) -> None:
        self.js = js
        #: The system endpoints (``api/system.py``): an account may ask some of them.
        self.system = system
        api = ApiImport(self._on_request, js.server.options.system_account)
        self.sub = Subscription(api, b"$JS.API.>", None, b"$JS.API")
        #: Shut down (lame duck mode): requests are taken and answered by nothing, as
        #: nats-server's API import does once JetStream is gone.
        self.shut_down = False

    def start(self) -> None:
        self.sub.closed = False
        self.js.account.sublist.insert(self.sub)

    def stop(self) -> None:
        """No API here any more (another server of a cluster runs JetStream)."""
        self.shut_down = True
        self.sub.closed = True
        self.js.account.sublist.remove(self.sub)

    def _on_request(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool | None:
        if is_direct_get(subject):
            # Direct Get is served by the streams themselves, not by the API import (which
            # skips this byte prefix, so even ``$JS.API.DIRECT.GETX`` is left alone): a
            # stream that does not answer leaves the requester with no responders.
            return False
        js = self.js
        text = subject.decode("utf-8", "replace")
        tokens = text.split(".")
        handler = find_handler(tokens[2:]) if text.startswith(API_PREFIX) else None
        if self.shut_down:
            return True
        if handler is None:
            if self.system is not None and text.startswith(API_PREFIX):
                self._system_request(text, tokens, reply, hdr, msg)
            return True  # taken (and dropped) by the API import, like the server
        # Who asked, only while the audit advisory has a listener (read before the handler
        # routes anything itself).
        requester = js.account.requester() if js.out.has_interest(AUDIT_SUBJECT) else None
        if hdr > 0:
            headers, data = msg[:hdr], msg[hdr:]
        else:
            headers, data = b"", msg
        response = handler(js, ApiRequest(text, tokens, reply, headers, data))
        if response is None:
            return True
        if isinstance(response, bytes):  # sent directly, outside the API statistics
            body = response
            requester = None  # and outside the audit
        else:
            self._count(response)
            body = dumps(response).encode()
        if reply:
            js.send_reply(reply, body)
        if requester is not None:
            send_api_audit(js, requester, text, data, body)
        trace = js.server.trace
        if trace is not None:
            trace.append(("api", text, data, body))
        return True

    def _system_request(self, text: str, tokens: list[str], reply: bytes | None, hdr: int, msg: bytes) -> None:
        """A system endpoint asked from this account (most answer the system account only)."""
        assert self.system is not None
        js = self.js
        listening = js.out.has_interest(AUDIT_SUBJECT)
        requester = js.account.requester() if listening else None
        headers, data = (msg[:hdr], msg[hdr:]) if hdr > 0 else (b"", msg)
        bodies = self.system.answer(js.account.name, ApiRequest(text, tokens, reply, headers, data))
        for body in bodies or ():
            if reply:
                js.send_reply(reply, body)
            if requester is not None:
                send_api_audit(js, requester, text, data, body)

    def call(self, subject: str, payload: Any = None) -> dict[str, Any]:
        """Run one ``$JS.API`` request in-process, as if a client had sent it, and return
        the decoded reply (used to pre-create streams and buckets without a connection)."""
        if isinstance(payload, bytes):
            data = payload
        else:
            data = json.dumps(payload).encode() if payload is not None else b""
        tokens = subject.split(".")
        handler = find_handler(tokens[2:]) if subject.startswith(API_PREFIX) else None
        if handler is None:
            raise ValueError(f"no JetStream API handler for {subject!r}")
        response = handler(self.js, ApiRequest(subject, tokens, None, b"", data))
        if response is None:
            return {}
        if isinstance(response, bytes):
            decoded: dict[str, Any] = json.loads(response)
            return decoded
        self._count(response)
        return dict(response)

    def _count(self, response: dict[str, Any]) -> None:
        """The account's API statistics (``jsz``, account info): every counted reply, and the
        errors among them (a ``QuietError`` is answered but not counted as one)."""
        self.js.api_total += 1
        if "error" in response and not isinstance(response, QuietError):
            self.js.api_errors += 1
