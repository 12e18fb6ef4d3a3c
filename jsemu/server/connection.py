"""One client connection: feeds bytes to the parser and carries out the ops.

Theory of operation
-------------------
``data_received`` parses everything that arrived and handles each op at once; every
reply and delivery is appended to the receiving connection's outbound list, and all
touched connections are flushed with one ``transport.write`` each when the read has been
handled (or, for work that does not start from a read, on the next loop turn).

The rules follow nats-server's ``client.go``:

* options come from CONNECT decoded over the previous options (defaults: verbose,
  pedantic and echo on); a second CONNECT drops the connection's subscriptions;
* errors the server reports and survives (``Invalid Subject``, permission violations,
  ``Invalid Publish Subject``) are sent as ``-ERR`` and the connection goes on; errors
  in the byte stream close it, with a ``-ERR`` only where the server sends one;
* a client whose outbound buffer passes ``max_pending`` is cut (slow consumer) and
  nobody else waits for it; so is one whose socket does not take buffered output within
  ``write_deadline`` (``server/write_deadline.py``);
* the server PINGs an idle client every ``ping_interval`` and closes it with
  ``Stale Connection`` after ``max_pings_out`` unanswered PINGs.
"""

from __future__ import annotations

import asyncio
import logging
import random
import ssl
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..protocol import gojson
from ..protocol.encoder import (
    OK,
    PING,
    PONG,
    encode_err,
    encode_hmsg,
    encode_info,
    encode_msg,
    encode_no_responders,
    go_quote,
)
from ..protocol.ops import Connect, Err, HMsg, Info, Ok, Ping, Pong, ProtocolError, PubRun, Sub, Unsub
from ..protocol.parser import AnyOp, Parser
from ..protocol.texts import (
    ERR_AUTHENTICATION_TIMEOUT,
    ERR_AUTHORIZATION_VIOLATION,
    ERR_INVALID_CLIENT_PROTOCOL,
    ERR_INVALID_PUBLISH_SUBJECT,
    ERR_INVALID_SUBJECT,
    ERR_MAX_CONNECTIONS,
    ERR_MAX_SUBSCRIPTIONS,
    ERR_NO_RESPONDERS_NEEDS_HEADERS,
    ERR_PUBLISH_DENIED,
    ERR_PUBLISH_REPLY_DENIED,
    ERR_STALE_CONNECTION,
    ERR_SUBSCRIBE_DENIED,
    ERR_SUBSCRIBE_QUEUE_DENIED,
    ERR_USER_AUTHENTICATION_EXPIRED,
)
from ..subjects import is_valid_literal_subject
from .account_lookups import look_up
from .advertise import join_host_port
from .auth import DEFAULT_AUTH_TIMEOUT, Auth, User
from .auth_callout import CalloutUser, in_callout_account, with_callout_deny
from .auth_errors import announce_dropped, announce_refusal
from .client_info import ClientInfo
from .closed import READ_ERROR, WRITE_ERROR
from .jwt_session import admit
from .msg_trace import DROPPED, MsgTrace, intercept_traced, may_trace, publish_traced, route_traced, trace_oversized
from .nkeys import new_nonce
from .operator_auth import JwtUser
from .permissions import DeliveryFilter, Permissions
from .reserved import is_reserved_reply as _is_reserved_reply
from .responses import ReplyPermits
from .run_lanes import ClientLane
from .sublist import Subscription
from .subscriber import Change
from .timers import Cancellable
from .websocket_transport import WebSocketTransport
from .write_deadline import cut_slow_writer, watch_writes

if TYPE_CHECKING:
    from .auth_callout import AuthCallout
    from .auth_callout_settings import CalloutSettings
    from .node import Node
    from .routing import Router
    from .server import Server

__all__ = ["CONNECT_SPEC", "ClientConnection"]

log = logging.getLogger("jsemu.server")
#: ``extra`` of a log record that ``jsemu serve`` prints as ``[ERR]`` although it is not an
#: internal error (bad input or a limit: nats-server logs those as errors).
NATS_ERR = {"nats_level": "ERR"}
_NATS_INF = {"nats_level": "INF"}

SYS_QUEUE = b"_sys_"

CONNECT_SPEC = gojson.StructSpec(
    {
        "echo": gojson.go_bool,
        "verbose": gojson.go_bool,
        "pedantic": gojson.go_bool,
        "tls_required": gojson.go_bool,
        "nkey": gojson.go_string,
        "jwt": gojson.go_string,
        "sig": gojson.go_string,
        "auth_token": gojson.go_string,
        "user": gojson.go_string,
        "pass": gojson.go_string,
        "name": gojson.go_string,
        "lang": gojson.go_string,
        "version": gojson.go_string,
        "protocol": gojson.go_int,
        "account": gojson.go_string,
        "new_account": gojson.go_bool,
        "headers": gojson.go_bool,
        "no_responders": gojson.go_bool,
        "import": gojson.go_any,
        "export": gojson.go_any,
        "remote_account": gojson.go_string,
        "proxy_sig": gojson.go_string,
    }
)

_DEFAULT_OPTIONS: dict[str, Any] = {"verbose": True, "pedantic": True, "echo": True, "protocol": 0}
_EMPTY_JSON_SPEC = gojson.StructSpec({})
_FIRST_PING_MAX = 2.0  # nats-server's firstClientPingInterval
_RTT_INTERVAL = 3600.0  # nats-server's DEFAULT_RTT_MEASUREMENT_INTERVAL
_STALL = 0.010  # nats-server stalls a fast producer for up to 10ms per read


class ClientConnection(asyncio.Protocol):
    __slots__ = (
        "account",
        "announced",
        "auth_source",
        "auth_timer",
        "awaiting_auth",
        "callout_wait",
        "cid",
        "client_ip",
        "client_port",
        "closed",
        "connect_received",
        "dirty",
        "echo",
        "expiry_timer",
        "farewell",
        "first_pong_sent",
        "handed",
        "handshaking",
        "headers",
        "held",
        "in_bytes",
        "in_msgs",
        "info_base",
        "last_in",
        "max_subs",
        "no_responders",
        "node",
        "nonce",
        "opts",
        "out",
        "out_bytes",
        "out_msgs",
        "parser",
        "pedantic",
        "perms",
        "ping_handle",
        "pings_out",
        "read_time",
        "replies",
        "rtt",
        "rtt_start",
        "server",
        "start_ns",
        "subs",
        "transport",
        "user",
        "verbose",
        "write_batch",
        "write_mark",
        "write_timer",
    )

    def __init__(self, server: Server, node: Node) -> None:
        self.server = server
        #: The listener it came in on: the server identity it sees (``server/node.py``).
        self.node = node
        #: Where this client's messages are routed: its account (``$G``: the server).
        self.account: Router = server
        self.cid = server.next_client_id()
        self.transport: asyncio.Transport | None = None
        opts = server.options
        self.parser = Parser(opts.max_control_line, opts.max_payload)
        self.opts: dict[str, Any] = dict(_DEFAULT_OPTIONS)
        self.echo = True
        self.verbose = True
        self.pedantic = True
        self.headers = False
        self.no_responders = False
        self.connect_received = False
        self.first_pong_sent = False
        self.subs: dict[bytes, Subscription] = {}
        self.closed = False
        self.out: list[bytes] = []
        self.dirty = False
        self.pings_out = 0
        self.last_in = 0.0
        self.read_time = 0.0
        self.ping_handle: asyncio.TimerHandle | None = None
        self.rtt_start: float | None = None
        #: Last measured round-trip time (seconds), for /connz.
        self.rtt = 0.0
        self.start_ns = time.time_ns()
        self.in_msgs = self.in_bytes = self.out_msgs = self.out_bytes = 0
        #: Bytes handed to the transport so far, and the write deadline's open batch: the
        #: count the transport must have written past, its size, its timer (``None``: no
        #: output buffered when last looked).
        self.handed = self.write_mark = self.write_batch = 0
        self.write_timer: Cancellable | None = None
        self.client_ip = ""
        self.client_port = 0
        #: Authentication (server/auth.py): the first byte is not looked at yet; the timer
        #: closes a client that sends no CONNECT in time; the user it logged in as.
        self.awaiting_auth = server.options.auth is not None
        self.auth_timer: Cancellable | None = None
        #: Its CONNECT waits for the auth callout's answer: nothing more is read meanwhile.
        self.callout_wait = False
        #: A TLS handshake is under way: output waits (server/tls.py).
        self.handshaking = False
        #: What to write before closing once the handshake hands over its transport, when the
        #: connection was closed by bytes that came with the handshake's end.
        self.farewell: bytes | None = None
        self.user: User | None = None
        #: The account resolver's lookup of this user's account (``server/resolver_peers.py``):
        #: 0 none yet, 1 the CONNECT waits for it (reading paused), 2 done.
        self.held = 0
        #: Its ``$SYS.ACCOUNT.<acc>.CONNECT`` event went out (the disconnect one follows).
        self.announced = False
        #: The nonce an nkey user signs (in INFO when nkey users are configured).
        self.nonce = new_nonce() if server.options.auth is not None and server.options.auth.wants_nonce else ""
        #: Operator mode (server/jwt_session.py): the user JWT's subscription cap (-1: the
        #: server's) and the timer its ``exp`` set.
        self.max_subs = -1
        self.expiry_timer: Cancellable | None = None
        #: The user's permissions (server/permissions.py); ``None``: no checks at all.
        self.perms: Permissions | None = None
        #: Reply subjects ``allow_responses`` lets it publish to (server/responses.py).
        self.replies: ReplyPermits | None = None
        #: The INFO fields of its listener when not the node's (a WebSocket client's).
        self.info_base: dict[str, Any] | None = None
        #: Its listener's authentication when not the server's (``websocket { authorization }``).
        self.auth_source: Callable[[], Auth | None] | None = None

    # --- asyncio.Protocol -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        if peer:
            self.client_ip, self.client_port = peer[0], peer[1]
            if self.client_ip.startswith("::ffff:") and "." in self.client_ip:
                self.client_ip = self.client_ip[7:]  # an IPv4 client of the dual-stack listener, as Go shows it
        server = self.server
        server.add_connection(self)
        tls = server.tls_context
        if tls is None or isinstance(transport, WebSocketTransport):  # wss: TLS before the upgrade
            self.send(encode_info(server.client_info(self)))
            self._start_session()
            return
        # TLS (server/tls.py): INFO in the clear unless the handshake comes first; no other
        # output until the handshake is done.
        options = server.options.tls
        assert options is not None
        if not options.handshake_first:
            self.send(encode_info(server.client_info(self)))
            server.flush()
        self.handshaking = True
        transport.pause_reading()
        server.loop.create_task(self._tls_handshake(transport, tls, options.timeout, options.handshake_first))

    async def _tls_handshake(
        self, raw: asyncio.Transport, context: ssl.SSLContext, timeout: float, info_after: bool
    ) -> None:
        try:
            secure = await self.server.loop.start_tls(
                raw, self, context, server_side=True, ssl_handshake_timeout=timeout
            )
        except (OSError, RuntimeError) as exc:  # failed, timed out: nats-server closes without a word
            log.debug("TLS handshake error from %s:%s: %r", self.client_ip, self.client_port, exc)
            secure = None
        if secure is not None and self.farewell is not None:
            secure.write(self.farewell)  # e.g. -ERR 'Authorization Violation' for its CONNECT
            secure.close()
            return
        if secure is None or self.closed:
            self._teardown()
            raw.abort()
            if secure is not None:
                secure.abort()
            return
        self.transport = secure
        self.handshaking = False
        if info_after:
            self.send(encode_info(self.server.client_info(self)))
        self.flush()  # what waited for the handshake
        self._start_session()

    def _start_session(self) -> None:
        """The authentication timer (after any TLS handshake, as nats-server) and the first PING."""
        server = self.server
        limit = server.options.max_connections
        if 0 < limit < len(server.connections):  # this one is counted already
            self._client_error(ERR_MAX_CONNECTIONS)
            self.close_with_error(ERR_MAX_CONNECTIONS)
            return
        auth = self.current_auth()
        if auth is not None:
            timeout = auth.timeout
            if timeout is None:
                tls = server.options.tls
                timeout = tls.timeout + 1.0 if tls is not None else DEFAULT_AUTH_TIMEOUT
            self.auth_timer = server.timers.at(server.clock.now_ns() + round(timeout * 1e9), self._auth_timeout)
        self._set_first_ping_timer()
        server.flush()

    def data_received(self, data: bytes) -> None:
        if self.closed or (self.awaiting_auth and not self._first_byte(data)):
            return
        server = self.server
        self.read_time = server.loop_time()  # one clock read per read, not per op
        parser = self.parser
        ops = parser.feed_list(data)
        while ops:
            self._handle(ops)
            if self.closed or not parser.resume or self.held == 1 or self.callout_wait:
                break
            ops = parser.feed_list(b"")  # the rest of a read that held a CONNECT
        server.flush()
        if server.stall and not self.closed:
            self._stall(server.stall)
            server.stall = 0.0

    def _first_byte(self, data: bytes) -> bool:
        """nats-server (parser.go): on a server that requires auth, the first op must be a
        CONNECT, or the ``no_auth_user`` logs in; else ``Authorization Violation``."""
        if not data:
            return False
        self.awaiting_auth = False
        if data[:1] in (b"C", b"c"):
            return True
        auth = self.current_auth()
        user = auth.default_user() if auth is not None else None
        if user is None:
            announce_refusal(self, None)
            self.close_with_error(ERR_AUTHORIZATION_VIOLATION)
            self.server.flush()
            return False
        self._log_in(user)
        self.connect_received = True
        self._cancel_auth_timer()
        return True

    def current_auth(self) -> Auth | None:
        """The authentication this client's listener requires (None: none)."""
        return self.server.options.auth if self.auth_source is None else self.auth_source()

    def _log_in(self, user: User) -> None:
        self.user = user
        self.account = self.server.account_space.router_for(user.account)
        perms = self.perms = user.permissions
        self.replies = ReplyPermits(perms.response) if perms is not None and perms.response is not None else None

    def _auth_timeout(self) -> None:
        self.auth_timer = None
        self.close_with_error(ERR_AUTHENTICATION_TIMEOUT)
        self.server.flush()

    def _cancel_auth_timer(self) -> None:
        if self.auth_timer is not None:
            self.auth_timer.cancel()
            self.auth_timer = None

    def _fast_lane(self) -> bool:
        """Whether publishes may go straight to a learned route (see
        ``server/subscriber.py``): nothing per message to check for this connection
        (no +OK, no pedantic checks, no permissions, no domain mapping)."""
        return not self.verbose and not self.pedantic and self.perms is None and self.account.domain_api is None

    def _handle(self, ops: list[AnyOp]) -> None:
        server = self.server
        trace = server.trace
        account = self.account
        routes = account.learned_routes
        fast = self._fast_lane() and account.mappings is None  # mapped publishes take process_pub
        ok_reply = b""  # the last reply subject found not to be reserved
        n_msgs = n_bytes = 0
        i = 0
        n = len(ops)
        while i < n:
            op = ops[i]
            i += 1
            cls = op.__class__
            if cls is PubRun:
                if not self._pub_run(op, fast):  # type: ignore[arg-type]
                    self._handle(op.pubs())  # type: ignore[union-attr]  # one by one (and traced)
                continue
            if trace is not None:
                trace.append(("op", self.cid, op))  # formatted only if somebody looks
            if cls is tuple:  # PUB or HPUB
                subject, reply, hdr, msg = op  # type: ignore[misc]
                if hdr > 0 and may_trace(account, hdr, msg):  # ADR-41 (server/msg_trace.py)
                    handled, hdr, msg = publish_traced(self, subject, reply, hdr, msg)
                    if not handled:
                        self.process_pub(subject, reply, hdr, msg)
                    if self.closed:
                        break
                    continue
                if fast:
                    batch = routes.get(subject)
                    if batch is None:
                        batch = account.learn_route(subject)
                    if batch and (reply is None or reply == ok_reply or not _is_reserved_reply(reply)):
                        # The fast lane: what process_pub and route would do, minus the checks
                        # that cannot apply (see server/subscriber.py), for this publish and
                        # the ones after it that go to the same fast_batch.
                        if reply is not None:
                            ok_reply = reply
                        start = i - 1
                        n_bytes += len(msg)
                        while i < n:
                            nxt = ops[i]
                            if nxt.__class__ is not tuple:
                                break
                            next_batch = routes.get(nxt[0])
                            if next_batch is None:
                                next_batch = account.learn_route(nxt[0])
                            if next_batch is not batch or (nxt[2] > 0 and may_trace(account, nxt[2], nxt[3])):
                                break
                            reply = nxt[1]
                            if reply is not None and reply != ok_reply:
                                if _is_reserved_reply(reply):
                                    break
                                ok_reply = reply
                            n_bytes += len(nxt[3])
                            i += 1
                        n_msgs += i - start
                        subjects, replies, hdrs, msgs = zip(*ops[start:i])
                        try:
                            batch(subjects, replies, hdrs, msgs)  # type: ignore[operator]
                        except Exception:
                            log.exception("internal handler failed for %r", subject)
                        continue
                self.process_pub(subject, reply, hdr, msg)
            elif cls is Sub:
                self._process_sub(op)  # type: ignore[arg-type]
            elif cls is Unsub:
                self._process_unsub(op)  # type: ignore[arg-type]
            elif cls is Ping:
                self._process_ping()
            elif cls is Pong:
                self.pings_out = 0
                if self.rtt_start is not None:
                    self.rtt = max(0.0, self.read_time - self.rtt_start)
            elif cls is Connect:
                # The last op of its batch (see Parser.resume): the next batch sees the new options.
                self._process_connect(op)  # type: ignore[arg-type]
            elif cls is Ok:
                pass
            elif cls is HMsg:
                if self.verbose:
                    self.send(OK)
            elif cls is Info:
                try:
                    gojson.decode_struct(op.info, _EMPTY_JSON_SPEC)  # type: ignore[union-attr]
                except gojson.GoJSONError:
                    self.close_with_error(None)
            elif cls is Err:
                self.close_with_error(None)
            elif cls is ProtocolError:
                if op.oversized is not None:  # type: ignore[union-attr]  # ADR-41: it may ask for a trace
                    trace_oversized(self, *op.oversized)  # type: ignore[union-attr]
                self.close_with_error(op.error)  # type: ignore[union-attr]
            if self.closed:
                break
        if n_msgs:
            self.in_msgs += n_msgs
            self.in_bytes += n_bytes
            self.last_in = self.read_time

    def _stall(self, seconds: float) -> None:
        """Stop reading from this (fast) producer for a moment so consumers catch up."""
        transport = self.transport
        assert transport is not None
        transport.pause_reading()
        self.server.loop.call_later(seconds, self._unstall)

    def _unstall(self) -> None:
        if not self.closed and self.transport is not None:
            self.transport.resume_reading()

    def eof_received(self) -> None:
        """The client closed its side: it leaves routing now, not when asyncio gets round
        to ``connection_lost`` (nats-server's read loop closes on EOF, ``Client Closed``,
        and flushes what is queued first: only read and write errors skip that); the
        transport then closes itself."""
        if not self.closed and not self.handshaking:
            self.flush()
        self._teardown()

    def connection_lost(self, exc: Exception | None) -> None:
        self._teardown(None if exc is None else READ_ERROR)

    # --- ops --------------------------------------------------------------------------

    def _process_connect(self, op: Connect) -> None:
        try:
            decoded = gojson.decode_struct(op.options, CONNECT_SPEC)
        except gojson.GoJSONError:
            self.close_with_error(None)
            return
        if self.connect_received:
            # A second CONNECT may move the client to another account: the server drops
            # the subscriptions it had.
            self._remove_all_subs()
        self.connect_received = True
        self.opts.update(decoded)
        opts = self.opts
        if isinstance(self.transport, WebSocketTransport):  # nats-server: cookies stand in
            for key, value in self.transport.connect_defaults.items():
                if not opts.get(key):
                    opts[key] = value
        self.echo = bool(opts.get("echo"))
        self.verbose = bool(opts.get("verbose"))
        self.pedantic = bool(opts.get("pedantic"))
        self.headers = bool(opts.get("headers"))
        self.no_responders = bool(opts.get("no_responders"))
        self.parser.headers = self.headers
        if not self.rtt:  # the server's first RTT: from its INFO to the client's CONNECT
            self.rtt = max(time.time_ns() - self.start_ns, 1) / 1e9
        self._set_first_ping_timer()
        if not self.held and self._hold_for_account(opts):
            return
        self._continue_connect()

    def _continue_connect(self) -> None:
        """The CONNECT's login and checks (after any lookup of its account)."""
        opts = self.opts
        auth = self.current_auth()
        if auth is not None:
            self._cancel_auth_timer()
            kind = "WEBSOCKET" if isinstance(self.transport, WebSocketTransport) else "STANDARD"
            user = auth.authenticate(opts, self.nonce, self.client_ip, kind, self.server.clock.now_ns())
            callout = self.server.auth_callout
            settings = callout.settings_for(auth, user, opts) if callout is not None else None
            if settings is not None:
                assert callout is not None
                self._await_callout(callout, settings, auth, user)
                return
            if user is None:
                announce_refusal(self, self.account)  # still in $G
                self.close_with_error(ERR_AUTHORIZATION_VIOLATION)
                return
            if callout is not None and in_callout_account(auth, user):
                user = replace(user, permissions=with_callout_deny(user.permissions))
            self._log_in(user)
            if isinstance(user, JwtUser):
                refusal = admit(self, user)
                if refusal is not None:
                    self.close_with_error(refusal)
                    return
        self._connected()

    def _await_callout(self, callout: AuthCallout, settings: CalloutSettings, auth: Auth, user: User | None) -> None:
        """Hand the login to the auth callout (``server/auth_callout.py``) and read nothing
        more until it answers, as nats-server's read loop waits."""
        self.callout_wait = True
        if self.transport is not None:
            self.transport.pause_reading()
        timeout = auth.timeout if auth.timeout is not None else DEFAULT_AUTH_TIMEOUT
        account = self.server.account_space.by_name.get(settings.account)
        callout.start(self, settings, timeout, lambda user: self._callout_done(user, account), user)

    def _callout_done(self, user: User | None, account: Router | None = None) -> None:
        """The callout's answer; ``account``: the callout's, where a refusal is announced."""
        self.callout_wait = False
        if self.closed:
            return
        if user is None:
            callout = self.server.auth_callout
            announce_refusal(self, account, callout.refusal if callout is not None else "")
            self.close_with_error(ERR_AUTHORIZATION_VIOLATION)
            self.server.flush()
            return
        self._log_in(user)
        if isinstance(user, JwtUser):
            refusal = admit(self, user)
            if refusal is not None:
                self.close_with_error(refusal)
                self.server.flush()
                return
        expires = user.expires if isinstance(user, CalloutUser) else 0
        if expires:
            server = self.server

            def expired() -> None:
                self.close_with_error(ERR_USER_AUTHENTICATION_EXPIRED)
                server.flush()

            self.expiry_timer = server.timers.at(expires * 1_000_000_000, expired)
        self._connected()
        self._resume_after_connect()

    def _resume_after_connect(self) -> None:
        """A CONNECT held for the resolver's lookup or the auth callout went on: reading
        resumes with what came after it in its read (kept in the parser)."""
        if self.closed:
            self.server.flush()
            return
        if self.transport is not None:
            self.transport.resume_reading()
        self.data_received(b"")

    def _connected(self) -> None:
        """The rest of a CONNECT once its user is known."""
        opts = self.opts
        if opts.get("account") or opts.get("new_account"):
            # nats-server: logged in (its CONNECT event), then refused as a reload refuses
            self._announce_connect()
            announce_dropped(self)
            self.close_with_error(ERR_AUTHORIZATION_VIOLATION)
            return
        protocol = opts.get("protocol", 0)
        if protocol < 0 or protocol > 1:
            self.close_with_error(ERR_INVALID_CLIENT_PROTOCOL)
            return
        if self.no_responders and not self.headers:
            self.close_with_error(ERR_NO_RESPONDERS_NEEDS_HEADERS)
            return
        if self.verbose:
            self.send(OK)
        if self.user is not None:
            look_up(self.server, self.account.name)
        self._announce_connect()

    def _announce_connect(self) -> None:
        """``$SYS.ACCOUNT.<acc>.CONNECT``, once, for a client logged in as a user."""
        system = self.server.system
        if system is not None and self.user is not None and not self.announced:
            self.announced = True
            system.client_connected(self)

    def _hold_for_account(self, opts: dict[str, Any]) -> bool:
        """Operator mode: a user of an account the resolver does not have waits (reading
        paused, the rest of its read kept in the parser) until the cluster was asked for it."""
        resolver = self.server.account_resolver
        if self.current_auth() is None:
            return False
        key = resolver.missing_account(opts)  # an expired account fetched again, too
        if key is None or resolver.peers is None or self.transport is None:
            return False
        self.held = 1
        self._cancel_auth_timer()  # as nats-server, which clears it before authenticating
        self.transport.pause_reading()
        resolver.peers.fetch(key, self._account_fetched)
        return True

    def _account_fetched(self) -> None:
        """The lookup is over: the CONNECT goes on, then whatever came after it."""
        self.held = 2
        if self.closed or self.transport is None:
            return
        self._continue_connect()
        if self.callout_wait:  # the callout's answer resumes it
            self.server.flush()
            return
        self._resume_after_connect()

    def _pub_run(self, run: PubRun, fast: bool) -> bool:
        """Hand a run of plain publishes to the ``fast_batch`` of its subjects, if no reply
        subject is reserved: the whole run in one call when one takes them all, else each
        stretch for one ``fast_batch`` in one call (a consumer's acks, then the next pull
        request, in one write), its routes learned after the stretch before it ran, and
        the rest one by one from the first subject without one. False leaves the run to
        the caller."""
        if not fast:
            return False
        account = self.account
        subjects = run.subjects
        replies = run.replies
        n = len(subjects)
        if subjects[0][:8] == b"$JS.ACK.":  # acks are never learned routes: the ack lane's
            batch, whole = None, False
        else:
            batches = list(map(account.learned_routes.get, subjects))
            batch = batches[0]
            whole = batch is not None and batches.count(batch) == n
        if whole and not batch:  # no fast_batch: perhaps a run lane (server/run_lanes.py)
            lanes = account.run_lanes
            batch = lanes.get(subjects[0])
            if batch is None or not batch.admits(self, replies):
                return False
            if n > 1 and list(map(lanes.get, subjects)).count(batch) != n:
                return False
        if replies[0] is not None or replies.count(None) != n:
            for reply in set(replies):
                if reply is not None and _is_reserved_reply(reply):
                    return False
        payloads = run.payloads
        start = 0
        while start < n:
            if whole:
                end = n
            else:
                end, batch = account.learn_stretch(subjects, start)
                if not batch:
                    if start == 0:
                        return False
                    rest: list[AnyOp] = [*PubRun(subjects[start:], replies[start:], payloads[start:]).pubs()]
                    self._handle(rest)
                    return True
            part = payloads[start:end] if end - start != n else payloads
            self.in_msgs += end - start
            self.in_bytes += sum(map(len, part))
            self.last_in = self.read_time
            try:
                if end - start == n:
                    batch(subjects, replies, None, payloads)  # type: ignore[operator,misc]
                else:
                    batch(subjects[start:end], replies[start:end], None, part)  # type: ignore[operator,misc]
            except Exception:
                log.exception("internal handler failed for %r", subjects[start])
            if self.closed:
                break
            start = end
        return True

    def process_pub(
        self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trace: MsgTrace | None = None
    ) -> None:
        """A client's publish: its checks (each refusal a ``-ERR``), ``+OK``, the account's
        mappings and fault rules, then routing. The one copy of them: a publish that may ask
        for a trace went to ``publish_traced`` first (``server/msg_trace.py``, from
        ``_handle``), and a traced one comes back here with its ``trace``, which records each
        step (a refusal is its ingress error) and routes through ``route_traced``; an untraced
        one pays only for ``trace is None`` tests where a step has something to record."""
        self.last_in = self.read_time
        self.in_msgs += 1
        self.in_bytes += len(msg)
        if self.pedantic and not is_valid_literal_subject(subject.decode("latin-1")):
            self.send(encode_err(ERR_INVALID_PUBLISH_SUBJECT))
        if trace is not None and trace is DROPPED:
            return  # trace only, to no valid destination: parsed as any HPUB, then dropped
        if (
            self.perms is not None
            and not self.perms.can_publish(subject)
            and (self.replies is None or not self.replies.use(subject, self.server.clock.now_ns()))
        ) or subject[:5] == b"$NRG.":
            self._refuse_publish(ERR_PUBLISH_DENIED.format(go_quote(subject)), trace)
            return
        if reply is not None and _is_reserved_reply(reply):
            self._refuse_publish(ERR_PUBLISH_REPLY_DENIED.format(go_quote(reply)), trace)
            return
        if self.verbose:
            self.send(OK)
        account = self.account
        if account.domain_api is not None:
            subject = account.map_domain(subject)
        if account.mappings is not None:
            mapped = account.mappings.select(subject)
            if mapped is not None:
                if trace is not None:
                    trace.add("sm", to=mapped.decode("utf-8", "surrogateescape"))
                if not mapped:
                    return  # a weighted mapping that sends this share nowhere
                subject = mapped
        if account.faults.rules and (
            account.faults.intercept(self, subject, reply, hdr, msg)
            if trace is None
            else intercept_traced(trace, account, self, subject, reply, hdr, msg)
        ):
            return
        if trace is None:
            delivered = account.route(self, subject, reply, hdr, msg)
        else:
            delivered = route_traced(trace, account, self, subject, reply, hdr, msg)
        if not delivered and reply and self.no_responders:
            self.send_no_responders(subject, reply)

    def _refuse_publish(self, error: str, trace: MsgTrace | None) -> None:
        self.send(encode_err(error))
        if trace is not None:
            trace.ingress()["error"] = error

    def send_no_responders(self, subject: bytes, reply: bytes) -> None:
        for sub in self.account.sublist.match(reply).psubs:
            # A subscription whose messages a deny list filters has the filter as its client.
            if sub.client is self or getattr(sub.client, "conn", None) is self:
                self.send(encode_no_responders(reply, sub.sid, subject))
                break

    def publish_routed(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        """Route a publish that a fault rule held back (the connection may be gone by now)."""
        if self.closed:
            return
        if not self.account.route(self, subject, reply, hdr, msg) and reply and self.no_responders:
            self.send_no_responders(subject, reply)

    def log_name(self) -> str:
        """How nats-server's log lines name the client (its ``ncs``): ``<ip>:<port> - cid:<n>``
        (``wid`` and any ``X-Forwarded-For`` address for a WebSocket client)."""
        peer = join_host_port(self.client_ip, self.client_port)
        transport = self.transport
        if isinstance(transport, WebSocketTransport):
            return transport.log_name(peer, self.cid)
        return f"{peer} - cid:{self.cid}"

    def _client_error(self, text: str) -> None:
        """nats-server's ``[ERR] <ip>:<port> - cid:<n> - <text>`` for a client over a limit
        (a warning to Python's logging: the client's doing, not an internal error)."""
        log.warning("%s - %s", self.log_name(), text, extra=NATS_ERR)

    def _process_sub(self, op: Sub) -> None:
        self.last_in = self.read_time
        if op.queue is not None and op.queue == SYS_QUEUE:
            self.send(encode_err(ERR_SUBSCRIBE_QUEUE_DENIED.format(go_quote(op.subject), go_quote(op.queue))))
            return
        perms = self.perms
        if perms is not None and not perms.can_subscribe(op.subject, op.queue):
            if op.queue is None:
                self.send(encode_err(ERR_SUBSCRIBE_DENIED.format(go_quote(op.subject))))
            else:
                self.send(encode_err(ERR_SUBSCRIBE_QUEUE_DENIED.format(go_quote(op.subject), go_quote(op.queue))))
            return
        limit = self.server.options.max_subscriptions if self.max_subs < 0 else self.max_subs
        if (limit > 0 or self.max_subs == 0) and len(self.subs) >= limit:  # a user JWT's 0: none
            self._client_error(ERR_MAX_SUBSCRIPTIONS)
            self.send(encode_err(ERR_MAX_SUBSCRIPTIONS))
            return
        if op.sid not in self.subs:
            deny = perms.sub_deny if perms is not None and perms.needs_filter(op.subject) else None
            if deny is not None or self.replies is not None:
                sub = Subscription(DeliveryFilter(self, deny, self.replies), op.subject, op.queue, op.sid)
            else:
                sub = Subscription(self, op.subject, op.queue, op.sid)
            if not self.account.sublist.insert(sub):
                self.send(encode_err(ERR_INVALID_SUBJECT))
                return
            self.subs[op.sid] = sub
        if self.verbose:
            self.send(OK)

    def _process_unsub(self, op: Unsub) -> None:
        self.last_in = self.read_time
        sub = self.subs.get(op.sid)
        if sub is not None:
            if op.max > 0 and op.max > sub.nm:
                sub.max = op.max
                self.account.sublist.invalidate(Change.UNSUB_LIMIT)  # cached plans assumed no limit
            else:
                self.unsubscribe(sub)
        if self.verbose:
            self.send(OK)

    def _process_ping(self) -> None:
        self.last_in = self.read_time
        self.send(PONG)
        if self.connect_received and not self.first_pong_sent:
            self.first_pong_sent = True
            if self.opts.get("protocol", 0) >= 1:
                self.send(encode_info(self.server.client_info(self, connect_info=True)))

    # --- delivery ---------------------------------------------------------------------

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        if self.closed:
            return False
        if hdr <= 0:
            self.queue(encode_msg(subject, sub.sid, reply, msg), 1, len(msg))
        elif self.headers:
            self.queue(encode_hmsg(subject, sub.sid, reply, hdr, msg), 1, len(msg))
        else:  # a client without header support gets the payload alone
            self.queue(encode_msg(subject, sub.sid, reply, msg[hdr:]), 1, len(msg))
        return True

    def run_lane(self, sub: Subscription) -> ClientLane:
        """The run lane of a subject that ``sub`` alone takes (``server/run_lanes.py``):
        what ``deliver`` does, for a whole run of plain publishes at once."""
        return ClientLane(sub, self)

    def set_permissions(self, perms: Permissions | None) -> None:
        """A configuration reload's new permissions (``reloadAuthorization``): the next PUB
        and SUB are judged by them, and each subscription they no longer allow is removed,
        logged and reported to the client with its sid."""
        self.perms = perms
        self.replies = ReplyPermits(perms.response) if perms is not None and perms.response is not None else None
        if perms is None:
            return
        name = self.user.name if self.user is not None else ""
        for sub in list(self.subs.values()):
            if perms.can_subscribe(sub.subject, sub.queue):
                continue
            subject, sid = sub.subject.decode(), sub.sid.decode()
            log.info('Removed sub "%s" (sid "%s") for User "%s" - not authorized', subject, sid, name, extra=_NATS_INF)
            self.send(encode_err(ERR_SUBSCRIBE_DENIED.format(f'{go_quote(subject)} (sid "{sid}")')))
            self.unsubscribe(sub)

    def auth_violation(self) -> None:
        """A reload's credentials no longer let this client in (``authViolation``)."""
        name = self.user.name if self.user is not None else ""
        log.warning(
            '%s - "%s/user:%s" - authentication error - User "%s"',
            self.log_name(),
            self.account.name,
            name,
            name,
            extra=NATS_ERR,
        )
        announce_dropped(self)
        self.close_with_error(ERR_AUTHORIZATION_VIOLATION)

    def unsubscribe(self, sub: Subscription) -> None:
        if sub.closed:
            return
        sub.closed = True
        if self.subs.get(sub.sid) is sub:
            del self.subs[sub.sid]
        self.account.sublist.remove(sub)

    def client_record(self) -> ClientInfo:
        """What the server's advisories say about this client (``Router.requester``)."""
        opts = self.opts
        user = self.user
        return ClientInfo(
            start_ns=self.start_ns,
            host=self.client_ip,
            cid=self.cid,
            account=self.account.name,
            user=user.name if user is not None else "",
            name=str(opts.get("name") or ""),
            lang=str(opts.get("lang") or ""),
            version=str(opts.get("version") or ""),
            rtt_ns=int(self.rtt * 1e9),
            server=self.node.name,
        )

    # --- output -----------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Queue protocol bytes (INFO, PONG, +OK, -ERR, ...): no message is counted."""
        if self.closed:
            return
        self.out.append(data)
        if not self.dirty:
            self.dirty = True
            self.server.mark_dirty(self)

    def queue(self, frames: bytes, msgs: int, size: int) -> None:
        """Queue message frames (one, or several as one buffer) carrying ``msgs`` messages
        of ``size`` message bytes in all, counted for monitoring. The caller checked
        ``closed``."""
        self.out_msgs += msgs
        self.out_bytes += size
        self.out.append(frames)
        if not self.dirty:
            self.dirty = True
            self.server.mark_dirty(self)

    def queue_frames(self, frames: list[bytes], size: int) -> None:
        """``queue`` for a list of frames, one message each."""
        self.out_msgs += len(frames)
        self.out_bytes += size
        self.out += frames
        if not self.dirty:
            self.dirty = True
            self.server.mark_dirty(self)

    def pending_bytes(self) -> int:
        """Output not yet written to the socket: queued frames and the transport's buffer
        (what ``max_pending`` limits; a deliverer's flow-control view)."""
        transport = self.transport
        buffered = transport.get_write_buffer_size() if transport is not None and not self.closed else 0
        return sum(map(len, self.out)) + buffered

    def flush(self) -> None:
        """Write everything queued; cut the client if it cannot keep up."""
        self.dirty = False
        if self.closed or not self.out or self.handshaking:
            return
        data = b"".join(self.out) if len(self.out) > 1 else self.out[0]
        self.out.clear()
        transport = self.transport
        assert transport is not None
        if transport.is_closing():
            # Lost (a failed read or write): asyncio would drop the bytes and log a line per
            # write from the fifth on. Leave routing now; what was queued is dropped.
            self.out.append(data)  # still pending: counted in the closed record
            self._teardown(READ_ERROR)
            return
        if self.server.write_deadline_ns < 0:  # a deadline already past: no write succeeds
            cut_slow_writer(self, len(data))
            return
        transport.write(data)
        if transport.is_closing():  # the write failed (the peer is gone): never write again
            self._teardown(WRITE_ERROR)
            return
        self.handed += len(data)
        pending = transport.get_write_buffer_size()
        if pending and self.write_timer is None:
            watch_writes(self, pending)
        if pending > self.server.options.max_pending * 3 // 4:
            if pending > self.server.options.max_pending:
                # Slow consumer: drop it without waiting for its buffer to drain.
                self.server.slow_consumers += 1
                log.info(
                    "%s - Slow Consumer Detected: MaxPending of %d Exceeded",
                    self.log_name(),
                    self.server.options.max_pending,
                )
                self.cut("Slow Consumer")
            else:
                # Falling behind: like nats-server, hold the producer back briefly.
                self.server.request_stall(_STALL)

    def cut(self, reason: str) -> None:
        """Close at once, dropping what is buffered and sending nothing (a slow consumer)."""
        self._teardown(reason)
        if self.transport is not None:
            self.transport.abort()

    def close_with_error(self, error: str | None) -> None:
        """Send ``-ERR '<error>'`` if given, flush what is queued, then close."""
        if self.closed:
            return
        if error is not None:
            self.send(encode_err(error))
        if self.handshaking:
            # TLS hands the client's first bytes over in the turn its handshake ends, before
            # ``start_tls`` returns the secure transport: what is queued goes out on it, and the
            # connection closes, once it has (``_tls_handshake``).
            self.farewell = b"".join(self.out)
            self._teardown(error)
            return
        self.flush()
        self._teardown(error)
        if self.transport is not None:
            self.transport.close()

    def close_quietly(self, reason: str) -> None:
        """Close without a word to the client (nats-server's ``closeConnection``: what is
        queued goes out first), ``reason`` kept for ``/connz?state=closed``."""
        if self.closed:
            return
        if not self.handshaking:
            self.flush()
        self._teardown(reason)
        if self.transport is not None:
            self.transport.close()

    def _teardown(self, error: str | None = None) -> None:
        if self.closed:
            return
        self.closed = True
        if isinstance(self.transport, WebSocketTransport):
            self.transport.reason = error  # the status of its close frame
        self._cancel_auth_timer()
        if self.expiry_timer is not None:
            self.expiry_timer.cancel()
            self.expiry_timer = None
        if self.write_timer is not None:
            self.write_timer.cancel()
            self.write_timer = None
        if self.ping_handle is not None:
            self.ping_handle.cancel()
            self.ping_handle = None
        self.server.remove_connection(self, error)  # first: the closed record counts the subscriptions and output
        self.out.clear()  # dropped, counted as pending in the closed record (as nats-server's)
        self._remove_all_subs()
        if self.announced and self.server.system is not None:
            self.server.system.client_disconnected(self, error)

    def _remove_all_subs(self) -> None:
        sublist = self.account.sublist
        for sub in self.subs.values():
            sub.closed = True
            sublist.remove(sub)
        self.subs.clear()

    # --- pings ------------------------------------------------------------------------

    def _set_first_ping_timer(self) -> None:
        interval = self.server.options.ping_interval
        delay = min(interval, _FIRST_PING_MAX)
        delay += random.random() * delay / 5  # the server spreads first PINGs by up to 20%
        self._schedule_ping(delay)

    def _schedule_ping(self, delay: float) -> None:
        if self.ping_handle is not None:
            self.ping_handle.cancel()
        self.ping_handle = self.server.loop.call_later(delay, self._ping_timer)

    def _ping_timer(self) -> None:
        self.ping_handle = None
        if self.closed:
            return
        opts = self.server.options
        now = self.server.loop_time()
        # The first PING after CONNECT is always sent (the server measures the RTT with
        # it, and again hourly); later ones only when the client has been idle.
        need_rtt = self.rtt_start is None or now - self.rtt_start > _RTT_INTERVAL
        if need_rtt or now - self.last_in >= opts.ping_interval:
            if self.pings_out + 1 > opts.max_pings_out:
                self.close_with_error(ERR_STALE_CONNECTION)
                return
            self.pings_out += 1
            self.rtt_start = now
            self.send(PING)
            self.server.flush()
        self._schedule_ping(opts.ping_interval)
