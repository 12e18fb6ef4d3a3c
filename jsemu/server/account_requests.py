"""``$SYS.REQ.ACCOUNT.<acc>.<kind>`` and ``$SYS.REQ.USER.INFO``, answered as nats-server does.

Who can ask what (nats-server 2.15.1, ``events.go``):

* In the system account, ``$SYS.REQ.ACCOUNT.<acc>.<kind>`` for any account, ``kind`` one of
  :data:`KINDS`; another kind has no responder. ``$SYS.REQ.ACCOUNT.PING.STATZ`` gives the
  ``STATZ`` of every account with connections; ``PING`` in the other kinds is just an
  account that does not exist.
* Every account gets service imports from the system account (``registerSystemImports``):
  ``$SYS.REQ.ACCOUNT.PING.CONNZ`` and ``$SYS.REQ.SERVER.PING.CONNZ`` ask the CONNZ of the
  importing account, ``$SYS.REQ.ACCOUNT.PING.STATZ`` its STATZ, ``$SYS.REQ.USER.INFO``
  who the requesting user is (also in the system account, which imports it from itself).
  jsemu does not route these through the import machinery: an internal subscriber in each
  account answers for that account, the client that published the request being the
  router's ``origin``. nats-server answers them even without a configured system account
  (its ``$SYS`` always exists), and so does jsemu.

Each answer but ``CONNS`` is a ``ServerAPIResponse`` (``server/envelope.py``) around the
account's figures (``server/account_monitor.py`` and the monitor's ``connz``/``jsz_account``).
A request body is decoded as Go's ``json.Unmarshal`` into the kind's ``<Kind>EventOptions``:
a decoding error is a 400 without ``data``; a failure of the figures a 500 with
``"data": null``; server filters (``server_name``, ``host``, ``cluster``, ``tags``,
``domain``) that do not select this server mean no reply at all, as do a STATZ with no
account to show (without ``include_unused``) and a CONNS for an account without connections.
The decoding and the filters are ``server/event_filter.py``'s, shared with the
``$SYS.REQ.SERVER`` requests (``server/system_account.py``), which answer CONNZ through
:func:`connz` too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..ids import new_event_id
from ..protocol.gojson import GoJSONError, dumps
from ..protocol.gojson.types import T_BOOL, T_INT, T_STRING, T_UINT64, GoScalar, GoSlice, GoStruct
from ..timefmt import format_ns
from . import account_monitor
from .event_filter import FILTER as _FILTER
from .event_filter import decode_options as _decode
from .event_filter import error_text as _text
from .event_filter import selects_this_server
from .monitor import Monitor
from .sublist import Subscription

if TYPE_CHECKING:
    from .routing import Router
    from .server import Server

__all__ = ["KINDS", "OPTIONS", "AccountRequests", "connz"]

_CONNZ_OPTIONS = {
    "sort": GoScalar("server.SortOpt", "string"),
    "auth": T_BOOL,
    "subscriptions": T_BOOL,
    "subscriptions_detail": T_BOOL,
    "offset": T_INT,
    "limit": T_INT,
    "cid": T_UINT64,
    "mqtt_client": T_STRING,
    "state": GoScalar("server.ConnState", "int"),
    "user": T_STRING,
    "acc": T_STRING,
    "filter_subject": T_STRING,
}
_JSZ_OPTIONS = {
    "account": T_STRING,
    "accounts": T_BOOL,
    "streams": T_BOOL,
    "consumer": T_BOOL,
    "direct_consumer": T_BOOL,
    "config": T_BOOL,
    "leader_only": T_BOOL,
    "offset": T_INT,
    "limit": T_INT,
    "raft": T_BOOL,
    "stream_leader_only": T_BOOL,
}
_SUBSZ_OPTIONS = {"offset": T_INT, "limit": T_INT, "subscriptions": T_BOOL, "account": T_STRING, "test": T_STRING}

#: The request body of each kind: ``server.<Kind>EventOptions`` (options, then filters).
OPTIONS: dict[str, GoStruct] = {
    "SUBSZ": GoStruct("SubszEventOptions", _SUBSZ_OPTIONS | _FILTER),
    "CONNZ": GoStruct("ConnzEventOptions", _CONNZ_OPTIONS | _FILTER),
    "LEAFZ": GoStruct("LeafzEventOptions", {"subscriptions": T_BOOL, "account": T_STRING} | _FILTER),
    "JSZ": GoStruct("JszEventOptions", _JSZ_OPTIONS | _FILTER),
    "INFO": GoStruct("AccInfoEventOptions", _FILTER),
    "STATZ": GoStruct("AccountStatzEventOptions", {"accounts": GoSlice(T_STRING), "include_unused": T_BOOL} | _FILTER),
}
#: ``$SYS.REQ.ACCOUNT.<acc>.<kind>`` kinds nats-server 2.15.1 answers.
KINDS = (*OPTIONS, "CONNS")
_CONNS_REQUEST = GoStruct("accNumConnsReq", {"server": GoStruct("ServerInfo", {}), "acc": T_STRING})

_STATES = {0: "open", 1: "closed", 2: "all"}


class _Skip(Exception):
    """No reply at all (nats-server's ``errSkipZreq``)."""


class _Responder:
    """An internal subscriber that hands each request to ``answer(router, subject, reply, body)``.
    ``local_only``: its interest is not sent to routes (nats-server's service import
    subscriptions and its ``sysSubscribeInternal`` ones: only the local server answers).
    ``owner``: a producer whose own messages it does not get (the routers' no-echo rule reads
    ``conn``), as nats-server's system client does not echo."""

    __slots__ = ("answer", "conn", "local_only", "router")
    echo = True

    def __init__(
        self,
        router: Router,
        answer: Callable[[Router, bytes, bytes | None, bytes], None],
        local_only: bool,
        owner: object = None,
    ) -> None:
        self.router = router
        self.answer = answer
        self.local_only = local_only
        self.conn = owner

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        self.answer(self.router, subject, reply, msg[hdr:] if hdr > 0 else msg)
        return True


class AccountRequests:
    """The account requests and ``USER.INFO`` of one server."""

    def __init__(self, server: Server) -> None:
        self.server = server
        #: The routers given their import subscriptions so far (a reload adds accounts).
        self._attached: dict[int, Router] = {}
        self._builders: dict[str, Callable[[Monitor, str, dict[str, Any]], Any]] = {
            "SUBSZ": self._subsz,
            "CONNZ": self._connz,
            "LEAFZ": lambda monitor, account, options: account_monitor.leafz(monitor),
            "JSZ": self._jsz,
            "INFO": lambda monitor, account, options: account_monitor.account_info(monitor, account),
            "STATZ": self._statz,
        }

    def start(self) -> None:
        self.attach_all()

    def attach_all(self) -> None:
        """Subscribe every account not yet subscribed (at start, and after a reload)."""
        system = self.server.options.system_account
        for name, router in self.server.account_space.by_name.items():
            if id(router) in self._attached:
                continue
            self._attached[id(router)] = router
            if name == system:
                shared = _Responder(router, self._system_request, False)
                local = _Responder(router, self._system_request, True)
                subs = [(shared, f"$SYS.REQ.ACCOUNT.*.{kind}") for kind in KINDS]
                subs += [(local, "$SYS.REQ.USER.*.INFO"), (local, "$SYS.REQ.USER.INFO")]
            else:
                local = _Responder(router, self._imported_request, True)
                subs = [(local, subject) for subject, _, _ in account_monitor.SYSTEM_IMPORTS]
            for responder, subject in subs:
                router.sublist.insert(Subscription(responder, subject.encode(), None, b"$SYS"))

    # --- the two sides ------------------------------------------------------------------

    def _system_request(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        """In the system account: any account's figures, or the requester's user."""
        tokens = subject.decode("utf-8", "replace").split(".")
        if not reply:
            return
        if tokens[2] == "USER":
            if len(tokens) == 4:
                self._send(router, reply, self.server.envelope.response(self._user_info(router)))
            else:  # asked directly, not through the import: no client information came with it
                self._send(router, reply, self.server.envelope.response({"user": "", "account": ""}))
            return
        account, kind = tokens[3], tokens[4]
        if kind == "CONNS":
            self._conns(router, account, reply, body)
        else:  # PING.STATZ: every account's (PING in another kind is an unknown account)
            self.respond(router, reply, kind, "" if account == "PING" and kind == "STATZ" else account, body)

    def _imported_request(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        """In any other account: its own CONNZ or STATZ, or the requester's user."""
        if not reply:
            return
        if subject == b"$SYS.REQ.USER.INFO":
            self._send(router, reply, self.server.envelope.response(self._user_info(router)))
        else:
            self.respond(router, reply, subject.rsplit(b".", 1)[1].decode(), router.name, body)

    # --- answers ------------------------------------------------------------------------

    def respond(self, router: Router, reply: bytes, kind: str, account: str, body: bytes) -> None:
        """nats-server's ``zReq``: decode the options, check the filters, build, reply."""
        envelope = self.server.envelope
        try:
            options = _decode(body, OPTIONS[kind])
        except GoJSONError as exc:
            self._send(router, reply, envelope.response(error={"code": 400, "description": _text(exc)}))
            return
        if not self._selects_this_server(options):
            return
        monitor = self.server.monitor or Monitor(self.server, self.server.jetstream_report)
        try:
            data = self._builders[kind](monitor, account, options)
        except _Skip:
            return
        except (LookupError, ValueError) as exc:
            self._send(router, reply, envelope.response(None, {"code": 500, "description": str(exc.args[0])}))
            return
        self._send(router, reply, envelope.response(data))

    def _selects_this_server(self, options: dict[str, Any]) -> bool:
        return selects_this_server(self.server, options)

    def _subsz(self, monitor: Monitor, account: str, options: dict[str, Any]) -> Any:
        offset, limit = options.get("offset", 0), options.get("limit", 0)
        return account_monitor.subsz(monitor, account, offset, limit, options.get("test") or "")

    def _connz(self, monitor: Monitor, account: str, options: dict[str, Any]) -> Any:
        return connz(monitor, account, options)

    def _jsz(self, monitor: Monitor, account: str, options: dict[str, Any]) -> Any:
        query = {key: "true" for key in ("streams", "config") if options.get(key)}
        if options.get("consumer"):
            query["consumers"] = "true"
        return monitor.jsz_account(account, query)

    def _statz(self, monitor: Monitor, account: str, options: dict[str, Any]) -> Any:
        include_unused = bool(options.get("include_unused"))
        # The account of the subject wins over the body's list (PING: the body's, or all).
        accounts = [account] if account else list(options.get("accounts") or [])
        statz = account_monitor.account_statz(monitor, accounts, include_unused)
        if not statz["account_statz"] and not include_unused:
            raise _Skip
        return statz

    def _conns(self, router: Router, account: str, reply: bytes, body: bytes) -> None:
        """``connsRequest``: an ``account_connections`` event, only for an account of this
        server with connections; anything wrong with the request means no reply."""
        wanted = account
        if body:
            try:
                wanted = _decode(body, _CONNS_REQUEST).get("acc", account)
            except GoJSONError:
                return
        target = self.server.account_space.by_name.get(account)
        if wanted != account or target is None:
            return
        stat = account_monitor.account_stat(self.server, target)
        if not stat["conns"]:
            return
        event: dict[str, Any] = {"type": "io.nats.server.advisory.v1.account_connections", "id": new_event_id()}
        event["timestamp"] = format_ns(time.time_ns())
        event["server"] = self.server.envelope.server_info()
        self._send(router, reply, event | stat)

    def _user_info(self, router: Router) -> dict[str, Any]:
        """``UserInfo`` of the client whose request is being routed."""
        conn = router.origin
        user = getattr(conn, "user", None)
        name = user.name if user is not None else ""
        out: dict[str, Any] = {"user": name, "account": router.name, "account_name": router.name}
        if getattr(user, "account_name", ""):  # operator mode: the JWTs' names
            out["account_name"] = user.account_name  # type: ignore[union-attr]
        if getattr(user, "user_name", ""):
            out["user_name"] = user.user_name  # type: ignore[union-attr]
        perms = getattr(conn, "perms", None)
        if perms is not None:
            publish: dict[str, Any] = {}
            subscribe: dict[str, Any] = {}
            for into, key, rules in (
                (publish, "allow", perms.pub_allow),
                (publish, "deny", perms.pub_deny),
                (subscribe, "allow", perms.sub_allow),
                (subscribe, "deny", perms.sub_deny),
            ):
                if rules is not None and rules.entries:
                    into[key] = list(rules.entries)
            shown: dict[str, Any] = {"publish": publish, "subscribe": subscribe}
            if perms.response is not None:
                shown["responses"] = {"max": perms.response.max_msgs, "ttl": perms.response.expires_ns}
            out["permissions"] = shown
        return out

    def _send(self, router: Router, reply: bytes, value: dict[str, Any]) -> None:
        router.outbound.send_via_sendq(reply, -1, dumps(value).encode())


def connz(monitor: Monitor, account: str, options: dict[str, Any]) -> Any:
    """CONNZ from ``ConnzOptions`` (one account's, or every account's when ``account`` is
    empty); ValueError with nats-server's words."""
    sort = options.get("sort") or ""
    state = options.get("state", 0)
    query = {"acc": account, "state": _STATES.get(state, "none")}
    if sort:
        query["sort"] = sort
    if options.get("offset", 0) > 0:
        query["offset"] = str(options["offset"])
    if options.get("limit", 0) > 0:
        query["limit"] = str(options["limit"])
    if options.get("subscriptions_detail"):
        query["subs"] = "detail"
    elif options.get("subscriptions"):
        query["subs"] = "true"
    if options.get("auth"):
        query["auth"] = "true"
    for key in ("cid", "user", "filter_subject", "mqtt_client"):
        if options.get(key):
            query[key] = str(options[key])
    return monitor.connz(query)
