"""The system account's basics: ``$SYS.REQ.SERVER`` requests and client connect/disconnect events.

nats-server answers, in its system account only, ``$SYS.REQ.SERVER.PING`` (the ``statsz``
every server sends back; ``nats server list`` collects them) and
``$SYS.REQ.SERVER.<PING|id>.<endpoint>``: the monitoring endpoints (``nats server report``,
``nats server info``, ``nats server request``) in an envelope ``{"server": <who answered>,
"data": <the endpoint>}``. The endpoints are the HTTP monitor's own (``server/monitor.py``,
``server/server_views.py``), not second copies. A ``PING`` reaches every server of a cluster
(the subscription's interest crosses routes), and each answers for itself, so the asker
collects one answer per server until its timeout.

A request body is the endpoint's ``<Endpoint>EventOptions`` (``server/event_filter.py``):
a body that does not decode is a 400 answer without ``data``; filters that do not select
this server mean no answer at all; a failure of the figures is a 500 with ``"data": null``.
``IDZ`` reads no body. A ``PING`` without a reply inbox makes the server broadcast its statsz
on ``$SYS.SERVER.<id>.STATSZ``, as nats-server does.

Endpoints nats-server serves that jsemu does not build (:data:`NOT_BUILT`: Go's memory
statistics, its internal queues, Raft groups, Go profiles) get a 500 answer saying so, after
the filters (not silence, which a client would read as "no server"). ``PROFILEZ`` answers
nats-server's own errors for a missing or unknown profile name.

By id only, three actions: ``KICK`` closes a client (``{"cid": N}``; ``Kicked`` in
``/connz?state=closed``), ``LDM`` sends it the lame duck INFO, and ``RELOAD`` reloads the
configuration file as SIGHUP does (``Server.reload_config``; its error, a 500, is not logged). A KICK or
LDM body that is not a ``{"cid": N}`` gets no answer, as on nats-server.

When a client logs in or leaves, the server publishes ``$SYS.ACCOUNT.<acc>.CONNECT`` /
``DISCONNECT`` in the system account: built only when someone there listens, so a
connection that nobody watches costs one match.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..ids import new_event_id
from ..protocol.go_duration import format_duration
from ..protocol.gojson import GoJSONError, dumps
from ..protocol.gojson.runes import go_quote
from ..protocol.gojson.types import T_BOOL, T_DURATION, T_INT, T_STRING, T_UINT64, GoStruct, GoType
from ..timefmt import format_ns
from . import server_views
from .account_monitor import leafz
from .account_requests import OPTIONS, connz
from .client_info import event_client
from .closed import closed_reason
from .event_filter import FILTER, decode_options, error_text, options_struct, selects_this_server
from .healthz import HealthzOptions
from .monitor import Monitor
from .operator_auth import JwtUser, name_tag
from .reload import NO_CONFIG_FILE
from .sublist import Subscription

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .routing import Router
    from .server import Server

__all__ = ["ENDPOINTS", "NOT_BUILT", "SystemAccount"]

_HEALTHZ_OPTIONS: dict[str, GoType] = {
    "js-enabled": T_BOOL,
    "js-enabled-only": T_BOOL,
    "js-server-only": T_BOOL,
    "js-meta-only": T_BOOL,
    "account": T_STRING,
    "stream": T_STRING,
    "consumer": T_STRING,
    "details": T_BOOL,
}
_GATEWAYZ_OPTIONS: dict[str, GoType] = {
    "name": T_STRING,
    "accounts": T_BOOL,
    "account_name": T_STRING,
    "subscriptions": T_BOOL,
    "subscriptions_detail": T_BOOL,
}
#: The request body of each endpoint: ``server.<Endpoint>EventOptions``.
_OPTIONS: dict[str, GoStruct] = {
    "STATSZ": options_struct("StatszEventOptions", {}),
    "VARZ": options_struct("VarzEventOptions", {}),
    "SUBSZ": OPTIONS["SUBSZ"],
    "CONNZ": OPTIONS["CONNZ"],
    "ROUTEZ": options_struct("RoutezEventOptions", {"subscriptions": T_BOOL, "subscriptions_detail": T_BOOL}),
    "GATEWAYZ": options_struct("GatewayzEventOptions", _GATEWAYZ_OPTIONS),
    "LEAFZ": OPTIONS["LEAFZ"],
    "ACCOUNTZ": options_struct("AccountzEventOptions", {"account": T_STRING}),
    "JSZ": OPTIONS["JSZ"],
    "HEALTHZ": options_struct("HealthzEventOptions", _HEALTHZ_OPTIONS),
    "EXPVARZ": options_struct("ExpvarzEventOptions", {}),
    "IPQUEUESZ": options_struct("IpqueueszEventOptions", {"all": T_BOOL, "filter": T_STRING}),
    "RAFTZ": options_struct("RaftzEventOptions", {"account": T_STRING, "group": T_STRING}),
    "PROFILEZ": options_struct("ProfilezEventOptions", {"name": T_STRING, "debug": T_INT, "duration": T_DURATION}),
}
#: ``$SYS.REQ.SERVER.<id>.<action>``: kick a client, tell it the server is in lame duck
#: mode, reload the configuration.
_CLIENT_ACTIONS = ("KICK", "LDM", "RELOAD")
_CLIENT_REQUEST = GoStruct("KickClientReq", {"cid": T_UINT64})
_FILTER_ONLY = GoStruct("EventFilterOptions", FILTER)
#: ``$SYS.REQ.SERVER.*.<endpoint>`` that jsemu answers from its monitor.
ENDPOINTS = ("STATSZ", "VARZ", "SUBSZ", "CONNZ", "ROUTEZ", "GATEWAYZ", "LEAFZ", "ACCOUNTZ", "JSZ", "HEALTHZ", "IDZ")
#: Endpoints nats-server 2.15.1 answers that jsemu refuses with an error reply.
NOT_BUILT = ("EXPVARZ", "IPQUEUESZ", "RAFTZ", "PROFILEZ")
#: ``pprof.Lookup``'s profiles: known to nats-server, not built by jsemu.
_GO_PROFILES = frozenset({"goroutine", "threadcreate", "heap", "allocs", "block", "mutex"})
_MAX_CPU_PROFILE_NS = 15_000_000_000


class _Skip(Exception):
    """No answer at all (nats-server's ``errSkipZreq``)."""


class _Requests:
    """The subscriber of ``$SYS.REQ.SERVER.>`` in the system account."""

    __slots__ = ("system",)
    echo = True

    def __init__(self, system: SystemAccount) -> None:
        self.system = system

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        return self.system.request(subject, reply, msg[hdr:] if hdr > 0 else msg)


class SystemAccount:
    """The system account of one server (``options.system_account``), when it is configured."""

    def __init__(self, server: Server, router: Router) -> None:
        self.server = server
        self.router = router
        self._sub = Subscription(_Requests(self), b"$SYS.REQ.SERVER.>", None, b"$SYS")

    def start(self) -> None:
        self.router.sublist.insert(self._sub)

    # --- requests ---------------------------------------------------------------------

    def request(self, subject: bytes, reply: bytes | None, body: bytes) -> bool:
        """Answer one ``$SYS.REQ.SERVER...`` request; False: not for this server (no reply)."""
        tokens = subject.decode("utf-8", "replace").split(".")
        if len(tokens) == 4 and tokens[3] == "PING":
            endpoint = "STATSZ"
        elif len(tokens) == 5 and tokens[3] in ("PING", self.server.server_id):
            endpoint = tokens[4]
        else:
            return False
        if endpoint in _CLIENT_ACTIONS:  # asked of one server by id, never by PING
            if tokens[3] != self.server.server_id:
                return False
            if reply:
                self._client_action(reply, endpoint, body)
            return True
        if endpoint not in _OPTIONS and endpoint != "IDZ":
            return False
        if not reply:
            if endpoint == "STATSZ":  # statszReq: no reply inbox is a broadcast
                self._statsz_request(f"$SYS.SERVER.{self.server.server_id}.STATSZ".encode(), body)
            return True
        if endpoint == "IDZ":
            self._send(
                reply, {"name": self.server.server_name, "host": self.server.options.host, "id": self.server.server_id}
            )
        elif endpoint == "STATSZ":
            self._statsz_request(reply, body)
        else:
            self._z_request(reply, endpoint, body)
        return True

    def _statsz_request(self, reply: bytes, body: bytes) -> None:
        """``statszReq``: a body that does not decode is a 400 without ``data``."""
        try:
            options = decode_options(body, _OPTIONS["STATSZ"])
        except GoJSONError as exc:
            self._send(reply, self.server.envelope.response(error={"code": 400, "description": error_text(exc)}))
            return
        if selects_this_server(self.server, options):
            self._send(reply, {"server": self.server_info(), "statsz": self._statsz(self._monitor())})

    def _z_request(self, reply: bytes, endpoint: str, body: bytes) -> None:
        """``zReq``: decode the options, apply the filters, build, answer."""
        envelope = self.server.envelope
        try:
            options = decode_options(body, _OPTIONS[endpoint])
        except GoJSONError as exc:
            self._send(reply, envelope.response(error={"code": 400, "description": error_text(exc)}))
            return
        if body and not selects_this_server(self.server, options):
            return
        try:
            data = self._builders[endpoint](self._monitor(), options)
        except _Skip:
            return
        except (LookupError, ValueError) as exc:
            self._send(reply, envelope.response(None, {"code": 500, "description": str(exc.args[0])}))
            return
        self._send(reply, envelope.response(data))

    def _client_action(self, reply: bytes, endpoint: str, body: bytes) -> None:
        """``kickClient``, ``ldmClient`` (by id only) and ``reloadConfig``: a body that is not
        a ``{"cid": N}`` is no answer at all; done, an answer without ``data``."""
        envelope = self.server.envelope
        cid = 0
        if endpoint != "RELOAD":
            if not body:
                return
            try:
                cid = decode_options(body, _CLIENT_REQUEST).get("cid", 0)
            except GoJSONError:
                return  # nats-server logs it and answers nothing
        try:
            options = decode_options(body, _FILTER_ONLY)
        except GoJSONError as exc:
            self._send(reply, envelope.response(error={"code": 400, "description": error_text(exc)}))
            return
        if body and not selects_this_server(self.server, options):
            return
        conn = self.server.connections.get(cid)
        problem = None
        if endpoint == "RELOAD":  # nats-server's reloadConfig: Reload, as SIGHUP, its error if any
            reload = self.server.reload_config
            problem = NO_CONFIG_FILE if reload is None else reload()
        elif endpoint == "KICK":
            if conn is None or conn.closed:
                problem = "no such client or leafnode id"
            else:
                conn.close_quietly("Kicked")
        elif conn is None or conn.closed:
            problem = "no such client id"
        elif conn.opts.get("protocol", 0) < 1 or not conn.first_pong_sent:
            problem = "client does not support Lame Duck Mode or is not ready to receive the notification"
        else:
            self.server.send_async_info(ldm=True, only=conn)
        error = None if problem is None else {"code": 500, "description": problem}
        self._send(reply, envelope.response(error=error))

    def _monitor(self) -> Monitor:
        return self.server.monitor or Monitor(self.server, self.server.jetstream_report)

    @property
    def _builders(self) -> dict[str, Callable[[Monitor, dict[str, Any]], Any]]:
        return {
            "VARZ": lambda monitor, options: monitor.varz({}),
            "SUBSZ": _subsz,
            "CONNZ": lambda monitor, options: connz(monitor, options.get("acc") or "", options),
            "ROUTEZ": _routez,
            "GATEWAYZ": lambda monitor, options: server_views.gatewayz(monitor),
            "LEAFZ": lambda monitor, options: leafz(monitor),
            "ACCOUNTZ": lambda monitor, options: server_views.accountz(monitor, options.get("account") or ""),
            "JSZ": _jsz,
            "HEALTHZ": lambda monitor, options: monitor.health(HealthzOptions.from_event(options)),
            "EXPVARZ": _not_built("EXPVARZ"),
            "IPQUEUESZ": _not_built("IPQUEUESZ"),
            "RAFTZ": _not_built("RAFTZ"),
            "PROFILEZ": _profilez,
        }

    def _statsz(self, monitor: Monitor) -> dict[str, Any]:
        """``ServerStats`` from the monitor's /varz figures."""
        varz = monitor.varz({})
        out: dict[str, Any] = {key: varz[key] for key in ("start", "mem", "cores", "cpu")}
        out["connections"] = varz["connections"]
        out["total_connections"] = varz["total_connections"]
        out["active_accounts"] = len({id(conn.account) for conn in self.server.connections.values()})
        out["subscriptions"] = varz["subscriptions"]
        sent = {"msgs": varz["out_msgs"], "bytes": varz["out_bytes"]}
        received = {"msgs": varz["in_msgs"], "bytes": varz["in_bytes"]}
        out |= {"sent": sent, "sent_to_clients": dict(sent), "received": received}
        out |= {"received_from_clients": dict(received), "slow_consumers": varz["slow_consumers"], "active_servers": 1}
        if "jetstream" in varz:
            js = dict(varz["jetstream"])
            js["config"] = {k: v for k, v in js["config"].items() if k != "store_dir"}
            out["jetstream"] = js
        out["gomaxprocs"] = varz["gomaxprocs"]
        return out

    def server_info(self) -> dict[str, Any]:
        """``ServerInfo``: which server sent a system message, and its ``seq``."""
        return self.server.envelope.server_info()

    def _send(self, subject: bytes, value: dict[str, Any]) -> None:
        self.router.outbound.send_via_sendq(subject, -1, dumps(value).encode())

    # --- events -----------------------------------------------------------------------

    def client_connected(self, conn: ClientConnection) -> None:
        """``$SYS.ACCOUNT.<acc>.CONNECT`` (``client_connect``), if anybody listens."""
        subject = f"$SYS.ACCOUNT.{conn.account.name}.CONNECT".encode()
        if not self.router.outbound.has_interest(subject):
            return
        event = self._event("client_connect")
        event["client"] = self._client(conn, None)
        self._send(subject, event)

    def client_disconnected(self, conn: ClientConnection, error: str | None) -> None:
        """``$SYS.ACCOUNT.<acc>.DISCONNECT`` (``client_disconnect``), if anybody listens."""
        subject = f"$SYS.ACCOUNT.{conn.account.name}.DISCONNECT".encode()
        if not self.router.outbound.has_interest(subject):
            return
        event = self._event("client_disconnect")
        event["client"] = self._client(conn, time.time_ns())
        # The client's view: what it sent is what the server received from it.
        event["sent"] = {"msgs": conn.in_msgs, "bytes": conn.in_bytes}
        event["received"] = {"msgs": conn.out_msgs, "bytes": conn.out_bytes}
        event["reason"] = closed_reason(error)
        self._send(subject, event)

    def _event(self, kind: str) -> dict[str, Any]:
        return {
            "type": f"io.nats.server.advisory.v1.{kind}",
            "id": new_event_id(),
            "timestamp": format_ns(time.time_ns()),
            "server": self.server_info(),
        }

    def _client(self, conn: ClientConnection, stop_ns: int | None) -> dict[str, Any]:
        """``ClientInfo`` of a connection logged in as its user: ``jwt`` the one it sent,
        ``issuer_key`` (``issuerForClient``) for an nkey or JWT user (Go's ``c.user``), its
        JWT's signing key or else its account; ``name_tag`` the account JWT's name
        (``getNameTag``); ``client_type`` ``websocket`` on that port."""
        account = conn.account.name
        user = conn.user
        name = user.name if user is not None else ""
        jwt = conn.opts.get("jwt") if isinstance(user, JwtUser) else None
        if isinstance(user, JwtUser):
            issuer = user.signing_key or account
        else:
            issuer = account if name and conn.opts.get("nkey") == name else ""
        return event_client(
            conn.opts,
            conn.start_ns,
            conn.client_ip,
            conn.cid,
            account,
            name,
            name_tag(self.server.options.auth, account),
            stop_ns,
            int(conn.rtt * 1e9) if conn.rtt else 0,
            jwt if isinstance(jwt, str) else "",
            "websocket" if conn.info_base is not None else "nats",
            issuer,
        )


def _subsz(monitor: Monitor, options: dict[str, Any]) -> Any:
    subscriptions = bool(options.get("subscriptions"))
    offset, limit = options.get("offset", 0), options.get("limit", 0)
    account, test = options.get("account") or "", options.get("test") or ""
    return server_views.subsz(monitor, subscriptions, offset, limit, account, test)


def _routez(monitor: Monitor, options: dict[str, Any]) -> Any:
    query = {"subs": "detail"} if options.get("subscriptions_detail") else {}
    if not query and options.get("subscriptions"):
        query["subs"] = "true"
    return monitor.routez(query)


def _jsz(monitor: Monitor, options: dict[str, Any]) -> Any:
    """JSZ with the options the HTTP /jsz reads (``consumer`` is its ``consumers``, ``account``
    its ``acc``); ``leader_only``: only the JetStream metadata leader answers."""
    if options.get("leader_only"):
        cluster = monitor.server.cluster
        meta = cluster.meta if cluster is not None else None
        if monitor.jetstream is None or (meta is not None and not meta.running):
            raise _Skip
    query = {key: "true" for key in ("accounts", "streams", "config", "raft") if options.get(key)}
    if options.get("consumer"):
        query["consumers"] = "true"
    for key, into in (("account", "acc"), ("offset", "offset"), ("limit", "limit")):
        if options.get(key):
            query[into] = str(options[key])
    return monitor.jsz(query)


def _not_built(endpoint: str) -> Callable[[Monitor, dict[str, Any]], Any]:
    def refuse(monitor: Monitor, options: dict[str, Any]) -> Any:
        raise ValueError(f"$SYS.REQ.SERVER.*.{endpoint} is not implemented by jsemu")

    return refuse


def _profilez(monitor: Monitor, options: dict[str, Any]) -> Any:
    """``profilez``: nats-server's answers for a missing or unknown profile; Go's profiles
    themselves are not built."""
    name = options.get("name") or ""
    if not name:
        return {"profile": None, "error": "Profile name not specified"}
    if name == "cpu":
        duration = options.get("duration", 0)
        if not 0 < duration <= _MAX_CPU_PROFILE_NS:
            return {"profile": None, "error": f"Duration {format_duration(duration)} should be between 0s and 15s"}
    elif name not in _GO_PROFILES:
        return {"profile": None, "error": f"Profile {go_quote(name)} not found"}
    raise ValueError(f"Go profile {name!r} is not implemented by jsemu")
