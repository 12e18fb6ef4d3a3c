"""The HTTP monitoring port (``-m``): ``/varz``, ``/jsz``, ``/connz``, ``/healthz``. The
paths the server's ``http_app`` serves (the console: ``/`` and ``/console...``) go to it.

The JSON has nats-server's shapes and key order (``monitor.go``), indented like its
``json.MarshalIndent`` output, for the fields that clients, harnesses and dashboards read.
Values that describe the Go runtime (``mem``, ``cpu``, ``gomaxprocs``) describe this
process instead.

The HTTP side is a tiny HTTP/1.1 responder on asyncio, written by hand rather than on h11:
it reads one request head (up to the blank line, 10 s at most), answers ``400`` to a
request line that is not three words, and writes one response with ``Content-Length`` and
``Connection: close``: no keep-alive, no request bodies, no chunking, nothing an HTTP
state machine would be needed for. h11 would be one more runtime dependency for those
fifteen lines; it becomes the right call if the monitor ever needs keep-alive or request
bodies.

A simulated cluster (``cluster_size`` N) has a monitor per node, as N processes would: each
shows its node's id and name, ``/connz`` and ``/varz``'s counts only its node's clients, and
``node_down`` closes its port (refused, as a stopped process's) until ``node_up`` binds the
same port again. What the nodes share is shown by each: the subject space (``subscriptions``)
and JetStream (``/jsz``). Their ``/routez`` lists no routes: the nodes share one process and
exchange nothing over connections, and a route entry made up of ids, addresses and byte
counts of connections that do not exist would be false data to whoever reads it.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs

from ..protocol.go_duration import format_duration
from ..timefmt import format_ns
from ..version import NATS_VERSION, PROTO_VERSION, __version__
from . import monitor_paths, server_views
from .account_lookups import is_looked_up, look_up
from .connz_query import check_sort, raw_auth_user, select_entries, sort_entries
from .healthz import HealthAssets, HealthzOptions, StoreFolders, healthz
from .monitor_index import index_page
from .monitor_query import QueryError, query_bool, query_int, query_uint

if TYPE_CHECKING:
    from .closed import ClosedClient
    from .connection import ClientConnection
    from .node import Node
    from .server import Server
    from .sublist import Subscription

__all__ = ["HttpApp", "JetStreamReport", "Monitor", "go_duration", "uptime"]

_CONNZ_LIMIT = 1024
#: /jsz's flags in the order nats-server decodes them (``offset`` and ``limit`` after the fifth).
_JSZ_FLAGS = (
    "accounts",
    "streams",
    "consumers",
    "direct-consumers",
    "config",
    "leader-only",
    "raft",
    "stream-leader-only",
)
#: /healthz's flags in the order nats-server decodes them (the first bad one is the 400).
_HEALTHZ_FLAGS = ("js-enabled", "js-enabled-only", "js-server-only", "js-meta-only", "details")
_HEALTH_STATUS = {
    200: "200 OK",
    400: "400 Bad Request",
    404: "404 Not Found",
    500: "500 Internal Server Error",
    503: "503 Service Unavailable",
}
#: nats-server 2.15.1's feature flags, as /varz reports them.
_FEATURE_FLAGS = {
    "js_ack_fc_v2": False,
    "js_api_reply_v2": False,
    "js_raft_delete_range": True,
    "js_snapshot_sources": False,
}


def uptime(seconds: float) -> str:
    """``myUptime``: ``1d2h3m4s`` with leading zero units left out."""
    total = int(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h{minutes}m{secs}s"
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def go_duration(seconds: float) -> str:
    """A connection's ``rtt`` as /connz shows it: nats-server's ``getRTT`` truncates to whole
    microseconds between 1µs and 1ms, then Go's ``time.Duration.String`` (``806µs``, ``1.234567ms``)."""
    ns = int(seconds * 1e9)
    if 1_000 < ns < 1_000_000:
        ns -= ns % 1_000
    return format_duration(ns)


class JetStreamReport(Protocol):
    """What /varz and /jsz show of JetStream, handed in by the wiring (``jsemu.app``) so
    that this module knows nothing of streams."""

    def stats(self) -> dict[str, Any]:
        """``JetStreamStats``: memory, storage, reservations, accounts, HA assets, API counts."""
        ...

    def totals(self) -> tuple[int, int, int]:
        """Streams, messages and bytes over every stream."""
        ...

    def api_counts(self) -> tuple[int, int]:
        """API requests and API errors so far."""
        ...

    def consumers(self) -> int:
        """Consumers over every stream."""
        ...

    def stream_detail(self, config: bool, consumers: bool = False) -> list[dict[str, Any]]:
        """``StreamDetail`` of each stream by name (with its config if asked, and the
        ``consumer_detail`` of its consumers if asked)."""
        ...

    def accounts(self) -> Sequence[tuple[str, JetStreamReport]]:
        """Each account with JetStream and its own figures, by name."""
        ...

    def account_reservations(self) -> tuple[int, int]:
        """One account's ``max_mem`` and ``max_file`` as ``account_details`` shows them (Go's
        uint64: no limit is 2**64 - 1)."""
        ...

    def stored(self) -> Sequence[tuple[str, Sequence[str]]]:
        """The store's account folders with their stream folders (``server/healthz.py``)."""
        ...

    def consumer_names(self, account: str, stream: str) -> Collection[str] | None:
        """The consumers of a loaded stream of ``account``; None: no such stream."""
        ...


class HttpApp(Protocol):
    """Pages served on the monitoring port beside the JSON (``jsemu.console``): the paths it
    ``serves`` are handed to it with the connection, which the monitor closes afterwards; its
    ``index_links`` (label, path) head the ``/`` page."""

    @property
    def index_links(self) -> Sequence[tuple[str, str]]: ...

    def serves(self, path: str) -> bool: ...

    async def handle(
        self, monitor: Monitor, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None: ...


class Monitor:
    """Serves the monitoring endpoints of one server (one node of a simulated cluster)."""

    def __init__(self, server: Server, jetstream: JetStreamReport | None = None, node: Node | None = None) -> None:
        self.server = server
        #: The node whose identity and clients this port shows (default: the server's own).
        self.node = node if node is not None else server.nodes[0]
        #: JetStream's figures; None: JetStream is off.
        self.jetstream = jetstream
        self.requests: dict[str, int] = {}
        self._listener: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> None:
        self._listener = await asyncio.start_server(self._handle, host, max(port, 0), reuse_address=True)
        self.port = self._listener.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
            await listener.wait_closed()

    def close(self) -> None:
        """Stop listening now (its node went down): the port refuses connections."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()

    def reopen(self, host: str) -> None:
        """Listen again on the same port (its node came back): bound and listening when this
        returns, served from the next loop turn."""
        sock = socket.create_server((host, self.port), reuse_port=False)
        sock.setblocking(False)
        task = asyncio.get_running_loop().create_task(asyncio.start_server(self._handle, sock=sock))
        task.add_done_callback(self._serving)

    def _serving(self, task: asyncio.Task[asyncio.base_events.Server]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        listener = task.result()
        if self._listener is None and self.node.up:
            self._listener = listener
        else:  # down again before the loop got to it
            listener.close()

    # --- HTTP -------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
            parts = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            app = self.server.http_app
            if app is not None and len(parts) == 3 and app.serves(parts[1].partition("?")[0]):
                await app.handle(self, head, reader, writer)
                await writer.drain()
                return
            if len(parts) == 3 and monitor_paths.bad_escape(parts[1]):
                writer.write(monitor_paths.BAD_REQUEST)
                await writer.drain()
                return
            extra = b""
            location = monitor_paths.redirect(parts[1]) if len(parts) == 3 else None
            if len(parts) != 3:
                status, ctype, body = "400 Bad Request", "text/plain; charset=utf-8", b"400 Bad Request\n"
            elif location is not None:  # Go's mux: an unclean path is redirected to its clean form
                status, ctype, body = "307 Temporary Redirect", "text/html; charset=utf-8", b""
                body, extra = monitor_paths.redirect_body(location), monitor_paths.location_header(location)
            else:
                status, ctype, body = self.respond(parts[1])
                if ctype == "application/json":  # nats-server's handleResponse
                    extra = b"Access-Control-Allow-Origin: *\r\n"
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n".encode()
                + extra
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    def respond(self, target: str) -> tuple[str, str, bytes]:
        """(status line, content type, body) for a request target like ``/jsz?streams=true``."""
        path, raw_query = monitor_paths.endpoint(target)  # exact: "/varz/" is 404 (Go's mux)
        query = {k: v[0] for k, v in parse_qs(raw_query).items()}  # Go's Query().Get: the first
        handlers = {
            "/varz": self.varz,
            "/jsz": self.jsz,
            "/connz": self.connz,
            "/healthz": self.healthz,
            "/routez": self.routez,
            **server_views.http_handlers(self),
        }
        if path == "/":
            self.requests[path] = self.requests.get(path, 0) + 1
            app = self.server.http_app
            return "200 OK", "text/html; charset=utf-8", index_page(app.index_links if app is not None else ())
        if path == "/raftz":  # jsemu runs no Raft groups: nats-server's answer without any
            self.requests[path] = self.requests.get(path, 0) + 1
            return "404 Not Found", "text/plain; charset=utf-8", b"No Raft nodes registered"
        handler = handlers.get(path)
        if handler is None:
            return "404 Not Found", "text/plain; charset=utf-8", b"404 page not found\n"
        counted = "/subsz" if path == "/subscriptionsz" else path  # nats-server's old name, counted as /subsz
        self.requests[counted] = self.requests.get(counted, 0) + 1
        try:
            value = handler(query)
        except QueryError as exc:  # nats-server's decodeBool/decodeInt, or the view's own error
            return "400 Bad Request", "text/plain; charset=utf-8", str(exc).encode()
        status = "200 OK"
        if path == "/healthz":  # its status_code is the response's status instead
            code = value.pop("status_code")
            status = _HEALTH_STATUS.get(code, "200 OK")
        # /healthz is marshalled flat, the others indented (as nats-server does).
        indent = None if path == "/healthz" else 2
        separators = (",", ":") if indent is None else None
        text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)
        # Go's encoder escapes these three (they only occur inside strings).
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        body = text.encode()
        return status, "application/json", body

    # --- endpoints --------------------------------------------------------------------

    def _now(self) -> str:
        return format_ns(time.time_ns())

    def _jetstream_config(self) -> dict[str, Any]:
        opts = self.server.options
        store_dir = os.path.join(opts.store_dir, "jetstream") if opts.store_dir else ""
        max_memory = opts.max_memory_store
        if max_memory <= 0:
            max_memory = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 0.75)
        max_storage = opts.max_file_store
        if max_storage <= 0:
            max_storage = int(shutil.disk_usage(_existing(opts.store_dir or tempfile.gettempdir())).free * 0.75)
        return {
            "max_memory": max_memory,
            "max_storage": max_storage,
            "store_dir": store_dir,
            "sync_interval": 120_000_000_000,
            **({"domain": opts.domain} if opts.domain else {}),
            "strict": True,
        }

    def _routes(self) -> list[Any]:
        """The route connections this node has: the server's (``server/cluster.py``), which
        belong to its first node; a simulated cluster's other nodes have none."""
        server = self.server
        if server.cluster is None or self.node is not server.nodes[0]:
            return []
        return list(server.cluster.routes)

    def _cluster_block(self) -> dict[str, Any]:
        server = self.server
        if server.cluster is not None:
            return server.cluster.varz()
        opts = server.options
        return {"name": opts.cluster_name or "jsemu"} if opts.cluster_size > 1 else {}

    def routez(self, query: dict[str, str]) -> dict[str, Any]:
        """``/routez``: the routes to the other servers of the cluster."""
        server = self.server
        subs, detail = server_views.query_subs(query)
        routes = server.cluster.routez(subs, detail) if server.cluster is not None and self._routes() else []
        return {
            "server_id": self.node.server_id,
            "server_name": self.node.name,
            "now": self._now(),
            "num_routes": len(routes),
            "routes": routes,
        }

    def varz(self, query: dict[str, str]) -> dict[str, Any]:
        server = self.server
        node = self.node
        opts = server.options
        conns = [conn for conn in server.connections.values() if conn.node is node]
        closed = node.closed_stats
        host, port = server.advertised(node)
        in_msgs = closed[0] + sum(c.in_msgs for c in conns)
        in_bytes = closed[1] + sum(c.in_bytes for c in conns)
        out_msgs = closed[2] + sum(c.out_msgs for c in conns)
        out_bytes = closed[3] + sum(c.out_bytes for c in conns)
        out: dict[str, Any] = {
            "server_id": node.server_id,
            "server_name": node.name,
            "version": NATS_VERSION,
            "proto": PROTO_VERSION,
            "git_commit": f"jsemu-{__version__}",
            "go": f"python{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}",
            "host": host,
            "port": port,
            "max_connections": opts.max_connections,
            "ping_interval": int(opts.ping_interval * 1e9),
            "ping_max": opts.max_pings_out,
            "http_host": opts.host,
            "http_port": self.port,
            "http_base_path": "",
            "https_port": 0,
            "auth_timeout": 2,
            "max_control_line": opts.max_control_line,
            "max_payload": opts.max_payload,
            "max_pending": opts.max_pending,
            "cluster": self._cluster_block(),
            "gateway": {},
            "leaf": {},
            "mqtt": {},
            "websocket": server.websocket.options.varz(server.websocket.port) if server.websocket is not None else {},
        }
        _add_connect_urls(out, node)
        if self.jetstream is not None:
            out["jetstream"] = {
                "config": self._jetstream_config(),
                "stats": self.jetstream.stats(),
                "limits": {"default_max_consumers": 1000},
            }
        start = server.start_ns
        now = time.time_ns()
        out.update(
            {
                "tls_timeout": 2,
                "write_deadline": opts.write_deadline_ns(),
                "start": format_ns(start),
                "now": format_ns(now),
                "uptime": uptime((now - start) / 1e9),
                "mem": _rss_bytes(),
                "cores": os.cpu_count() or 1,
                "gomaxprocs": 1,
                "cpu": 0,
                "connections": len(conns),
                "total_connections": node.total_connections,
                "routes": len(self._routes()),
                "remotes": len(self._routes()),
                "leafnodes": 0,
                "in_msgs": in_msgs,
                "in_bytes": in_bytes,
                "in_client_msgs": in_msgs,
                "in_client_bytes": in_bytes,
                "out_msgs": out_msgs,
                "out_bytes": out_bytes,
                "out_client_msgs": out_msgs,
                "out_client_bytes": out_bytes,
                "slow_consumers": server.slow_consumers,
                "stale_connections": 0,
                "stalled_clients": 0,
                "subscriptions": server.sublist.count,
                "http_req_stats": dict(self.requests),
                "config_load_time": format_ns(start),
                "config_digest": "",
                "feature_flags": dict(_FEATURE_FLAGS),
                "system_account": opts.system_account,
                "slow_consumer_stats": {"clients": server.slow_consumers, "routes": 0, "gateways": 0, "leafs": 0},
                "stale_connection_stats": {"clients": 0, "routes": 0, "gateways": 0, "leafs": 0},
                "disk_io_wait_stats": {"waiters": 0, "waits": 0, "wait_time": 0, "max_wait_time": 0},
            }
        )
        return out

    def jsz(self, query: dict[str, str]) -> dict[str, Any]:
        # Read in the order of nats-server's HandleJsz: the first value that does not parse is the 400.
        flags = {name: query_bool(query, name) for name in _JSZ_FLAGS[:5]}
        offset, limit = max(query_int(query, "offset"), 0), query_int(query, "limit") or 1024
        flags |= {name: query_bool(query, name) for name in _JSZ_FLAGS[5:]}
        js = self.jetstream
        if js is None:
            return {"server_id": self.node.server_id, "now": self._now(), "disabled": True}
        out: dict[str, Any] = js.stats()
        out["server_id"] = self.node.server_id
        out["now"] = self._now()
        out["config"] = self._jetstream_config()
        out["limits"] = {"default_max_consumers": 1000}
        streams, messages, size = js.totals()
        # raft: the streams and consumers this server leads; standalone (no Raft node) all of
        # them, left out when 0 (omitempty). A simulated cluster's leaders are not counted.
        server = self.server
        leaders = flags["raft"] and server.options.cluster_size <= 1 and server.cluster is None
        out["streams"] = streams
        if leaders and streams:
            out["streams_leader"] = streams
        out["consumers"] = js.consumers()
        if leaders and out["consumers"]:
            out["consumers_leader"] = out["consumers"]
        out["messages"] = messages
        out["bytes"] = size
        # As in ``Jsz``: consumers imply streams, streams the account details (unless one
        # account is asked for: ``acc`` takes precedence, then a page of the accounts by name).
        consumers = flags["consumers"]
        streams_too = consumers or flags["streams"]
        wanted = query.get("acc", "")
        accounts = list(js.accounts())
        chosen = [entry for entry in accounts if entry[0] == wanted]
        if not chosen and (flags["accounts"] or (streams_too and not wanted)):
            chosen = accounts[offset : offset + limit] if limit > 0 else accounts
        if chosen:
            config = flags["config"]
            out["account_details"] = [
                _account_detail(name, account, streams_too, consumers, config) for name, account in chosen
            ]
        out["total"] = len(accounts)
        return out

    def jsz_account(self, name: str, query: dict[str, str]) -> dict[str, Any]:
        """One account's ``AccountDetail`` (nats-server's ``JszAccount``, the JSZ account
        request); LookupError with nats-server's words when there is none."""
        js = self.jetstream
        if js is None:
            raise LookupError("jetstream not enabled")
        if name not in self.server.account_space.by_name or not is_looked_up(self.server, name):
            raise LookupError(f'account "{name}" not found')
        for account_name, account in js.accounts():
            if account_name == name:
                consumers = _truthy(query.get("consumers"))
                streams = consumers or _truthy(query.get("streams"))
                return _account_detail(name, account, streams, consumers, _truthy(query.get("config")))
        raise LookupError(f'account "{name}" not jetstream enabled')

    def connz(self, query: dict[str, str]) -> dict[str, Any]:
        server = self.server
        node = self.node
        # Read in the order of nats-server's HandleConnz: the first value that does not parse is the 400.
        auth = query_bool(query, "auth")
        subs_list, subs_detail = server_views.query_subs(query)
        offset = max(query_int(query, "offset"), 0)
        limit = query_int(query, "limit")
        limit = limit if limit > 0 else _CONNZ_LIMIT
        cid = query_uint(query, "cid")
        state = query.get("state", "") or "open"
        if state.lower() not in ("open", "closed", "any", "all", "none"):  # none: a CONNZ request's unknown state
            raise QueryError(f"Error decoding state for {state}")
        state = state.lower()
        account = query.get("acc", "")
        if account:  # nats-server's lookupAccount: registers it (operator mode)
            look_up(server, account)
        if account and account not in server.account_space.by_name:
            # nats-server returns the page before it fills in its id or any connection.
            empty = {"server_id": "", "now": self._now(), "num_connections": 0, "total": 0}
            return empty | {"offset": offset, "limit": limit, "connections": None}
        entries: list[tuple[ClientConnection, ClosedClient | None]] = []
        if state in ("open", "any", "all"):
            entries += [(conn, None) for conn in server.connections.values() if conn.node is node]
        if state in ("closed", "any", "all"):
            entries += [(closed.conn, closed) for closed in server.closed_clients if closed.conn.node is node]
        if account:
            entries = [entry for entry in entries if entry[0].account.name == account]
        entries.sort(key=lambda entry: entry[0].cid)
        total = len(entries)  # before the filters below, as nats-server counts
        user, subject, mqtt_client = (
            query.get("user", ""),
            query.get("filter_subject", ""),
            query.get("mqtt_client", ""),
        )
        if subject == ">":
            subject = ""
        if subject and not account:
            raise QueryError("filter by subject only valid with account filtering")
        if cid or user or subject or mqtt_client:
            entries = select_entries(entries, cid, user, subject, mqtt_client)
            limit = 1 if cid else limit
        now = time.time_ns()
        loop_now = server.loop_time() if server._loop is not None else 0.0

        def last_activity(entry: tuple[ClientConnection, ClosedClient | None]) -> int:
            conn = entry[0]
            return now - int(max(0.0, loop_now - conn.last_in) * 1e9) if conn.last_in else conn.start_ns

        sort = query.get("sort", "")
        if sort:
            try:
                check_sort(sort, state == "closed")
            except ValueError as exc:
                raise QueryError(str(exc)) from None
            entries = sort_entries(entries, sort, now, last_activity)
        page = entries[offset : offset + limit]
        items = []
        for conn, closed in page:
            opts = conn.opts
            last_ns = last_activity((conn, closed))
            end_ns = now if closed is None else closed.stop_ns
            item: dict[str, Any] = {
                "cid": conn.cid,
                "kind": "Client",
                "type": "websocket" if conn.info_base is not None else "nats",
                "ip": conn.client_ip,
                "port": conn.client_port,
                "start": format_ns(conn.start_ns),
                "last_activity": format_ns(last_ns),
            }
            if closed is not None:
                item["stop"] = format_ns(closed.stop_ns)
                item["reason"] = closed.reason
            item |= {
                "rtt": go_duration(conn.rtt),
                "uptime": uptime((end_ns - conn.start_ns) / 1e9),
                "idle": uptime(max(0, end_ns - last_ns) / 1e9 if conn.last_in else 0.0),
                "pending_bytes": sum(len(b) for b in conn.out) if closed is None else closed.pending_bytes,
                "in_msgs": conn.in_msgs,
                "out_msgs": conn.out_msgs,
                "in_bytes": conn.in_bytes,
                "out_bytes": conn.out_bytes,
                "subscriptions": len(conn.subs) if closed is None else len(closed.subjects),
            }
            for key in ("name", "lang", "version"):
                if opts.get(key):
                    item[key] = opts[key]
            account_name = conn.account.name
            if auth:  # who logged in, and to which account
                user = raw_auth_user(opts)
                if user:
                    item["authorized_user"] = user
                if account_name != "$G":
                    item["account"] = account_name
            subs = list(conn.subs.values()) if closed is None else closed.subs
            if subs_detail and subs:
                # A closed client's were kept with their account (newSubDetail), an open one's not.
                account_of = None if closed is None else conn.account.name
                item["subscriptions_list_detail"] = [_sub_detail(conn.cid, sub, account_of) for sub in subs]
            elif subs_list:
                subjects = [s.subject for s in subs] if closed is None else closed.subjects
                if subjects:  # Go's omitempty
                    item["subscriptions_list"] = sorted(s.decode("utf-8", "replace") for s in subjects)
            if auth and (closed is None or account_name != "$G"):
                item["name_tag"] = account_name
            items.append(item)
        return {
            "server_id": node.server_id,
            "now": format_ns(now),
            "num_connections": len(page),
            "total": total,
            "offset": offset,
            "limit": limit,
            "connections": items,
        }

    def healthz(self, query: dict[str, str]) -> dict[str, Any]:
        """``/healthz``: the query's options (``decodeBool`` on the flags, in nats-server's
        order), then :func:`healthz.healthz`; the answer keeps its ``status_code``."""
        flags = {name: query_bool(query, name) for name in _HEALTHZ_FLAGS}
        names = {name: query.get(name, "") for name in ("account", "stream", "consumer")}
        return self.health(HealthzOptions.from_event(flags | names))

    def health(self, opts: HealthzOptions) -> dict[str, Any]:
        """The ``HealthStatus`` for ``opts`` (with ``status_code``), for /healthz and $SYS."""
        server = self.server
        spaces = server.account_space.by_name
        assets: HealthAssets | None = self.jetstream
        if assets is None and server.options.jetstream:  # on, but in no account
            assets = StoreFolders(server.options.store_dir)
        clustered = server.options.cluster_size > 1 or server.cluster is not None
        return healthz(opts, assets, lambda name: name in ("$G", "$SYS") or name in spaces, clustered)


def _account_detail(
    name: str, account: JetStreamReport, streams: bool, consumers: bool, config: bool
) -> dict[str, Any]:
    """``AccountDetail``: one account's JetStream figures (and its streams if asked)."""
    stats = account.stats()
    api_total, api_errors = account.api_counts()
    reserved_memory, reserved_storage = account.account_reservations()
    detail: dict[str, Any] = {
        "name": name,
        "id": name,
        "memory": stats["memory"],
        "storage": stats["storage"],
        "reserved_memory": reserved_memory,
        "reserved_storage": reserved_storage,
        "accounts": 0,
        "ha_assets": 0,
        "api": {"level": 0, "total": api_total, "errors": api_errors},
    }
    if streams:
        streams_shown = account.stream_detail(config, consumers)
        if streams_shown:  # Go's omitempty
            detail["stream_detail"] = streams_shown
    return detail


def _sub_detail(cid: int, sub: Subscription, account: str | None) -> dict[str, Any]:
    """``newClientSubDetail`` (``newSubDetail`` with the ``account``): one subscription."""
    out: dict[str, Any] = {} if account is None else {"account": account, "account_tag": account}
    out["subject"] = sub.subject.decode("utf-8", "replace")
    if sub.queue:
        out["qgroup"] = sub.queue.decode("utf-8", "replace")
    out |= {"sid": sub.sid.decode("utf-8", "replace"), "msgs": sub.nm}
    if sub.max:
        out["max"] = sub.max
    return out | {"cid": cid}


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "t", "yes")


def _rss_bytes() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage * 1024 if sys.platform != "darwin" else usage


def _existing(path: str) -> str:
    """``path`` or its nearest ancestor that exists: a ``store_dir`` only memory streams used
    is not made yet, and its disk is the one its parent is on."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _add_connect_urls(out: dict[str, Any], node: Node) -> None:
    """``/varz`` ``connect_urls`` and ``ws_connect_urls`` (when a peer was heard of), after
    ``port`` as in nats-server's ``Varz``."""
    urls = [("connect_urls", node.info_urls), ("ws_connect_urls", node.ws_info_urls)]
    if not any(found for _, found in urls):
        return
    items = list(out.items())
    at = [key for key, _ in items].index("port") + 1
    extra = [(key, list(found)) for key, found in urls if found]
    out.clear()
    out.update([*items[:at], *extra, *items[at:]])
