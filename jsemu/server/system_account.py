"""The system account's basics: ``$SYS.REQ.SERVER`` requests and client connect/disconnect events.

nats-server answers, in its system account only, ``$SYS.REQ.SERVER.PING`` (the ``statsz``
every server sends back; ``nats server list`` collects them) and
``$SYS.REQ.SERVER.<PING|id>.<endpoint>``: the monitoring endpoints (``nats server report``,
``nats server info``) in an envelope ``{"server": <who answered>, "data": <the endpoint>}``.
The endpoints are the HTTP monitor's own (``server/monitor.py``), not second copies. When a
client logs in or leaves, the server publishes ``$SYS.ACCOUNT.<acc>.CONNECT`` /
``DISCONNECT`` in the system account: built only when someone there listens, so a
connection that nobody watches costs one match.

Endpoints nats-server serves that jsemu does not build (``SUBSZ``, ``ACCOUNTZ``, ``LEAFZ``,
...) get an error reply saying so (not silence, which a client would read as "no server");
so do request filters (``server_name``, ``tags``, ...), which jsemu does not apply.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from ..ids import new_event_id
from ..protocol.gojson import GoJSONError, GoSyntaxError, dumps, scan_values
from ..timefmt import format_ns
from .closed import closed_reason
from .monitor import Monitor
from .sublist import Subscription

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .routing import Router
    from .server import Server

__all__ = ["ENDPOINTS", "NOT_BUILT", "SystemAccount"]

#: ``$SYS.REQ.SERVER.*.<endpoint>`` that jsemu answers from its monitor.
ENDPOINTS = ("STATSZ", "VARZ", "CONNZ", "JSZ", "HEALTHZ", "IDZ")
#: Endpoints nats-server 2.15.1 answers that jsemu refuses with an error reply.
NOT_BUILT = ("SUBSZ", "ROUTEZ", "GATEWAYZ", "LEAFZ", "ACCOUNTZ", "EXPVARZ", "IPQUEUESZ", "RAFTZ", "PROFILEZ")
#: Request options that select servers (``EventFilterOptions``): not applied by jsemu.
_FILTERS = frozenset({"server_name", "cluster", "host", "tags", "domain", "exact_match"})


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
        if endpoint not in ENDPOINTS and endpoint not in NOT_BUILT:
            return False
        if endpoint == "PROFILEZ" and tokens[3] == "PING":
            return False  # nats-server answers profiles only when asked by id
        if not reply:
            return True
        if endpoint == "IDZ":
            self._send(
                reply, {"name": self.server.server_name, "host": self.server.options.host, "id": self.server.server_id}
            )
            return True
        query, problem = _query(body, endpoint)
        if problem is None and endpoint in NOT_BUILT:
            problem = f"$SYS.REQ.SERVER.{tokens[3]}.{endpoint} is not implemented by jsemu"
        if problem is not None:
            self._send(reply, {"server": self.server_info(), "error": {"code": 400, "description": problem}})
            return True
        monitor = self.server.monitor or Monitor(self.server, self.server.jetstream_report)
        if endpoint == "STATSZ":
            self._send(reply, {"server": self.server_info(), "statsz": self._statsz(monitor)})
            return True
        handler = {"VARZ": monitor.varz, "CONNZ": monitor.connz, "JSZ": monitor.jsz, "HEALTHZ": monitor.healthz}
        data = handler[endpoint](query)
        if endpoint == "HEALTHZ":
            data["status_code"] = 200  # the HTTP answer carries it as the status line
        self._send(reply, {"server": self.server_info(), "data": data})
        return True

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
        """``ClientInfo`` of a connection, empty fields left out as Go's ``omitempty`` does."""
        opts = conn.opts
        out: dict[str, Any] = {"start": format_ns(conn.start_ns), "host": conn.client_ip, "id": conn.cid}
        out["acc"] = conn.account.name
        if conn.user is not None and conn.user.name:
            out["user"] = conn.user.name
        for key, field in (("name", "name"), ("lang", "lang"), ("ver", "version")):
            if opts.get(field):
                out[key] = opts[field]
        if stop_ns is not None:
            if conn.rtt:
                out["rtt"] = int(conn.rtt * 1e9)
            out["stop"] = format_ns(stop_ns)
        out["name_tag"] = conn.account.name
        out["kind"] = "Client"
        out["client_type"] = "nats"
        return out


_KINDS = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


def _query(body: bytes, endpoint: str) -> tuple[dict[str, str], str | None]:
    """A request's options (``{"subs": true}``) as the monitor's query strings, or the
    problem as Go's ``json.Unmarshal`` into ``server.<Endpoint>EventOptions`` words it."""
    if not body.strip():
        return {}, None
    try:
        values = list(scan_values(body))
    except GoSyntaxError as exc:
        return {}, exc.message
    except GoJSONError:
        return {}, "unexpected end of JSON input"
    if len(values) > 1:
        first = body[values[1][0] : values[1][0] + 1].decode("latin-1")
        return {}, f"invalid character '{first}' after top-level value"
    value = json.loads(body)
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        kind = _KINDS.get(type(value), "value")
        return {}, f"json: cannot unmarshal {kind} into Go value of type server.{endpoint.title()}EventOptions"
    filters = sorted(_FILTERS & value.keys())
    if filters:
        return {}, f"server filters ({', '.join(filters)}) are not implemented by jsemu"
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}, None
