"""The NATS core server: listener, connections, message routing, output batching (JetStream and
the control plane are added by :mod:`jsemu.app`)."""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol, Self

from ..version import API_LEVEL, NATS_VERSION, PROTO_VERSION, __version__
from .connection import ClientConnection
from .faults import FaultInjector
from .monitor import JetStreamReport, Monitor
from .options import ServerOptions
from .queue_policy import QueuePolicies
from .sublist import Sublist, Subscription
from .subscriber import FastHandler

__all__ = ["Server", "Service"]

# Entries in the fast route and reply plan caches before they start over.
_FAST_ROUTES_MAX = 1 << 18

#: (subscription, its connection, b"HMSG <reply> <sid> ", b"MSG <reply> <sid> ")
_ReplyTarget = tuple[Subscription, ClientConnection, bytes, bytes]

_DOMAIN_API_GROUPS = frozenset((b"STREAM", b"CONSUMER", b"DIRECT", b"META", b"SERVER", b"ACCOUNT"))


# Random bytes -> base32 letters in one C call (256 is a multiple of 32: no letter is favoured).
_BASE32 = bytes(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[i % 32] for i in range(256))


def _nkey_like(prefix: str) -> str:
    """A 56-character base32 id shaped like an nkey public key (``N...`` or ``X...``)."""
    return prefix + os.urandom(55).translate(_BASE32).decode()


class Service(Protocol):
    """Something started with the server once its listener is up (JetStream, the control API)."""

    def start(self) -> None: ...


class Server:
    """The NATS core: listener, connections, subscriptions, routing, monitoring port.

    It knows nothing of JetStream or the control plane: :class:`jsemu.app.Server` (the
    ``jsemu.Server`` of the README) adds them through ``services`` and ``jetstream_report``.
    """

    def __init__(self, options: ServerOptions | None = None, **kwargs: Any) -> None:
        if options is None:
            options = ServerOptions(**kwargs)
        elif kwargs:
            raise TypeError("pass either options or keyword arguments, not both")
        options.validate()
        self.options = options
        self.server_id = _nkey_like("N")
        self.xkey = _nkey_like("X")
        self.server_name = options.server_name or f"jsemu-{self.server_id}"
        self.sublist = Sublist()
        self.rng = random.Random(int.from_bytes(os.urandom(16)))  # cheaper than seeding from 2.5 KB
        #: How queue group members are picked (random unless a test sets a policy).
        self.queue_policies = QueuePolicies(self.rng)
        self.queue_policies.changed = self.sublist.invalidate
        #: Publish subject -> the one internal handler that takes it (False: none), for
        #: connections' fast lane; see ``learn_route``.
        self.fast_routes: dict[bytes, FastHandler | bool] = {}
        #: Reply subject -> its plain client subscriptions (False: route it), for server replies.
        self.reply_plans: dict[bytes, tuple[_ReplyTarget, ...] | bool] = {}
        self.sublist.derived += (self.fast_routes, self.reply_plans)
        #: The last client ops and API calls (``start_trace``); None while not tracing.
        self.trace: deque[tuple[Any, ...]] | None = None
        #: Rules that drop, delay or answer client messages instead of routing them.
        self.faults = FaultInjector(self)
        self.connections: dict[int, ClientConnection] = {}
        self.total_connections = 0
        #: in msgs, in bytes, out msgs, out bytes of connections that have closed (for /varz).
        self.closed_stats = [0, 0, 0, 0]
        self.start_ns = time.time_ns()
        self._cid = 4  # nats-server hands its first client id 5 (internal clients come first)
        self._dirty: list[ClientConnection] = []
        #: Seconds the producer of the current read should pause (consumers falling behind).
        self.stall = 0.0
        self._flush_scheduled = False
        self._listener: asyncio.base_events.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._port = options.port
        self._info_base: dict[str, Any] = {}
        #: Started in order once the listener is up (the wiring adds JetStream and the control API).
        self.services: list[Service] = []
        #: JetStream's figures for the monitoring port (None: it shows JetStream off).
        self.jetstream_report: JetStreamReport | None = None
        #: The HTTP monitoring port (``http_port``), while running.
        self.monitor: Monitor | None = None
        #: With a JetStream domain, the prefix of subjects mapped onto the local JetStream API.
        self.domain_api = f"$JS.{options.domain}.API.".encode() if options.jetstream and options.domain else None

    # --- lifecycle --------------------------------------------------------------------

    def start_trace(self, size: int = 200) -> None:
        """Keep the last ``size`` client protocol ops and JetStream API calls, for showing
        what the server saw when a test fails (see :func:`jsemu.testing.trace.format_trace`)."""
        self.trace = deque(self.trace or (), maxlen=size)
        self.sublist.invalidate()  # traced publishes leave the fast lane

    async def start(self) -> Self:
        self._loop = asyncio.get_running_loop()
        opts = self.options
        self._listener = await self._loop.create_server(
            lambda: ClientConnection(self), host=opts.host, port=opts.port, reuse_address=True
        )
        sock = self._listener.sockets[0]
        self._port = sock.getsockname()[1]
        self._info_base = self._build_info()
        for service in self.services:
            service.start()
        if opts.http_port:  # 0 or None: no monitoring port; -1: a random one
            self.monitor = Monitor(self, self.jetstream_report)
            await self.monitor.start(opts.host, opts.http_port)
        return self

    async def stop(self) -> None:
        if self.monitor is not None:
            await self.monitor.stop()
            self.monitor = None
        if self._listener is not None:
            self._listener.close()
        for conn in list(self.connections.values()):
            conn.close_with_error(None)
        if self._listener is not None:
            await self._listener.wait_closed()
            self._listener = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "server not started"
        return self._loop

    def loop_time(self) -> float:
        return self.loop.time()

    @property
    def port(self) -> int:
        return self._port

    @property
    def host(self) -> str:
        return self.options.host

    @property
    def url(self) -> str:
        host = self.options.host
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"nats://{host}:{self._port}"

    # --- connections ------------------------------------------------------------------

    def next_client_id(self) -> int:
        self._cid += 1
        return self._cid

    def add_connection(self, conn: ClientConnection) -> None:
        self.connections[conn.cid] = conn
        self.total_connections += 1

    def remove_connection(self, conn: ClientConnection) -> None:
        if self.connections.pop(conn.cid, None) is not None:
            closed = self.closed_stats
            closed[0] += conn.in_msgs
            closed[1] += conn.in_bytes
            closed[2] += conn.out_msgs
            closed[3] += conn.out_bytes

    def request_stall(self, seconds: float) -> None:
        self.stall = max(self.stall, seconds)

    def _build_info(self) -> dict[str, Any]:
        opts = self.options
        info: dict[str, Any] = {
            "server_id": self.server_id,
            "server_name": self.server_name,
            "version": NATS_VERSION,
            "proto": PROTO_VERSION,
            "git_commit": f"jsemu-{__version__}",
            "go": f"python{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}",
            "host": opts.host,
            "port": self._port,
            "headers": True,
        }
        if opts.auth is not None and not opts.auth.no_auth_user:  # nats-server leaves it out then
            info["auth_required"] = True
        info |= {
            "max_payload": opts.max_payload,
        }
        if opts.jetstream:
            info["jetstream"] = True
        return info

    def client_info(self, conn: ClientConnection, connect_info: bool = False) -> dict[str, Any]:
        """The INFO a client gets, in the field order of nats-server's ``Info`` struct."""
        info = dict(self._info_base)
        info["client_id"] = conn.cid
        if conn.client_ip:
            info["client_ip"] = conn.client_ip
        if self.options.jetstream and self.options.domain:
            info["domain"] = self.options.domain
        if connect_info:
            info["connect_info"] = True
            info["remote_account"] = "$G"
        info["api_lvl"] = API_LEVEL
        info["xkey"] = self.xkey
        return info

    # --- routing ----------------------------------------------------------------------

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
        result = self.sublist.match(subject)
        delivered = False
        no_echo = producer is not None and not getattr(producer, "echo", True)
        for sub in result.psubs:
            if no_echo and sub.client is producer:
                continue
            if not sub.max and not sub.closed:  # the common case of _deliver, inlined
                sub.nm += 1
                if sub.client.deliver(sub, subject, reply, hdr, msg):
                    delivered = True
            elif self._deliver(sub, subject, reply, hdr, msg):
                delivered = True
        for group in result.qsubs:
            n = len(group)
            if self.queue_policies.rules:
                start = self.queue_policies.start(subject, group)
            else:
                start = self.rng.randrange(n) if n > 1 else 0
            for i in range(n):
                sub = group[(start + i) % n]
                if no_echo and sub.client is producer:
                    continue
                if self._deliver(sub, subject, reply, hdr, msg):
                    delivered = True
                    break
        return delivered

    def learn_route(self, subject: bytes) -> FastHandler | bool:
        """Whether client publishes on ``subject`` can skip ``route``, and to what: when exactly
        one internal subscriber with a ``fast_batch`` handler takes them (a stream, a single
        Direct Get responder), other internal subscribers only pass (``skips``), and no fault
        rule, trace or queue policy is in play. The handler takes the publishes as columns
        (``FastHandler``). Cached until the sublist's match cache is cleared."""
        routes = self.fast_routes
        if len(routes) >= _FAST_ROUTES_MAX:
            routes.clear()
        handler = routes[subject] = self._fast_handler(subject) or False
        return handler

    def _fast_handler(self, subject: bytes) -> FastHandler | None:
        if self.faults.rules or self.trace is not None or self.queue_policies.rules or subject[:5] == b"$NRG.":
            return None
        if self.domain_api is not None:
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
        if target is None or target.max or target.closed:
            return None
        handler: FastHandler | None = getattr(target.client, "fast_batch", None)
        return handler

    def reply(self, reply: bytes, hdr: int, msg: bytes) -> None:
        """Send a server message (no reply subject of its own) to ``reply``: ``route`` with
        the match result reduced to a plan of plain client subscriptions, cached per
        reply subject (a requester's inbox sees many replies)."""
        plan = self.reply_plans.get(reply)
        if plan is None:
            plan = self._reply_plan(reply)
        if plan is False:
            self.route(None, reply, None, hdr, msg)
            return
        for sub, conn, hmsg, pmsg in plan:  # type: ignore[union-attr]
            if conn.closed:
                continue
            sub.nm += 1
            conn.out_msgs += 1
            conn.out_bytes += len(msg)
            if hdr <= 0:
                conn.out.append(pmsg + b"%d\r\n" % len(msg) + msg + b"\r\n")
            elif conn.headers:
                conn.out.append(hmsg + b"%d %d\r\n" % (hdr, len(msg)) + msg + b"\r\n")
            else:
                conn.out.append(pmsg + b"%d\r\n" % (len(msg) - hdr) + msg[hdr:] + b"\r\n")
            if not conn.dirty:
                conn.dirty = True
                self.mark_dirty(conn)

    def reply_many(self, msgs: Sequence[tuple[bytes, bytes]]) -> None:
        """``reply(subject, -1, payload)`` for each ``(subject, payload)``, in order; runs to
        one reply subject go through ``reply_same``."""
        i, n = 0, len(msgs)
        while i < n:
            reply = msgs[i][0]
            j = i + 1
            while j < n and msgs[j][0] == reply:
                j += 1
            self.reply_same(reply, [m[1] for m in msgs[i:j]])
            i = j

    def reply_same(self, reply: bytes, payloads: list[bytes]) -> None:
        """``reply(reply, -1, payload)`` for each payload, encoded and queued together (a
        pipelining publisher's acks)."""
        plan = self.reply_plans.get(reply)
        if plan is None:
            plan = self._reply_plan(reply)
        if plan is False:
            for payload in payloads:
                self.route(None, reply, None, -1, payload)
            return
        count = len(payloads)
        for sub, conn, _, pmsg in plan:  # type: ignore[union-attr]
            if conn.closed:
                continue
            sub.nm += count
            conn.out_msgs += count
            conn.out_bytes += sum(map(len, payloads))
            conn.out += [b"%b%d\r\n%b\r\n" % (pmsg, len(p), p) for p in payloads]
            if not conn.dirty:
                conn.dirty = True
                self.mark_dirty(conn)

    def reply_batch(self, reply: bytes, items: list[tuple[int, bytes]]) -> None:
        """``reply(reply, hdr, msg)`` for each ``(hdr, msg)``, encoded and queued together
        (the messages of a Direct Get batch)."""
        if not items:
            return
        plan = self.reply_plans.get(reply)
        if plan is None:
            plan = self._reply_plan(reply)
        if plan is False:
            for hdr, msg in items:
                self.route(None, reply, None, hdr, msg)
            return
        count = len(items)
        for sub, conn, hmsg, pmsg in plan:  # type: ignore[union-attr]
            if conn.closed:
                continue
            sub.nm += count
            conn.out_msgs += count
            conn.out_bytes += sum(len(m) for _, m in items)
            if conn.headers:
                conn.out += [
                    b"%b%d %d\r\n%b\r\n" % (hmsg, h, len(m), m) if h > 0 else b"%b%d\r\n%b\r\n" % (pmsg, len(m), m)
                    for h, m in items
                ]
            else:
                conn.out += [b"%b%d\r\n%b\r\n" % (pmsg, len(m) - max(h, 0), m[max(h, 0) :]) for h, m in items]
            if not conn.dirty:
                conn.dirty = True
                self.mark_dirty(conn)

    def reply_tails(self, reply: bytes, tails: list[bytes], size: int) -> bool:
        """Send HMSGs whose ``<hdr len> <total len>\\r\\n<msg>\\r\\n`` parts (``tails``) are
        ready, to one reply subject (``size``: their message bytes in all), joined into one
        buffer. False, with nothing sent, when the plan is not plain or a listener lacks
        header support (then the caller uses ``reply``)."""
        plan = self.reply_plans.get(reply)
        if plan is None:
            plan = self._reply_plan(reply)
        if plan is False:
            return False
        for _, conn, _, _ in plan:  # type: ignore[union-attr]
            if not conn.headers and not conn.closed:
                return False
        count = len(tails)
        for sub, conn, hmsg, _ in plan:  # type: ignore[union-attr]
            if conn.closed:
                continue
            sub.nm += count
            conn.out_msgs += count
            conn.out_bytes += size
            conn.out.append(hmsg + hmsg.join(tails))
            if not conn.dirty:
                conn.dirty = True
                self.mark_dirty(conn)
        return True

    def hmsg_prefix(self, reply: bytes) -> bytes | None:
        """``HMSG <reply> <sid> `` when exactly one plain, header-capable subscription takes
        ``reply`` (then ``reply_hmsgs`` may carry frames built on it); else None."""
        plan = self.reply_plans.get(reply)
        if plan is None:
            plan = self._reply_plan(reply)
        if plan is False or len(plan) != 1:  # type: ignore[arg-type]
            return None
        _, conn, hmsg, _ = plan[0]  # type: ignore[index]
        return hmsg if conn.headers and not conn.closed else None

    def reply_hmsgs(self, reply: bytes, frames: list[bytes], size: int) -> None:
        """Queue complete HMSG frames made with ``hmsg_prefix(reply)`` (``size``: their
        message bytes in all) for that one subscription."""
        if not frames:
            return
        plan = self.reply_plans.get(reply)
        if plan is None:
            plan = self._reply_plan(reply)
        assert plan is not False and len(plan) == 1, "frames made for another plan"  # type: ignore[arg-type]
        sub, conn, _, _ = plan[0]  # type: ignore[index]
        if conn.closed:
            return
        sub.nm += len(frames)
        conn.out_msgs += len(frames)
        conn.out_bytes += size
        conn.out += frames
        if not conn.dirty:
            conn.dirty = True
            self.mark_dirty(conn)

    def _reply_plan(self, reply: bytes) -> tuple[_ReplyTarget, ...] | bool:
        result = self.sublist.match(reply)
        plan: tuple[_ReplyTarget, ...] | bool = False
        if not result.qsubs:
            targets = []
            for sub in result.psubs:
                conn = sub.client
                if type(conn) is not ClientConnection or sub.max or sub.closed:
                    break
                head = reply + b" " + sub.sid + b" "
                targets.append((sub, conn, b"HMSG " + head, b"MSG " + head))
            else:
                plan = tuple(targets)
        plans = self.reply_plans
        if len(plans) >= _FAST_ROUTES_MAX:
            plans.clear()
        plans[reply] = plan
        return plan

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

    # --- output batching --------------------------------------------------------------

    def mark_dirty(self, conn: ClientConnection) -> None:
        self._dirty.append(conn)
        if not self._flush_scheduled and self._loop is not None:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write out every connection that has queued output."""
        self._flush_scheduled = False
        dirty = self._dirty
        while dirty:
            self._dirty = []
            for conn in dirty:
                conn.flush()
            dirty = self._dirty
