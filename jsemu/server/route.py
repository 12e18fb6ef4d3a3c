"""One route connection to another server of the cluster.

Theory of operation
-------------------
A route is accepted on the cluster port or solicited by this server (``server/cluster.py``
owns both and decides which of two routes to one server stays). The handshake is
nats-server's for a server without route pooling: the accepting side sends its INFO, the
soliciting side answers with CONNECT (its server id as ``name``, the cluster name, the route
credentials) and its own INFO. A route is *registered* once the remote's INFO has arrived
(and, on the accepting side, its CONNECT has passed the credential and cluster name checks);
only then do its ``RS+``/``RS-``/``RMSG`` ops count.

The remote's interest becomes subscriptions of the account's sublist whose subscriber is
this route: one per plain subject, and *weight* shadows per queue group (nats-server shadows
a remote queue member that many times when it picks one, so members are picked in proportion
everywhere). Messages reach the route through ``send_msg`` (the cluster's routing decides
which routes get a message, once each, with the queue groups it is for) and leave through
the server's output batching, one write per read like a client connection (a client's run of
publishes whose one target is this route comes as one buffer, and a read's runs of plain
``RMSG`` frames are delivered a run at a time: ``server/route_batch.py``). A message from
the route goes to local subscribers only (``deliver_from_route``), never to another route:
the cluster is a full mesh. When a route goes, its subscriptions go with it; nothing else
(no client, no stored message) depends on it.

Liveness: until the remote's INFO arrives no PING is sent, but a route that has not sent
it within (``ping_max`` + 1) intervals is closed as stale (nats-server's
``watchForStaleConnection``, ahead of the authentication timeout when that is longer). Once
the INFO has arrived, this server PINGs the route on its clock
(``server.timers``), as nats-server does a route: the first PING after min(interval, 1 s)
plus up to a fifth more, then one every interval (the cluster's ``ping_interval`` or the
server's, at most 30 s) whatever else arrives; a PONG clears the count. The timer that
would send PING number ``ping_max + 1`` sends ``-ERR 'Stale Connection'`` and closes the
route instead, so a frozen or half-open peer loses its interest and its client URLs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.encoder import PONG, encode_err, encode_info
from ..protocol.route_ops import (
    PING_OP,
    PONG_OP,
    RouteConnect,
    RouteErr,
    RouteError,
    RouteInfo,
    RouteMsg,
    RouteOp,
    RouteParser,
    RouteSub,
    RouteUnsub,
    encode_rmsg_head,
    split_js_deliver,
)
from ..protocol.texts import ERR_AUTHORIZATION_VIOLATION, ERR_STALE_CONNECTION
from .ack_lane import ACK_PREFIX
from .msg_trace import may_trace
from .msg_trace_routes import deliver_traced_from_route
from .route_batch import RmsgHeads, deliver_run
from .sublist import Subscription
from .timers import Cancellable

if TYPE_CHECKING:
    from .cluster import Cluster
    from .routing import Router
    from .subscriber import FastBatch

__all__ = ["RouteConnection", "deliver_from_route"]

log = logging.getLogger("jsemu.server")

_ROUTE_SID = b"route"
#: Shadows kept for one remote queue group: a hostile weight must not cost memory without bound.
MAX_QUEUE_WEIGHT = 1024
_PING = b"PING\r\n"
#: nats-server's ``firstPingInterval`` and ``routeMaxPingInterval``.
FIRST_PING_MAX = 1.0
ROUTE_MAX_PING_INTERVAL = 30.0


def deliver_from_route(
    router: Router,
    route: RouteConnection,
    subject: bytes,
    reply: bytes | None,
    hdr: int,
    msg: bytes,
    queues: tuple[bytes, ...],
) -> None:
    """A message from a route, to this server's subscribers only (``processMsgResults`` for a
    ROUTER producer): every local plain subscription, and one local member of each queue
    group the message names. A JetStream delivery (``<ack reply>@<shown subject>``, see
    ``protocol/route_ops.py``) is matched on ``subject`` and shown with the other one."""
    if subject[:8] == ACK_PREFIX and router.ack_lane.deliver(subject, reply, hdr, msg):
        return
    if (
        hdr > 0
        and may_trace(router, hdr, msg)
        and deliver_traced_from_route(router, route, subject, reply, hdr, msg, queues)
    ):
        return  # ADR-41 (server/msg_trace_routes.py)
    router.origin = route
    shown = subject
    if reply is not None and b"@" in reply:
        parts = split_js_deliver(reply)
        if parts is not None:
            reply, shown = parts
    result = router.sublist.match(subject)
    for sub in result.psubs:
        if sub.client.__class__ is not RouteConnection:
            router._deliver(sub, shown, reply, hdr, msg)
    if not queues:
        return
    for group in result.qsubs:
        if group[0].queue not in queues:
            continue
        local = [s for s in group if s.client.__class__ is not RouteConnection]
        n = len(local)
        if not n:
            continue
        start = router._queue_start(subject, local)
        for i in range(n):
            if router._deliver(local[(start + i) % n], shown, reply, hdr, msg):
                break


class RouteConnection(asyncio.Protocol):
    """A route: handshake, the remote's interest, messages both ways."""

    def __init__(self, cluster: Cluster, solicited: bool = False, url: str = "") -> None:
        self.cluster = cluster
        self.server = cluster.server
        self.rid = self.server.next_client_id()
        self.solicited = solicited
        #: ``host:port`` this server dialled (empty for an accepted route).
        self.url = url
        self.transport: asyncio.Transport | None = None
        self.parser = RouteParser()
        self.out: list[bytes] = []
        self.dirty = False
        self.closed = False
        self.registered = False
        self.connect_received = False
        #: Why it closed when this server closed it (``Duplicate Route``, ...): no reconnect then.
        self.close_reason: str | None = None
        self.remote_info: dict[str, Any] = {}
        self.remote_id = ""
        self.remote_name = ""
        self.headers = False
        #: Client URLs the remote advertised (added to this server's ``connect_urls``).
        self.advertised: list[str] = []
        #: WebSocket URLs the remote advertised (``ws_connect_urls``).
        self.ws_advertised: list[str] = []
        #: (router, subject, queue) -> the subscriptions that stand for the remote's interest.
        self.remote_subs: dict[tuple[Router, bytes, bytes | None], list[Subscription]] = {}
        self.ip = ""
        self.port = 0
        self.start_ns = time.time_ns()
        self.in_msgs = self.in_bytes = self.out_msgs = self.out_bytes = 0
        self.auth_timer: asyncio.TimerHandle | None = None
        self.ping_timer: Cancellable | None = None
        #: The last RMSG's account and its router (None: not one of this server's).
        self._account = b""
        self._account_router: Router | None = None
        self.pings_out = 0
        #: The sending side's per-account fast lane and frame heads (``server/route_batch.py``).
        self.heads = RmsgHeads(self)
        self.done: asyncio.Future[None] = self.server.loop.create_future()

    def __repr__(self) -> str:
        return f"<Route rid={self.rid} {self.ip}:{self.port} remote={self.remote_name or '?'}>"

    # --- asyncio ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername") or ("", 0)
        self.ip, self.port = str(peer[0]), int(peer[1])
        # Until the remote's INFO (``watchForStaleConnection``): no PING yet, but a route that
        # never completes its handshake goes as stale after (ping_max + 1) intervals.
        self._arm_ping(self._ping_interval() * (self._max_pings_out() + 1), then=self._never_joined)
        if not self.solicited:
            self.send(encode_info(self.cluster.route_info(nonce=True)))
            timeout = self.cluster.options.auth_timeout
            self.auth_timer = self.server.loop.call_later(timeout, self._auth_timeout)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self.parser.feed_to(data, self._on_run, self._on_op)
        self.server.stall = 0.0

    def _on_op(self, op: RouteOp) -> bool:
        self._handle(op)
        return self.closed

    def _on_run(self, account: bytes, subject: bytes, reply: bytes | None, payloads: list[bytes]) -> bool:
        """A run of common ``RMSG`` frames (no queues, no headers) of one account, subject
        and reply, straight from the parser (``server/route_batch.py``)."""
        if not self.registered:
            return False
        self.in_msgs += len(payloads)
        self.in_bytes += sum(map(len, payloads))
        if account == self._account:  # the account of the last message, most often
            router = self._account_router
        else:
            router = self._account_router = self.cluster.router(account)
            self._account = account
        if router is not None:
            deliver_run(router, self, subject, reply, payloads, deliver_from_route)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._teardown()

    # --- ops ----------------------------------------------------------------------------

    def _handle(self, op: RouteOp) -> None:
        if isinstance(op, RouteMsg):
            if not self.registered:
                return
            self.in_msgs += 1
            self.in_bytes += len(op.msg)
            router = self.cluster.router(op.account)
            if router is not None:
                try:
                    deliver_from_route(router, self, op.subject, op.reply, op.hdr, op.msg, op.queues)
                except Exception:  # an internal subscriber's fault is not the route's
                    log.exception("delivering a routed message on %r failed", op.subject)
        elif isinstance(op, RouteSub):
            if self.registered:
                self._remote_sub(op)
        elif isinstance(op, RouteUnsub):
            if self.registered:
                self._remote_unsub(op)
        elif isinstance(op, RouteInfo):
            self._process_info(op.info)
        elif isinstance(op, RouteConnect):
            self._process_connect(op.options)
        elif isinstance(op, RouteError):
            self.close(op.text, "Protocol Violation")
        elif isinstance(op, RouteErr):
            self.close(None, "Route Error")
        elif op is PING_OP:
            self.send(PONG)
        elif op is PONG_OP:
            self.pings_out = 0

    def _auth_timeout(self) -> None:
        self.auth_timer = None
        if not self.connect_received:
            self.close("Authentication Timeout", "Authentication Timeout")

    def _process_connect(self, options: bytes) -> None:
        if self.solicited or self.connect_received:
            return
        try:
            opts = json.loads(options)
            if not isinstance(opts, dict):
                raise TypeError
        except (ValueError, TypeError):
            self.close(None, "Protocol Violation")
            return
        self.connect_received = True
        if self.auth_timer is not None:
            self.auth_timer.cancel()
            self.auth_timer = None
        copts = self.cluster.options
        if copts.user is not None and (opts.get("user") != copts.user or opts.get("pass") != copts.password):
            log.error("%s:%d - rid:%d - %s", self.ip, self.port, self.rid, ERR_AUTHORIZATION_VIOLATION)
            self.close(ERR_AUTHORIZATION_VIOLATION, "Authentication Failure")
            return
        theirs = opts.get("cluster", "")
        ours = self.cluster.name
        if theirs != ours and not self.cluster.adopt_name(str(theirs), bool(opts.get("dynamic"))):
            text = f"Rejecting connection, cluster name {go_str(theirs)} does not match {go_str(ours)}"
            log.error("%s:%d - rid:%d - %s", self.ip, self.port, self.rid, text)
            self.close(text, "Cluster Name Conflict")
            return
        self.headers = bool(opts.get("headers"))
        if self.remote_info:  # the INFO came first
            self._register()

    def _process_info(self, raw: bytes) -> None:
        try:
            info = json.loads(raw)
        except ValueError:
            self.close(None, "Protocol Violation")
            return
        if not isinstance(info, dict):
            self.close(None, "Protocol Violation")
            return
        remote_id = str(info.get("server_id") or "")
        if self.remote_info:
            if remote_id == self.remote_id and self.cluster.meta is not None:
                self.cluster.meta.peer_info(self, info)  # its JetStream role may have changed
            if remote_id and remote_id != self.remote_id:
                self.cluster.learn_peer(info)  # gossip: another server of the cluster
            elif info.get("ldm") and (self.advertised or self.ws_advertised):
                self.cluster.withdraw_urls(self)
            return
        if remote_id == self.server.server_id:
            self.close(None, "Duplicate Route")  # a route to ourselves (our own URL in --routes)
            return
        cluster = str(info.get("cluster") or "")
        if (
            cluster
            and cluster != self.cluster.name
            and not self.cluster.adopt_name(cluster, bool(info.get("cluster_dynamic")))
        ):
            self.close(None, "Cluster Name Conflict")
            return
        self.remote_info = info
        self.remote_id = remote_id
        self._arm_ping(min(self._ping_interval(), FIRST_PING_MAX), spread=True)
        self.remote_name = str(info.get("server_name") or info.get("name") or remote_id)
        if self.solicited:
            self.headers = bool(info.get("headers"))
            self.send(b"CONNECT " + json.dumps(self.cluster.route_connect(), separators=(",", ":")).encode() + b"\r\n")
            self.send(encode_info(self.cluster.route_info()))
            self._register()
        elif self.connect_received:
            self._register()

    def _register(self) -> None:
        if not self.cluster.register(self):
            self.close(None, "Duplicate Route")
            return
        self.registered = True

    def _remote_sub(self, op: RouteSub) -> None:
        router = self.cluster.router(op.account)
        if router is None:
            return
        key = (router, op.subject, op.queue)
        subs = self.remote_subs.get(key)
        if subs is None:
            subs = self.remote_subs[key] = []
        want = 1 if op.queue is None else min(op.weight, MAX_QUEUE_WEIGHT)
        sublist = router.sublist
        while len(subs) < want:
            sub = Subscription(self, op.subject, op.queue, _ROUTE_SID)
            if not sublist.insert(sub):
                break
            subs.append(sub)
        while len(subs) > want:
            sub = subs.pop()
            sub.closed = True
            sublist.remove(sub)
        if not subs:
            del self.remote_subs[key]

    def _remote_unsub(self, op: RouteUnsub) -> None:
        router = self.cluster.router(op.account)
        if router is None:
            return
        for sub in self.remote_subs.pop((router, op.subject, op.queue), ()):
            sub.closed = True
            router.sublist.remove(sub)

    # --- delivery -----------------------------------------------------------------------

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """Messages reach a route through the cluster's routing (``send_msg``), once per
        message (``route_local``, and ``route_shown_local`` for a consumer's deliveries)."""
        return False

    def send_msg(
        self, account: bytes, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, queues: list[bytes]
    ) -> bool:
        if self.closed:
            return False
        if hdr <= 0 and not queues and not reply:  # the common frame, built in one step
            frame = b"RMSG %b %b %d\r\n%b\r\n" % (account, subject, len(msg), msg)
            size = len(msg)
        else:
            head = encode_rmsg_head(account, subject, reply, queues, hdr, len(msg), self.headers)
            body = msg if hdr <= 0 or self.headers else msg[hdr:]
            frame = head + body + b"\r\n"
            size = len(body)
        self.out_msgs += 1
        self.out_bytes += size
        self.out.append(frame)
        if not self.dirty:
            self.dirty = True
            self.server.mark_dirty(self)
        return True

    def account_batch(self, router: Router) -> FastBatch:
        """The ``FastBatch`` of publishes in ``router``'s account whose one target is this
        route (``Router._fast_batch_for``; see ``server/route_batch.py``)."""
        return self.heads.batch(router)

    def queue_run(self, frames: bytes, msgs: int, size: int) -> None:
        """Queue ``msgs`` message frames as one buffer (``size`` message bytes in all)."""
        self.out_msgs += msgs
        self.out_bytes += size
        self.out.append(frames)
        if not self.dirty:
            self.dirty = True
            self.server.mark_dirty(self)

    # --- output -------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        self.out.append(data)
        if not self.dirty:
            self.dirty = True
            self.server.mark_dirty(self)

    def flush(self) -> None:
        self.dirty = False
        if self.closed or not self.out or self.transport is None:
            return
        data = b"".join(self.out) if len(self.out) > 1 else self.out[0]
        self.out.clear()
        self.transport.write(data)
        if self.transport.get_write_buffer_size() > self.server.options.max_pending:
            log.info("%s:%d - rid:%d - Slow Consumer Detected", self.ip, self.port, self.rid)
            self.close_reason = "Slow Consumer (Pending Bytes)"
            self._teardown()
            self.transport.abort()

    def close(self, error: str | None, reason: str) -> None:
        """Send ``-ERR '<error>'`` if given, flush, close; ``reason`` as nats-server logs it."""
        if self.closed:
            return
        self.close_reason = reason
        if error is not None:
            self.send(encode_err(error))
        self.flush()
        self._teardown()
        if self.transport is not None:
            self.transport.close()

    def _teardown(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.out.clear()
        if self.auth_timer is not None:
            self.auth_timer.cancel()
            self.auth_timer = None
        if self.ping_timer is not None:
            self.ping_timer.cancel()
            self.ping_timer = None
        for (router, _subject, _queue), subs in self.remote_subs.items():
            for sub in subs:
                sub.closed = True
                router.sublist.remove(sub)
        self.remote_subs.clear()
        self.cluster.unregister(self)
        if not self.done.done():
            self.done.set_result(None)

    def ping(self) -> None:
        self.send(_PING)

    # --- liveness -----------------------------------------------------------------------

    def _ping_interval(self) -> float:
        interval = self.cluster.options.ping_interval
        if not interval or interval <= 0:
            interval = self.server.options.ping_interval
        return min(interval, ROUTE_MAX_PING_INTERVAL)

    def _max_pings_out(self) -> int:
        max_out = self.cluster.options.ping_max
        if not max_out or max_out <= 0:
            max_out = self.server.options.max_pings_out
        return max_out

    def _arm_ping(self, delay: float, spread: bool = False, then: Callable[[], None] | None = None) -> None:
        if spread:
            delay += random.random() * delay / 5
        if self.ping_timer is not None:
            self.ping_timer.cancel()
        server = self.server
        self.ping_timer = server.timers.at(server.clock.now_ns() + round(delay * 1e9), then or self._ping_due)

    def _never_joined(self) -> None:
        self.ping_timer = None
        if not self.closed:
            self.close(ERR_STALE_CONNECTION, ERR_STALE_CONNECTION)

    def _ping_due(self) -> None:
        """``processPingTimer`` for a route: a PING every time, no delay for recent traffic."""
        self.ping_timer = None
        if self.closed:
            return
        if self.pings_out + 1 > self._max_pings_out():
            self.close(ERR_STALE_CONNECTION, ERR_STALE_CONNECTION)
            return
        self.pings_out += 1
        self.send(_PING)
        self._arm_ping(self._ping_interval())


def go_str(value: object) -> str:
    """A string as Go's ``%q`` shows it (close enough for names)."""
    return json.dumps(str(value))
