"""A cluster of server processes: the route listener, solicited routes and interest propagation.

Theory of operation
-------------------
``cluster {}`` (or ``--cluster``/``--routes``) makes the server listen for routes and dial
the configured ones (explicit routes, retried every second for ever). Every registered route
is a full-mesh link to one other server, keyed by that server's id. Peers learn about each
other by gossip, as nats-server's servers do: when a route registers, its INFO is forwarded
(with the remote's route URL as ``ip``) to the other routes, and a server that hears of a
peer it has no route to dials it (an implicit route, tried ``connect_retries`` + 1 times).
When two servers dial each other, both keep the route dialled by the server with the smaller
id, so they agree without talking; the other is closed as ``Duplicate Route`` and not redialled.

Interest: this server tells each route about every subscription of each account that a
remote must know of (clients', and the server's own: streams' subjects, replies, consumers'
acks) as ``RS+``, once per subject for plain subscriptions and with the member count as the
weight for a queue group, and ``RS-`` when the last one goes (``Sublist.on_change`` reports
each change). The control plane and Raft subjects stay local. The JetStream API
(``$JS.API.``) stays local too, except in the accounts whose JetStream the cluster's
metadata leader runs (``server/meta_leader.py``): only the leader subscribes it there, so its
interest crosses the routes and a request reaches exactly one JetStream.

Routing: a configured cluster replaces each account's ``route`` with :func:`route_local`,
which delivers to local subscribers as ``Router.route`` does and sends a message once to each
route with interest, naming the remote queue groups chosen for it (a remote queue member is
one more candidate, weighted, in the random pick: nats-server has no local preference for a
client's publish). ``Router.route_shown`` (a consumer's delivery, matched on its deliver
subject and shown with the stored message's) becomes :func:`route_shown_local`, which sends
such a delivery to a route as nats-server does, ``<reply>@<shown subject>`` in the reply
(``protocol/route_ops.py``). A server without a cluster keeps both untouched.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import string
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..protocol.encoder import encode_info
from ..protocol.route_ops import encode_rs_minus, encode_rs_plus, js_ack_deliver_index
from ..version import NATS_VERSION
from .ack_lane import ACK_PREFIX
from .advertise import AdvertiseError, join_host_port, parse_host_port
from .nkeys import new_nonce
from .options import ClusterOptions
from .route import RouteConnection
from .sublist import MatchResult, Subscription

if TYPE_CHECKING:
    from .meta_leader import MetaLeader
    from .routing import Router
    from .server import Server

__all__ = ["Cluster", "route_local", "route_shown_local"]

log = logging.getLogger("jsemu.server")

#: nats-server's ``DEFAULT_ROUTE_CONNECT``: the pause between attempts to dial a route.
ROUTE_CONNECT_INTERVAL = 1.0
#: The closed reason of a route a reload dropped from the ``routes`` list (not redialled).
ROUTE_REMOVED = "Route Removed"
#: Route protocol version nats-server 2.15 announces.
ROUTE_PROTO = 3
#: Subjects whose interest stays on this server (see the module docstring).
LOCAL_ONLY = (b"$JS.API.", b"$JSEMU.", b"$JSC.", b"$NRG.")
_JS_API = b"$JS.API."


_NO_QUEUES: list[bytes] = []
_ACCOUNT_BYTES: dict[str, bytes] = {}


def _account_bytes(router: Router) -> bytes:
    """The account's name as the route ops carry it (encoded once)."""
    name = router.name
    found = _ACCOUNT_BYTES.get(name)
    if found is None:
        found = _ACCOUNT_BYTES[name] = name.encode()
    return found


def route_local(router: Router, producer: object, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
    """``Router.route`` in a cluster: local subscribers as there, and each route with
    interest once, with the names of the remote queue groups that take the message."""
    if subject[:8] == ACK_PREFIX and router.ack_lane.deliver(subject, reply, hdr, msg):
        return True
    router.origin = producer
    result = router.sublist.match(subject)
    psubs = result.psubs
    if len(psubs) == 1 and not result.qsubs:  # one subscriber: often a route alone
        client = psubs[0].client
        if client.__class__ is RouteConnection:
            return client.send_msg(_account_bytes(router), subject, reply, hdr, msg, _NO_QUEUES)
    delivered, targets = _local_then_routes(router, result, subject, subject, reply, hdr, msg, producer)
    if targets:
        account = _account_bytes(router)
        for route, queues in targets.items():
            if route.send_msg(account, subject, reply, hdr, msg, queues):
                delivered = True
    return delivered


def route_shown_local(router: Router, subject: bytes, shown: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
    """``Router.route_shown`` in a cluster: local subscribers as there; a route with interest
    in ``subject`` gets the message once, shown subject after an ``@`` in the reply
    (``processMsgResults``: only when there is a reply, and not twice)."""
    result = router.sublist.match(subject)
    delivered, targets = _local_then_routes(router, result, subject, shown, reply, hdr, msg, None)
    if targets:
        account = _account_bytes(router)
        if reply and js_ack_deliver_index(reply) < 0:
            reply = reply + b"@" + shown
        for route, queues in targets.items():
            if route.send_msg(account, subject, reply, hdr, msg, queues):
                delivered = True
    return delivered


def _local_then_routes(
    router: Router,
    result: MatchResult,
    subject: bytes,
    shown: bytes,
    reply: bytes | None,
    hdr: int,
    msg: bytes,
    producer: object,
) -> tuple[bool, dict[RouteConnection, list[bytes]] | None]:
    """Deliver to the local subscribers of ``result`` (showing ``shown``; no echo to a
    producer that asked for none) and pick one member per queue group, a remote one counting
    as one candidate; return whether a local subscriber took it and, per route to send it
    to, the remote queue groups it was picked for."""
    delivered = False
    no_echo = producer is not None and not getattr(producer, "echo", True)
    targets: dict[RouteConnection, list[bytes]] | None = None
    for sub in result.psubs:
        client = sub.client
        if client.__class__ is RouteConnection:
            if targets is None:
                targets = {}
            targets.setdefault(client, [])
            continue
        if no_echo and (client is producer or getattr(client, "conn", None) is producer):
            continue
        if router._deliver(sub, shown, reply, hdr, msg):
            delivered = True
    for group in result.qsubs:
        n = len(group)
        start = router._queue_start(subject, group)
        for i in range(n):
            sub = group[(start + i) % n]
            client = sub.client
            if client.__class__ is RouteConnection:
                if targets is None:
                    targets = {}
                targets.setdefault(client, []).append(sub.queue or b"")
                break
            if no_echo and (client is producer or getattr(client, "conn", None) is producer):
                continue
            if router._deliver(sub, shown, reply, hdr, msg):
                delivered = True
                break
    return delivered, targets


class _Interest:
    """One account's local interest as the routes know it: plain subjects and queue groups
    with their member counts."""

    __slots__ = ("known", "plain", "queues")

    def __init__(self) -> None:
        self.known: set[Subscription] = set()
        self.plain: dict[bytes, int] = {}
        self.queues: dict[tuple[bytes, bytes], int] = {}


class Cluster:
    """The route side of one server (see the module docstring)."""

    def __init__(self, server: Server, options: ClusterOptions) -> None:
        self.server = server
        self.options = options
        #: nats-server makes up a name when none is configured, and takes a configured one
        #: (or a larger dynamic one) from the first peer that has it.
        self.dynamic = not options.name
        self.name = options.name or _nuid()
        #: Registered routes by the remote server's id.
        self.routes: dict[str, RouteConnection] = {}
        #: Every open route connection, registered or still in its handshake.
        self.connections: set[RouteConnection] = set()
        self.port = options.port
        #: The cluster's ``advertise`` as (host, port), read at start; None: the listener's.
        self.advertise: tuple[str, int] | None = None
        self._listener: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._dialling: set[str] = set()
        #: ``host:port`` -> the task dialling it (a reload that drops a route stops it).
        self._dial_tasks: dict[str, asyncio.Task[None]] = {}
        self._interest: dict[Router, _Interest] = {}
        self._stopping = False
        #: Account name on the wire -> its router (accounts are fixed at start).
        self._routers: dict[bytes, Router] = {}
        #: The JetStream election, when JetStream is on (the app sets it: ``server/meta_leader.py``).
        self.meta: MetaLeader | None = None

    # --- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        server = self.server
        loop = server.loop
        opts = self.options
        self._listener = await loop.create_server(
            lambda: self._track(RouteConnection(self)), host=opts.host, port=opts.port, reuse_address=True
        )
        self.port = opts.port = self._listener.sockets[0].getsockname()[1]  # as Go's opts, for reload
        if opts.advertise:  # ``setRouteInfoHostPortAndIP``
            try:
                self.advertise = parse_host_port(opts.advertise, self.port)
            except AdvertiseError as exc:
                self._listener.close()
                raise AdvertiseError(
                    f"Error setting route INFO with Cluster.Advertise value of {opts.advertise}, err={exc}"
                ) from None
        server.info_cluster = self.name
        for router in server.account_space.by_name.values():
            self._attach(router)
        log.info("Cluster name is %s", self.name)
        if self.dynamic:
            log.warning("Cluster name was dynamically generated, consider setting one")
        log.info("Listening for route connections on %s:%d", opts.host, self.port)
        for url in opts.routes:
            self._dial(url, explicit=True)
        if self.meta is not None:
            self.meta.begin()

    async def stop(self) -> None:
        self._stopping = True
        if self._listener is not None:
            self._listener.close()
        for task in list(self._tasks):
            task.cancel()
        for route in list(self.connections):
            route.close(None, "Server Shutdown")
        if self._listener is not None:
            await self._listener.wait_closed()
            self._listener = None

    def attach_account(self, router: Router) -> None:
        """An account a configuration reload added: routed like those configured at start."""
        self._attach(router)

    def _attach(self, router: Router) -> None:
        """Route the account's messages through the cluster and follow its interest."""
        interest = self._interest[router] = _Interest()
        for sub in router.sublist.reaching([]):
            self._local_change(router, interest, sub)
        router.sublist.on_change.append(partial(self._local_change, router, interest))
        clustered: Callable[[object, bytes, bytes | None, int, bytes], bool] = partial(route_local, router)
        router.route = clustered  # type: ignore[method-assign,assignment]  # see the module docstring
        shown: Callable[[bytes, bytes, bytes | None, int, bytes], bool] = partial(route_shown_local, router)
        router.route_shown = shown  # type: ignore[method-assign,assignment]
        router.outbound.reroute(clustered, shown)

    def _track(self, route: RouteConnection) -> RouteConnection:
        self.connections.add(route)
        return route

    # --- dialling -----------------------------------------------------------------------

    def _dial(self, url: str, explicit: bool) -> None:
        parts = urlsplit(url if "://" in url else f"nats://{url}")
        host, port = parts.hostname or "127.0.0.1", parts.port or 6222
        target = f"{host}:{port}"
        if target in self._dialling:
            return
        self._dialling.add(target)
        task = self.server.loop.create_task(self._keep_dialling(host, port, explicit))
        self._tasks.add(task)
        self._dial_tasks[target] = task
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _t: self._dialling.discard(target))
        task.add_done_callback(
            lambda t: self._dial_tasks.pop(target, None) if self._dial_tasks.get(target) is t else None
        )

    async def _keep_dialling(self, host: str, port: int, explicit: bool) -> None:
        loop = self.server.loop
        attempt = 0
        tries = None if explicit else self.options.connect_retries + 1
        while not self._stopping:
            attempt += 1
            try:
                _, route = await loop.create_connection(
                    lambda: self._track(RouteConnection(self, solicited=True, url=f"{host}:{port}")), host, port
                )
            except OSError as exc:
                if explicit and attempt == 1 and self.meta is not None:
                    self.meta.dialled(f"{host}:{port}")
                log.error(
                    "Error trying to connect to route (attempt %d): dial tcp %s:%d: %s",
                    attempt,
                    host,
                    port,
                    _dial_error(exc),
                )
                if tries is not None and attempt >= tries:
                    return
                await asyncio.sleep(ROUTE_CONNECT_INTERVAL)
                continue
            attempt = 0
            await route.done
            if route.close_reason in ("Duplicate Route", "Cluster Name Conflict", "Server Shutdown", ROUTE_REMOVED):
                return
            if not explicit:
                return
            await asyncio.sleep(ROUTE_CONNECT_INTERVAL)

    def reload_routes(self, old: list[str], new: list[str]) -> None:
        """A reload changed the ``routes`` list (``routesOption.Apply``): close the routes to
        URLs no longer listed (``Removed route <url>`` after each), dial the new ones."""
        for url in old:
            if url in new:
                continue
            target = _target(url)
            task = self._dial_tasks.pop(target, None)
            if task is not None:
                task.cancel()
            for route in [r for r in self.connections if r.solicited and r.url == target]:
                route.close(None, ROUTE_REMOVED)
                log.info("Removed route %s", url)
        for url in new:
            if url not in old:
                self._dial(url, explicit=True)

    def reload_settings(self, options: ClusterOptions) -> None:
        """A reload changed the block (``clusterOption.Apply``): the new settings in force, a
        new name as ``setClusterName`` (logged; the routes stay, clients are not told)."""
        options.port = self.options.port
        self.options = options
        if options.name and options.name != self.name:
            self.name = options.name
            self.dynamic = False
            self.server.info_cluster = options.name
            log.info("Cluster name updated to %s", options.name)

    def learn_peer(self, info: dict[str, Any]) -> None:
        """Gossip: a route told us of a server of the cluster; dial it unless a route to it exists."""
        remote_id = str(info.get("server_id") or "")
        if not remote_id or remote_id == self.server.server_id or remote_id in self.routes:
            return
        ip = str(info.get("ip") or "")
        if ip:
            self._dial(ip, explicit=False)
        elif info.get("host") and info.get("port"):
            self._dial(f"{info['host']}:{info['port']}", explicit=False)

    # --- registration -------------------------------------------------------------------

    def register(self, route: RouteConnection) -> bool:
        """A route finished its handshake; False if another route to that server stays."""
        current = self.routes.get(route.remote_id)
        if current is not None and current is not route:
            if self._preferred(current) or not self._preferred(route):
                return False
            self.routes[route.remote_id] = route  # the other goes as a duplicate
            current.close(None, "Duplicate Route")
        self.routes[route.remote_id] = route
        log.info("%s:%d - rid:%d - Route connection created", route.ip, route.port, route.rid)
        out = [encode_rs_plus(router.name.encode(), *key) for router, key in self._interest_items()]
        if out:
            route.send(b"".join(out))
        if not self.options.no_advertise:
            urls, ws_urls = (_urls(route.remote_info.get(key)) for key in ("connect_urls", "ws_connect_urls"))
            if urls or ws_urls:
                route.advertised, route.ws_advertised = urls, ws_urls
                self.server.add_connect_urls(urls, ws_urls=ws_urls)
        gossip = dict(route.remote_info)
        gossip["ip"] = f"nats-route://{_join(route.ip, int(route.remote_info.get('port') or 0))}/"
        gossip.pop("nonce", None)
        for other in self.routes.values():
            if other is not route:
                other.send(encode_info(gossip))
        if self.meta is not None:
            if route.solicited:
                self.meta.dialled(route.url)
            self.meta.peers_changed()
        return True

    def _preferred(self, route: RouteConnection) -> bool:
        """The route both ends keep: the one dialled by the server with the smaller id."""
        dialler = self.server.server_id if route.solicited else route.remote_id
        other = route.remote_id if route.solicited else self.server.server_id
        return dialler < other

    def unregister(self, route: RouteConnection) -> None:
        self.connections.discard(route)
        if self.routes.get(route.remote_id) is route:
            del self.routes[route.remote_id]
            name = route.remote_info.get("server_name")  # nats-server's remoteName: the INFO's, never a fallback
            log.info(
                "%s:%d - rid:%d - Router connection closed: %s%s",
                route.ip,
                route.port,
                route.rid,
                route.close_reason or "Client Closed",
                f" - Remote: {name}" if name else "",
            )
            if self.meta is not None:
                self.meta.peers_changed()
        self.withdraw_urls(route)

    def withdraw_urls(self, route: RouteConnection) -> None:
        if route.advertised or route.ws_advertised:
            urls, route.advertised = route.advertised, []
            ws_urls, route.ws_advertised = route.ws_advertised, []
            self.server.remove_connect_urls(urls, ws_urls=ws_urls)

    def adopt_name(self, theirs: str, their_dynamic: bool) -> bool:
        """nats-server's dynamic cluster name: take the peer's if it is configured or larger."""
        if not self.dynamic or not theirs:
            return False
        if their_dynamic and theirs < self.name:
            return False
        self.name = theirs
        self.dynamic = their_dynamic
        self.server.info_cluster = theirs
        return True

    def router(self, account: bytes) -> Router | None:
        found = self._routers.get(account)
        if found is None:
            found = self.server.account_space.by_name.get(account.decode("utf-8", "replace"))
            if found is not None:
                self._routers[account] = found
        return found

    # --- INFO and CONNECT ---------------------------------------------------------------

    def route_info(self, nonce: bool = False, ldm: bool = False) -> dict[str, Any]:
        """The INFO this server sends on a route, its fields in the order of nats-server's
        ``Info`` (no ``git_commit``: nats-server's route INFO has none). Left out on purpose,
        since they would change what a nats-server peer does: ``route_pool_size`` (one
        connection, the account in every op, as nats-server speaks with servers without
        pooling), ``compression`` (none to negotiate) and ``lnoc``/``lnocu`` (no leaf nodes,
        so no ``LS+``/``LS-`` understood). ``jsemu_js`` is jsemu's own (``meta_leader.py``);
        nats-server ignores fields it does not know."""
        server = self.server
        info: dict[str, Any] = {
            "server_id": server.server_id,
            "server_name": server.server_name,
            "version": NATS_VERSION,
            "proto": ROUTE_PROTO,
            "go": f"python{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}",
            "host": self.advertise[0] if self.advertise else self.options.host,
            "port": self.advertise[1] if self.advertise else self.port,
            "headers": True,
        }
        if self.advertise:  # peers dial (and gossip) this instead of the address they see
            info["ip"] = f"nats-route://{join_host_port(*self.advertise)}/"
        if self.options.user is not None:
            info["auth_required"] = True
        info["max_payload"] = server.options.max_payload
        if server.options.jetstream:
            info["jetstream"] = True
        if nonce:
            info["nonce"] = new_nonce()
        info["cluster"] = self.name
        if self.dynamic:
            info["cluster_dynamic"] = True
        if server.options.jetstream and server.options.domain:
            info["domain"] = server.options.domain
        if not self.options.no_advertise:
            info["connect_urls"] = server.own_connect_urls()
            ws_urls = server.own_ws_connect_urls()
            if ws_urls:
                info["ws_connect_urls"] = ws_urls
        if ldm:
            info["ldm"] = True
        if self.meta is not None:
            info["jsemu_js"] = self.meta.announce()  # nats-server ignores fields it does not know
        return info

    def route_connect(self) -> dict[str, Any]:
        connect: dict[str, Any] = {
            "echo": False,
            "verbose": False,
            "pedantic": False,
            "tls_required": False,
            "headers": True,
            "name": self.server.server_id,
            "cluster": self.name,
            "dynamic": self.dynamic,
        }
        if self.options.user is not None:
            connect["user"] = self.options.user
            connect["pass"] = self.options.password or ""
        return connect

    def send_info(self) -> None:
        """This server's route INFO again, to every route (its JetStream role changed)."""
        frame = encode_info(self.route_info())
        for route in self.routes.values():
            route.send(frame)

    def send_lame_duck(self) -> None:
        """The route side of lame duck mode (``sendLDMToRoutes``): one INFO with ``ldm`` on
        each route, so the peers drop this server's client URLs and tell their clients."""
        frame = encode_info(self.route_info(ldm=True))
        for route in self.routes.values():
            route.send(frame)

    # --- interest -----------------------------------------------------------------------

    def _interest_items(self) -> list[tuple[Router, tuple[bytes] | tuple[bytes, bytes, int]]]:
        items: list[tuple[Router, tuple[bytes] | tuple[bytes, bytes, int]]] = []
        for router, interest in self._interest.items():
            items += [(router, (subject,)) for subject in interest.plain]
            items += [(router, (subject, queue, n)) for (subject, queue), n in interest.queues.items()]
        return items

    def _local_change(self, router: Router, interest: _Interest, sub: Subscription) -> None:
        """A subscription of ``router`` came or went: tell the routes if its subject's interest changed."""
        if sub.client.__class__ is RouteConnection or getattr(sub.client, "local_only", False):
            return
        if sub.subject.startswith(LOCAL_ONLY) and not (
            self.meta is not None and sub.subject.startswith(_JS_API) and router.name in self.meta.accounts
        ):
            return
        account = router.name.encode()
        subject, queue = sub.subject, sub.queue
        if sub in interest.known:
            interest.known.discard(sub)
            if queue is None:
                n = interest.plain.get(subject, 0) - 1
                if n > 0:
                    interest.plain[subject] = n
                    return
                interest.plain.pop(subject, None)
                self._broadcast(encode_rs_minus(account, subject))
            else:
                n = interest.queues.get((subject, queue), 0) - 1
                if n > 0:
                    interest.queues[(subject, queue)] = n
                    self._broadcast(encode_rs_plus(account, subject, queue, n))
                else:
                    interest.queues.pop((subject, queue), None)
                    self._broadcast(encode_rs_minus(account, subject, queue))
            return
        interest.known.add(sub)
        if queue is None:
            n = interest.plain.get(subject, 0) + 1
            interest.plain[subject] = n
            if n == 1:
                self._broadcast(encode_rs_plus(account, subject))
        else:
            n = interest.queues.get((subject, queue), 0) + 1
            interest.queues[(subject, queue)] = n
            self._broadcast(encode_rs_plus(account, subject, queue, n))

    def _broadcast(self, frame: bytes) -> None:
        for route in self.routes.values():
            route.send(frame)

    # --- monitoring ---------------------------------------------------------------------

    def routez(self, subs_list: bool = False, detail: bool = False) -> list[dict[str, Any]]:
        """``/routez`` entries, in the field order of nats-server's ``RouteInfo``, with the
        route's subscriptions as a list of subjects, or in detail, if asked."""
        now = time.time_ns()
        out = []
        for route in self.routes.values():
            subs = sum(len(s) for s in route.remote_subs.values())
            entry: dict[str, Any] = {}
            out.append(entry)
            entry.update(
                {
                    "rid": route.rid,
                    "remote_id": route.remote_id,
                    "remote_name": route.remote_name,
                    "did_solicit": route.solicited,
                    "is_configured": route.solicited and route.url in self._configured(),
                    "ip": route.ip,
                    "port": route.port,
                    "start": _rfc3339(route.start_ns),
                    "last_activity": _rfc3339(now),
                    "rtt": "0s",
                    "uptime": f"{(now - route.start_ns) // 1_000_000_000}s",
                    "idle": "0s",
                    "pending_size": 0,
                    "in_msgs": route.in_msgs,
                    "out_msgs": route.out_msgs,
                    "in_bytes": route.in_bytes,
                    "out_bytes": route.out_bytes,
                    "subscriptions": subs,
                }
            )
            if route.remote_subs and detail:
                entry["subscriptions_list_detail"] = [_sub_detail(route.rid, *key) for key in route.remote_subs]
            elif route.remote_subs and subs_list:
                entry["subscriptions_list"] = [
                    subject.decode("utf-8", "replace") for _, subject, _ in route.remote_subs
                ]
            entry["compression"] = "not supported"
        return out

    def _configured(self) -> set[str]:
        found = set()
        for url in self.options.routes:
            parts = urlsplit(url if "://" in url else f"nats://{url}")
            found.add(f"{parts.hostname}:{parts.port}")
        return found

    def varz(self) -> dict[str, Any]:
        """The ``cluster`` block of ``/varz``."""
        block: dict[str, Any] = {"name": self.name, "addr": self.options.host, "cluster_port": self.port}
        block["auth_timeout"] = int(self.options.auth_timeout)
        if self.options.routes:
            block["urls"] = [urlsplit(u).netloc or u for u in self.options.routes]
        block["tls_timeout"] = 2
        return block


def _nuid() -> str:
    """A made-up cluster name shaped like nats-server's (a 22-character NUID)."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(22))


def _target(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"nats://{url}")
    return f"{parts.hostname or '127.0.0.1'}:{parts.port or 6222}"


def _join(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _dial_error(exc: OSError) -> str:
    text = os.strerror(exc.errno) if exc.errno else str(exc)
    return f"connect: {text.lower()}"


def _rfc3339(ns: int) -> str:
    secs, frac = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:09d}Z"


def _sub_detail(rid: int, router: Router, subject: bytes, queue: bytes | None) -> dict[str, Any]:
    """``SubDetail`` of a route's subscription: its key (``<account> <subject> [<queue>]``) as sid."""
    text = subject.decode("utf-8", "replace")
    out: dict[str, Any] = {"subject": text}
    sid = f"{router.name} {text}"
    if queue is not None:
        out["qgroup"] = queue.decode("utf-8", "replace")
        sid += f" {out['qgroup']}"
    return out | {"sid": sid, "msgs": 0, "cid": rid}


def _urls(value: object) -> list[str]:
    """A route INFO's list of URLs (``connect_urls``, ``ws_connect_urls``); anything else: none."""
    return [str(u) for u in value] if isinstance(value, list) else []
