"""The NATS core server: listener, connections, message routing, output batching (JetStream and
the control plane are added by :mod:`jsemu.app`)."""

from __future__ import annotations

import asyncio
import errno
import os
import random
import socket
import ssl
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, Self

from ..ids import nkey_like
from ..protocol.encoder import encode_info
from ..store.clock import Clock, SystemClock
from ..version import API_LEVEL, NATS_VERSION, PROTO_VERSION, __version__
from .account_requests import AccountRequests
from .account_resolver import AccountResolver
from .accounts import Account, AccountSpace
from .ack_lane import AckLane
from .advertise import AdvertiseError, join_host_port, parse_host_port
from .auth_callout import AuthCallout, server_key
from .claim_updates import ClaimUpdates
from .closed import MAX_CLOSED_CLIENTS, ClosedClient, closed_reason
from .cluster import Cluster
from .connection import ClientConnection
from .envelope import ServerEnvelope
from .faults import FaultInjector
from .interfaces import global_unicast_ips
from .js_limits import JetStreamLimits
from .lame_duck import LameDuck, shutdown_task
from .monitor import HttpApp, JetStreamReport, Monitor
from .node import Node
from .operator_auth import OperatorAuth
from .options import ServerOptions
from .outbound import Outbound
from .queue_policy import QueuePolicies
from .routing import GLOBAL_ACCOUNT, Router
from .run_lanes import RunLane
from .subject_mapping import SubjectMappings
from .sublist import Sublist
from .subscriber import Change, FastBatch
from .system_account import SystemAccount
from .timers import DeadlineTimers, LoopTimers
from .tls import ClientTls, server_context

if TYPE_CHECKING:
    from .websocket_listener import WebSocketListener

__all__ = ["Server", "Service"]


def _dual_stack_socket(port: int) -> socket.socket | None:
    """The wildcard listener as Go opens it for nats-server's default host ``0.0.0.0``: one IPv6
    socket on ``::`` that takes IPv4 clients too (``IPV6_V6ONLY`` off), so ``[::1]`` reaches the
    server as ``127.0.0.1`` does. None where the machine has no IPv6 (then IPv4 only); a port
    in use is an error here as on IPv4."""
    if not socket.has_ipv6:
        return None
    sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(("::", port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise
        return None
    return sock


def _host_urls(host: str, port: int) -> list[str]:
    """``host:port`` URLs of a listener (``getConnectURLs``): a wildcard host stands for
    each non-loopback address of the machine."""
    hosts = global_unicast_ips() if host in ("0.0.0.0", "::", "") else [host]
    return [join_host_port(h, port) for h in hosts]


def listen_backlog() -> int:
    """The accept queue's length as Go's ``net.Listen`` sets it (``maxListenerBacklog``: the
    kernel's ``somaxconn``, at most 65535). asyncio's default of 100 makes the kernel drop
    SYNs when many clients connect at once, and each dropped one costs its client a 1 s
    retransmit: 500 fresh connections took 1.1 s instead of 0.16 s."""
    try:
        with open("/proc/sys/net/core/somaxconn") as f:
            value = int(f.read().strip())
    except (OSError, ValueError):
        value = socket.SOMAXCONN
    return max(1, min(value, 65535))


class Flushable(Protocol):
    """A connection with queued output (a client's, a route's), written once per read."""

    def flush(self) -> None: ...


class Service(Protocol):
    """Something started with the server once its listener is up (JetStream, the control API)."""

    def start(self) -> None: ...


class Server(Router):
    """The NATS core: listener, connections, subscriptions, routing, monitoring port.

    It knows nothing of JetStream or the control plane: :class:`jsemu.app.Server` (the
    ``jsemu.Server`` of the guides) adds them through ``services`` and ``jetstream_report``.
    """

    #: ``$SYS.REQ.SERVER.<id>.RELOAD``: reload the configuration as SIGHUP does, the error text
    #: or None. ``jsemu serve`` sets it (the file again, the flags on top); a server started
    #: without a file answers nats-server's error for that (``NO_CONFIG_FILE``).
    reload_config: Callable[[], str | None] | None = None

    def __init__(self, options: ServerOptions | None = None, **kwargs: Any) -> None:
        if options is None:
            options = ServerOptions(**kwargs)
        elif kwargs:
            raise TypeError("pass either options or keyword arguments, not both")
        options.validate()
        self.options = options
        self.server_id = nkey_like("N")
        #: ``auth_callout`` (``server/auth_callout.py``): the server signs its requests with its
        #: own nkey, whose public key is then its id; None without.
        self.auth_callout: AuthCallout | None = None
        auth = options.auth
        if auth is not None and (auth.callout is not None or isinstance(auth, OperatorAuth)):
            key = server_key()
            self.server_id = key.public_key
            self.auth_callout = AuthCallout(self, key)
        self.xkey = nkey_like("X")
        if self.auth_callout is not None and self.auth_callout.curve is not None:
            self.xkey = self.auth_callout.curve.public_key  # the key requests are sealed with
        self.server_name = options.server_name or self.server_id  # nats-server: the id when no name is set
        #: The client listeners and the identities their clients see (``server/node.py``): this
        #: server's own, or with ``cluster_size`` N > 1 the simulated servers ``n1``..``nN``
        #: (the first with this server's id, which then takes its name).
        self.nodes = [Node(self.server_name, self.server_id, self.xkey, options.port)]
        if options.cluster_size > 1:
            names = options.cluster_node_names()
            self.server_name = names[0]
            self.nodes = [Node(names[0], self.server_id, self.xkey, options.port)]
            self.nodes += [Node(name, nkey_like("N"), nkey_like("X"), 0) for name in names[1:]]
        self.sublist = Sublist()
        self.rng = random.Random(int.from_bytes(os.urandom(16)))  # cheaper than seeding from 2.5 KB
        #: How queue group members are picked (random unless a test sets a policy).
        self.queue_policies = QueuePolicies(self.rng)
        self.queue_policies.changed = partial(self.invalidate_routes, Change.QUEUE_POLICY)
        #: Publish subject -> the ``fast_batch`` that takes it (False: none), for
        #: connections' fast lane: the learned routes of ``learn_route``.
        self.learned_routes: dict[bytes, FastBatch | bool] = {}
        self.sublist.derive(self.learned_routes)
        self.run_lanes: dict[bytes, RunLane] = {}
        self.sublist.derive(self.run_lanes)
        #: The direct route of JetStream acks (``server/ack_lane.py``).
        self.ack_lane = AckLane(self.sublist)
        #: Everything the server itself sends to a subject (replies, acks, Direct Get).
        self.outbound = Outbound(self.sublist, self.route, self.route_shown)
        #: The last client ops and API calls (``start_trace``); None while not tracing.
        self.trace: deque[tuple[Any, ...]] | None = None
        #: Rules that drop, delay or answer client messages instead of routing them.
        self.faults = FaultInjector(self)
        self.connections: dict[int, ClientConnection] = {}
        self.total_connections = 0
        #: in msgs, in bytes, out msgs, out bytes of connections that have closed (for /varz).
        self.closed_stats = [0, 0, 0, 0]
        #: The last closed connections, oldest first (``/connz?state=closed``).
        self.closed_clients: deque[ClosedClient] = deque(maxlen=MAX_CLOSED_CLIENTS)
        #: Clients cut as slow consumers (max_pending or write_deadline), for /varz.
        self.slow_consumers = 0
        #: ``write_deadline`` in force (nanoseconds; negative: every write fails at once).
        self.write_deadline_ns = options.write_deadline_ns()
        self.start_ns = time.time_ns()
        #: Operator mode: the accounts looked up so far (``server/account_lookups.py``).
        self.looked_up_accounts: set[str] = set()
        #: The server's clock (the app's controlled clock): ``allow_responses`` expiry.
        self.clock: Clock = SystemClock()
        #: Connection deadlines (auth timeout) on that clock; the app gives JetStream's timers.
        self.timers: DeadlineTimers = LoopTimers(self.clock, lambda: self.loop)
        self._cid = 4  # nats-server hands its first client id 5 (internal clients come first)
        self._dirty: list[Flushable] = []
        #: Work to do before the next flush writes (see :meth:`before_flush`).
        self._before_flush: list[Callable[[], None]] = []
        #: Seconds the producer of the current read should pause (consumers falling behind).
        self.stall = 0.0
        self._flush_scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The client port's TLS (server/tls.py), made at start; ``None``: plain.
        self.tls_context: ssl.SSLContext | None = None
        #: For tests: the CA (and client certificate) that reach this server over TLS.
        self.client_tls: ClientTls | None = None
        #: The keys and JWTs minted for an operator-mode test server (``jsemu.testing.operator``).
        self.operator: Any = None
        #: Started in order once the listener is up (the wiring adds JetStream and the control API).
        self.services: list[Service] = []
        #: JetStream's figures for the monitoring port (None: it shows JetStream off).
        self.jetstream_report: JetStreamReport | None = None
        #: The HTTP monitoring port (``http_port``), while running: the first node's.
        self.monitor: Monitor | None = None
        #: Every node's monitoring port, in node order (a simulated cluster has one per node).
        self.monitors: list[Monitor] = []
        #: Pages the monitoring port serves beside its JSON (the console, set by ``jsemu.app``).
        self.http_app: HttpApp | None = None
        #: ``client_advertise`` as (host, port), read once the port is known; None: the listener's.
        self.client_advertise: tuple[str, int] | None = None
        #: With a JetStream domain, the prefix of subjects mapped onto the local JetStream API.
        self.domain_api = f"$JS.{options.domain}.API.".encode() if options.jetstream and options.domain else None
        #: The cluster's name in client INFO (``cluster``) while this server is in one.
        self.info_cluster: str | None = (options.cluster_name or "jsemu") if options.cluster_size > 1 else None
        #: In lame duck mode: the listener is closed and clients are being closed one by one.
        self.lame_duck = False
        #: Called when lame duck mode starts, before the clients hear of it (the app shuts
        #: JetStream down there).
        self.lame_duck_hooks: list[Callable[[], None]] = []
        #: Set once a lame duck run has closed every client and stopped the server.
        self.lame_duck_done = asyncio.Event()
        self.lame_duck_task: asyncio.Future[None] | None = None
        self._lame_duck: LameDuck | None = None
        self.name = GLOBAL_ACCOUNT
        #: The server is the router of ``$G``; each configured account has its own.
        self.mappings = SubjectMappings(list(options.mappings), self.rng) if options.mappings else None
        self.account_space = AccountSpace(self, options.accounts)
        #: ``$SYS.REQ.SERVER`` requests and connect events, when the system account has users
        #: (``system_account``, or an account named ``$SYS``); None otherwise.
        self.system: SystemAccount | None = None
        #: The ``server`` block (and its ``seq``) of every system message this server sends.
        self.envelope = ServerEnvelope(self)
        #: ``$SYS.REQ.ACCOUNT.<acc>.<kind>`` and ``$SYS.REQ.USER.INFO`` (every account's imports).
        self.account_requests = AccountRequests(self)
        self.services.append(self.account_requests)
        #: Account JWTs pushed to ``$SYS.REQ.ACCOUNT.<key>.CLAIMS.UPDATE`` (operator mode only).
        self.claim_updates = ClaimUpdates(self)
        self.services.append(self.claim_updates)
        #: The NATS-based account resolver's ``$SYS.REQ.CLAIMS.*`` requests (operator mode with a dir).
        self.account_resolver = AccountResolver(self)
        self.services.append(self.account_resolver)
        system_router = self.account_space.by_name.get(options.system_account)
        if system_router is not None and system_router is not self:
            self.system = SystemAccount(self, system_router)
            self.services.append(self.system)
        #: Routes to the other server processes of a cluster (``server/cluster.py``), if configured.
        self.cluster = Cluster(self, options.cluster) if options.cluster is not None else None
        #: The WebSocket port (``websocket {}``), on the first node; None without one.
        self.websocket: WebSocketListener | None = None

    # --- lifecycle --------------------------------------------------------------------

    def start_trace(self, size: int = 200) -> None:
        """Keep the last ``size`` client protocol ops and JetStream API calls, for showing
        what the server saw when a test fails (see :func:`jsemu.testing.trace.format_trace`)."""
        self.trace = deque(self.trace or (), maxlen=size)
        self.sublist.invalidate(Change.TRACE)  # traced publishes leave the fast lane
        self.account_space.set_trace()

    def invalidate_routes(self, change: Change) -> None:
        """A change that concerns every account (fault rules, queue policies)."""
        self.account_space.invalidate(change)

    async def start(self) -> Self:
        self._loop = asyncio.get_running_loop()
        opts = self.options
        try:
            for node in self.nodes:
                await self._listen(node)
        except OSError:
            await self._close_listeners()
            raise
        if opts.client_advertise:
            try:
                self.client_advertise = parse_host_port(opts.client_advertise, self.nodes[0].port)
            except AdvertiseError as exc:
                await self._close_listeners()
                raise AdvertiseError(
                    f"Error setting server INFO with ClientAdvertise value of {opts.client_advertise}, err={exc}"
                ) from None
        for node in self.nodes:
            node.info_base = self._build_info(node)
        if len(self.nodes) > 1:  # the simulated servers know each other's client URLs
            for node in self.nodes:
                for other in self.nodes:
                    if other is not node:
                        node.add_urls(self.own_connect_urls(other))
                node.refresh_urls(self.own_connect_urls(node))
        self.tls_context = server_context(opts.tls) if opts.tls is not None else None
        if opts.websocket is not None:
            from .websocket_listener import WebSocketListener  # h11, wsproto: only with a websocket port

            self.websocket = WebSocketListener(self, self.nodes[0], opts.websocket)
            try:
                await self.websocket.start()
            except OSError:
                await self._close_listeners()
                raise
        for service in self.services:
            service.start()
        if self.cluster is not None:
            await self.cluster.start()
        if opts.http_port:  # 0 or None: no monitoring port; -1: a random one
            # One per node: the first on ``http_port``, the others (a simulated cluster's) on
            # random ports, as their client listeners are.
            for i, node in enumerate(self.nodes):
                monitor = Monitor(self, self.jetstream_report, node)
                self.monitors.append(monitor)
                if i == 0:
                    self.monitor = monitor
                await monitor.start(opts.host, opts.http_port if i == 0 else -1)
        return self

    def close_listener(self) -> None:
        """Accept no new client (lame duck mode); the monitoring port stays."""
        for node in self.nodes:
            node.close()
        if self.websocket is not None:
            self.websocket.close()

    def enter_lame_duck(self) -> bool:
        """Lame duck mode (``server/lame_duck.py``); False if already in it or not running."""
        if self.lame_duck or not any(node.listeners for node in self.nodes):
            return False
        self._lame_duck = LameDuck(self, shutdown_task(self))
        self._lame_duck.enter()
        return True

    async def _listen(self, node: Node) -> None:
        opts = self.options
        wildcard = _dual_stack_socket(node.port) if opts.host in ("0.0.0.0", "") else None
        if wildcard is not None:
            listener = await self.loop.create_server(
                partial(ClientConnection, self, node), sock=wildcard, backlog=listen_backlog()
            )
        else:
            listener = await self.loop.create_server(
                partial(ClientConnection, self, node),
                host=opts.host,
                port=node.port,
                reuse_address=True,
                backlog=listen_backlog(),
            )
        node.listening(listener, wildcard is not None)

    async def _close_listeners(self) -> None:
        closed = [listener for node in self.nodes for listener in node.close()]
        for listener in closed:
            await listener.wait_closed()

    async def stop(self) -> None:
        self.account_resolver.stop()
        if self.cluster is not None:
            await self.cluster.stop()
        if self._lame_duck is not None:
            self._lame_duck.cancel()
        for monitor in self.monitors:
            await monitor.stop()
        self.monitors = []
        self.monitor = None
        closed = [listener for node in self.nodes for listener in node.close()]
        if self.websocket is not None:
            if (ws := self.websocket.close()) is not None:
                closed.append(ws)
            self.websocket.shutting_down(self.connections.values())
        for conn in list(self.connections.values()):
            conn.close_with_error(None)
        for listener in closed:
            await listener.wait_closed()

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
        """The client port (the first node's in a simulated cluster)."""
        return self.nodes[0].port

    @property
    def host(self) -> str:
        return self.options.host

    @property
    def url(self) -> str:
        """The client URL (the first node's in a simulated cluster)."""
        return self.node_url(self.nodes[0])

    @property
    def ws_url(self) -> str:
        """The WebSocket URL (``ws://`` or ``wss://``) with a ``websocket`` port; empty without."""
        return self.websocket.url if self.websocket is not None else ""

    @property
    def urls(self) -> list[str]:
        """Every node's client URL, in node order (one for a standalone server)."""
        return [self.node_url(node) for node in self.nodes]

    def node_url(self, node: Node) -> str:
        host = self.options.host
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"{'tls' if self.options.tls is not None else 'nats'}://{host}:{node.port}"

    @property
    def monitor_urls(self) -> list[str]:
        """Every node's monitoring URL (``http://host:port``), in node order; empty without ``http_port``."""
        host = self.options.host
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return [f"http://{host}:{monitor.port}" for monitor in self.monitors]

    def node(self, name: str) -> Node:
        """The node (simulated server) called ``name``; KeyError if there is none."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    # --- connections ------------------------------------------------------------------

    def next_client_id(self) -> int:
        self._cid += 1
        return self._cid

    def add_connection(self, conn: ClientConnection) -> None:
        self.connections[conn.cid] = conn
        self.total_connections += 1
        conn.node.total_connections += 1

    def advertised(self, node: Node) -> tuple[str, int]:
        """The host and port a node's INFO and ``/varz`` give: ``client_advertise``'s for the
        first node (this server's own), the listener's otherwise."""
        if self.client_advertise is not None and node is self.nodes[0]:
            return self.client_advertise
        return self.options.host, node.port

    def account_limits_changed(self, account: str, limits: JetStreamLimits) -> None:
        """An account claim update changed an account's JetStream limits (the app tells JetStream)."""

    def account_jetstream_changed(self, account: Account) -> None:
        """A claim update turned the account's JetStream on or off (the app starts or stops it)."""

    def account_added(self, account: Account) -> None:
        """The account resolver added an account while running (the app gives it JetStream)."""

    def remove_connection(self, conn: ClientConnection, error: str | None = None) -> None:
        """Forget a connection that closed (with ``error``, None: the client left), keeping
        its counters for /varz and its record for ``/connz?state=closed``."""
        if self.connections.pop(conn.cid, None) is not None:
            subs = list(conn.subs.values())
            subjects = [sub.subject for sub in subs]
            pending = sum(map(len, conn.out))
            self.closed_clients.append(
                ClosedClient(conn, closed_reason(error), time.time_ns(), subjects, pending, subs)
            )
            closed = self.closed_stats
            closed[0] += conn.in_msgs
            closed[1] += conn.in_bytes
            closed[2] += conn.out_msgs
            closed[3] += conn.out_bytes
            node = conn.node
            stats = node.closed_stats
            stats[0] += conn.in_msgs
            stats[1] += conn.in_bytes
            stats[2] += conn.out_msgs
            stats[3] += conn.out_bytes

    def request_stall(self, seconds: float) -> None:
        self.stall = max(self.stall, seconds)

    def refresh_info(self) -> None:
        """The client INFO again after a configuration reload (``max_payload``, auth)."""
        for node in self.nodes:
            if node.info_base:
                node.info_base = self._build_info(node)

    def _build_info(self, node: Node) -> dict[str, Any]:
        opts = self.options
        host, port = self.advertised(node)
        info: dict[str, Any] = {
            "server_id": node.server_id,
            "server_name": node.name,
            "version": NATS_VERSION,
            "proto": PROTO_VERSION,
            "git_commit": f"jsemu-{__version__}",
            "go": f"python{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}",
            "host": host,
            "port": port,
            "headers": True,
        }
        if opts.auth is not None and not opts.auth.no_auth_user:  # nats-server leaves it out then
            info["auth_required"] = True
        if opts.tls is not None:
            info["tls_required"] = True
            if opts.tls.verify:
                info["tls_verify"] = True
        info |= {
            "max_payload": opts.max_payload,
        }
        if opts.jetstream:
            info["jetstream"] = True
        return info

    def client_info(self, conn: ClientConnection, connect_info: bool = False) -> dict[str, Any]:
        """The INFO a client gets, in the field order of nats-server's ``Info`` struct."""
        node = conn.node
        info = dict(node.info_base if conn.info_base is None else conn.info_base)
        info["client_id"] = conn.cid
        if conn.client_ip:
            info["client_ip"] = conn.client_ip
        if conn.nonce:
            info["nonce"] = conn.nonce
        self._cluster_fields(info, node, ws=conn.info_base is not None)
        if connect_info:
            info["connect_info"] = True
            info["remote_account"] = conn.account.name
            info["max_payload"] = min(info["max_payload"], conn.parser.max_payload)  # a user JWT's ``payload``
        info["api_lvl"] = API_LEVEL
        info["xkey"] = node.xkey
        return info

    def _cluster_fields(self, info: dict[str, Any], node: Node, ldm: bool = False, ws: bool = False) -> None:
        """``ws``: a WebSocket client's INFO, whose ``connect_urls`` are the cluster's
        WebSocket URLs (``generateClientInfoJSON``)."""
        if self.info_cluster:
            info["cluster"] = self.info_cluster
        if self.options.jetstream and self.options.domain:
            info["domain"] = self.options.domain
        urls = node.ws_info_urls if ws else node.info_urls
        if urls:
            info["connect_urls"] = list(urls)
        if ldm:
            info["ldm"] = True

    # --- cluster URLs and async INFO ----------------------------------------------------
    #
    # nats-server tells clients where else they can connect: once a peer's client URLs arrive
    # over a route, client INFO carries ``connect_urls`` (this server's own, then the peers'),
    # and every change is pushed as an INFO to the clients that asked for async INFO
    # (CONNECT ``protocol`` 1) and have had their first PONG; the others learn it from the INFO
    # after that first PING. Lame duck mode sends one last INFO with ``ldm`` and the peers'
    # URLs only.

    def own_connect_urls(self, node: Node | None = None) -> list[str]:
        """A node's (default: the first's) client URLs as ``host:port``
        (``getClientConnectURLs``): ``client_advertise`` alone if set, else the wildcard host
        stands for each non-loopback address of the machine."""
        node = node or self.nodes[0]
        if self.client_advertise is not None and node is self.nodes[0]:
            return [join_host_port(*self.client_advertise)]
        return _host_urls(self.options.host, node.port)

    def own_ws_connect_urls(self) -> list[str]:
        """The WebSocket port's URLs as ``host:port`` (``websocket.connectURLs``): its
        ``advertise`` alone if set, else as :meth:`own_connect_urls`; none without one."""
        ws = self.websocket
        if ws is None:
            return []
        if ws.options.advertise:
            return [join_host_port(*parse_host_port(ws.options.advertise, ws.port))]
        return _host_urls(ws.options.host, ws.port)

    def add_connect_urls(self, urls: list[str], nodes: list[Node] | None = None, ws_urls: Sequence[str] = ()) -> None:
        """A peer advertises ``urls`` (and WebSocket ``ws_urls``) to ``nodes`` (default: all):
        add them (counted) and tell the clients of each node that learnt something new
        (TCP clients of new client URLs, WebSocket clients of new WebSocket ones)."""
        for node in self.nodes if nodes is None else nodes:
            cli, ws = node.add_urls(urls), node.add_urls(list(ws_urls), ws=True)
            if cli or ws:
                self._refresh_info_urls(node, cli, ws)

    def remove_connect_urls(
        self, urls: list[str], nodes: list[Node] | None = None, ws_urls: Sequence[str] = ()
    ) -> None:
        """A peer that advertised ``urls`` (and ``ws_urls``) to ``nodes`` (default: all) is gone."""
        for node in self.nodes if nodes is None else nodes:
            cli, ws = node.remove_urls(urls), node.remove_urls(list(ws_urls), ws=True)
            if cli or ws:
                self._refresh_info_urls(node, cli, ws)

    def _refresh_info_urls(self, node: Node, cli: bool = True, ws: bool = False) -> None:
        if cli:
            node.refresh_urls([] if self.lame_duck else self.own_connect_urls(node))
        if ws:
            own = [] if self.lame_duck or node is not self.nodes[0] else self.own_ws_connect_urls()
            node.refresh_urls(own, ws=True)
        self.send_async_info(nodes=[node], tcp=cli, ws=ws)

    def send_async_info(
        self,
        ldm: bool = False,
        nodes: list[Node] | None = None,
        only: ClientConnection | None = None,
        tcp: bool = True,
        ws: bool = True,
    ) -> None:
        """An INFO to every client (of ``nodes``, default: all; or ``only`` that one; TCP ones
        with ``tcp``, WebSocket ones with ``ws``) that takes async INFO
        (``sendAsyncInfoToClients``): its listener's INFO with the client's id and address, no
        nonce, no ``connect_info``."""
        if not self.nodes[0].info_base:
            return
        for conn in [only] if only is not None else list(self.connections.values()):
            if conn.closed or not conn.first_pong_sent or conn.opts.get("protocol", 0) < 1:
                continue
            node = conn.node
            if nodes is not None and node not in nodes:
                continue
            is_ws = conn.info_base is not None
            if not (ws if is_ws else tcp):
                continue
            info = dict(node.info_base if conn.info_base is None else conn.info_base)
            info["client_id"] = conn.cid
            if conn.client_ip:
                info["client_ip"] = conn.client_ip
            self._cluster_fields(info, node, ldm, ws=is_ws)
            info["api_lvl"] = API_LEVEL
            info["xkey"] = node.xkey
            conn.send(encode_info(info))

    def send_lame_duck_info(self) -> None:
        """The lame duck INFO (``sendLDMToClients``): ``ldm`` and only the peers' URLs (none
        with ``no_advertise``, which leaves the peer set empty)."""
        self.lame_duck = True
        for node in self.nodes:
            node.info_urls = list(node.peer_urls)
            node.ws_info_urls = list(node.ws_peer_urls)
        self.send_async_info(ldm=True)

    # --- simulated servers going away and coming back ---------------------------------------

    def node_down(self, name: str) -> Node:
        """Take a node down as its process would go (``KeyError``: no such node): its port
        refuses connections, its clients are closed without a word (nats-server's shutdown),
        the other nodes' clients get an INFO without its URLs."""
        node = self.node(name)
        if not node.up:
            return node
        node.close()
        for monitor in self.monitors:
            if monitor.node is node:
                monitor.close()
        for conn in list(self.connections.values()):
            if conn.node is node:
                conn.close_with_error(None)
        self.remove_connect_urls(self.own_connect_urls(node), [n for n in self.nodes if n is not node])
        self.flush()
        return node

    def node_up(self, name: str) -> Node:
        """Bring a node taken down back on the same port; the others advertise it again."""
        node = self.node(name)
        if node.up:
            return node
        node.reopen(self.loop, partial(ClientConnection, self, node), listen_backlog())
        for monitor in self.monitors:
            if monitor.node is node:
                monitor.reopen(self.options.host)
        self.add_connect_urls(self.own_connect_urls(node), [n for n in self.nodes if n is not node])
        self.flush()
        return node

    # --- routing ----------------------------------------------------------------------

    # --- output batching --------------------------------------------------------------

    def mark_dirty(self, conn: Flushable) -> None:
        self._dirty.append(conn)
        if not self._flush_scheduled and self._loop is not None:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def before_flush(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` just before the next flush: at the end of the read being handled (so
        what it queues goes out in the same write as the read's replies), else in the next
        turn of the loop.

        JetStream delivers a stored message this way: nats-server queues the PubAck and
        then, from the consumer's goroutine, the delivery, and its writer flushes both in
        one write to a client that is publisher and subscriber. Written apart, a client
        that sends the next publish on the PubAck reads one delivery with the next (two
        messages at once to one queue member: a slow consumer to a small pending limit).
        """
        self._before_flush.append(fn)
        if not self._flush_scheduled and self._loop is not None:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write out every connection that has queued output."""
        self._flush_scheduled = False
        while self._before_flush:
            due, self._before_flush = self._before_flush, []
            for fn in due:
                fn()
        dirty = self._dirty
        while dirty:
            self._dirty = []
            for conn in dirty:
                conn.flush()
            dirty = self._dirty
