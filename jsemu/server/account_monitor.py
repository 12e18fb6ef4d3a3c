"""One account's monitoring figures: what ``$SYS.REQ.ACCOUNT.<acc>.<kind>`` answers with.

nats-server answers the account requests from its monitor's own builders with the account
filled in (``Subsz`` with ``Account``, ``Connz`` with ``acc``, ``JszAccount``, ``Leafz``,
``accountInfo``, ``AccountStatz``). /connz and /jsz are :class:`~.monitor.Monitor`'s
(``connz`` takes ``acc``, ``jsz_account`` is /jsz's ``account_details`` entry); this module
adds the account-only views on top of the same :class:`Monitor`: subscriptions, the account's
description (``INFO``) and its connection and message counts (``STATZ``, ``CONNS``).

What jsemu cannot know like nats-server does is shown as nats-server shows its idle value:
the sublist's cache statistics are zeros (jsemu keeps a match cache of its own shape) and
the subscription lists hold the clients' subscriptions only (nats-server also lists its
internal clients' subscriptions, which jsemu's internal subscribers are not).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..subjects import is_valid_literal_subject, subject_matches
from ..timefmt import format_ns
from .account_lookups import is_looked_up
from .jwt_exports import local_subject_shown, shown_export
from .operator_auth import name_tag
from .routing import Router

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .monitor import Monitor
    from .server import Server

__all__ = [
    "SYSTEM_EXPORTS",
    "SYSTEM_IMPORTS",
    "account_info",
    "account_stat",
    "account_statz",
    "leafz",
    "sublist_stats",
    "subsz",
]

_SUBSZ_LIMIT = 1024
_JS_API = "$JS.API.>"

#: The service exports nats-server adds to the system account (``addSystemAccountExports``):
#: (subject, response type).
SYSTEM_EXPORTS = (
    ("$SYS.REQ.ACCOUNT.*.CONNZ", "Streamed"),
    ("$SYS.REQ.ACCOUNT.*.STATZ", "Streamed"),
    ("$SYS.DEBUG.SUBSCRIBERS", "Singleton"),
    ("$SYS.REQ.USER.*.INFO", "Singleton"),
)

#: The service imports every other account gets from the system account
#: (``registerSystemImports``): (local subject, subject in the system account with ``{}``
#: for the importing account, share).
SYSTEM_IMPORTS = (
    ("$SYS.REQ.ACCOUNT.PING.CONNZ", "$SYS.REQ.ACCOUNT.{}.CONNZ", False),
    ("$SYS.REQ.SERVER.PING.CONNZ", "$SYS.REQ.ACCOUNT.{}.CONNZ", False),
    ("$SYS.REQ.ACCOUNT.PING.STATZ", "$SYS.REQ.ACCOUNT.{}.STATZ", False),
    ("$SYS.REQ.USER.INFO", "$SYS.REQ.USER.{}.INFO", True),
)


def sublist_stats(count: int) -> dict[str, Any]:
    """``SublistStats``: the count, and nats-server's values for an unused match cache."""
    stats: dict[str, Any] = {"num_subscriptions": count, "num_cache": 0, "num_inserts": count, "num_removes": 0}
    return stats | {"num_matches": 0, "cache_hit_rate": 0, "max_fanout": 0, "avg_fanout": 0}


def _connections(server: Server, router: Router) -> list[ClientConnection]:
    return [conn for conn in server.connections.values() if conn.account is router]


def subsz(monitor: Monitor, account: str, offset: int, limit: int, test: str) -> dict[str, Any]:
    """``Subsz`` of one account with its subscriptions listed (the SUBSZ request always asks
    for them); ValueError with nats-server's words for a test subject that is not literal."""
    server = monitor.server
    if test and not is_valid_literal_subject(test):
        raise ValueError(f"invalid test subject, must be valid publish subject: {test}")
    offset = max(offset, 0)
    limit = limit if limit > 0 else _SUBSZ_LIMIT
    router = server.account_space.by_name.get(account)
    out: dict[str, Any] = {"server_id": monitor.node.server_id, "now": format_ns(time.time_ns())}
    if router is None:
        return out | sublist_stats(0) | {"total": 0, "offset": offset, "limit": limit}
    conns = sorted(_connections(server, router), key=lambda c: c.cid)
    details = sub_details(conns, account, name_tag(server.options.auth, account), test)
    start = min(offset, len(details))
    out |= sublist_stats(router.sublist.count)
    out |= {"total": len(details), "offset": offset, "limit": limit}
    page = details[start : start + limit]
    if page:
        out["subscriptions_list"] = page
    return out


def leafz(monitor: Monitor) -> dict[str, Any]:
    """``Leafz``: jsemu has no leaf node connections, in any account."""
    return {"server_id": monitor.node.server_id, "now": format_ns(time.time_ns()), "leafnodes": 0, "leafs": []}


def account_stat(server: Server, router: Router) -> dict[str, Any]:
    """``AccountStat``: an account's connections and what its clients sent and received."""
    conns = _connections(server, router)
    closed = [c.conn for c in server.closed_clients if c.conn.account is router]
    every = conns + closed
    name = router.name
    zero = {"gateways": {"msgs": 0, "bytes": 0}, "routes": {"msgs": 0, "bytes": 0}, "leafs": {"msgs": 0, "bytes": 0}}
    sent = {"msgs": sum(c.out_msgs for c in every), "bytes": sum(c.out_bytes for c in every)} | zero
    received = {"msgs": sum(c.in_msgs for c in every), "bytes": sum(c.in_bytes for c in every)} | zero
    out: dict[str, Any] = {"acc": name, "name": name, "conns": len(conns), "leafnodes": 0}
    out |= {"total_conns": len(conns), "num_subscriptions": router.sublist.count}
    return out | {"sent": sent, "received": received, "slow_consumers": 0}


def account_statz(monitor: Monitor, accounts: list[str], include_unused: bool) -> dict[str, Any]:
    """``AccountStatz`` of the named accounts (every account when none is named), leaving out
    those without connections unless ``include_unused``."""
    server = monitor.server
    space = server.account_space.by_name
    routers = [space[name] for name in accounts if name in space] if accounts else list(space.values())
    stats = []
    for router in routers:
        if include_unused or _connections(server, router):
            stats.append(account_stat(server, router))
    return {"server_id": monitor.node.server_id, "now": format_ns(time.time_ns()), "account_statz": stats}


def account_info(monitor: Monitor, account: str) -> dict[str, Any]:
    """``AccountInfo``; LookupError with nats-server's words for an unknown account."""
    server = monitor.server
    router = server.account_space.by_name.get(account)
    if router is None or not is_looked_up(server, account):
        raise LookupError(f"Account {account} does not exist")
    system = server.options.system_account
    out: dict[str, Any] = {"account_name": account, "update_time": format_ns(server.start_ns)}
    if account == system:
        out["is_system"] = True
    out |= {"expired": False, "complete": True, "jetstream_enabled": server.account_space.jetstream_enabled(router)}
    out |= {"leafnode_connections": 0, "client_connections": len(_connections(server, router))}
    out["subscriptions"] = router.sublist.count
    config = getattr(router, "config", None)  # an Account's; $G has no block
    exports: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    for export in config.exports if config is not None else ():
        exports.append(shown_export(export))
    for imp in config.imports if config is not None else ():
        if imp.kind == "service":
            imports.append(_service_import(imp.account, imp.subject, imp.to or imp.subject, False))
        else:
            local = imp.to or (f"{imp.prefix}.{imp.subject}" if imp.prefix else imp.subject)
            local = local_subject_shown(local)
            entry = {"subject": imp.subject, "account": imp.account, "local_subject": local, "type": "stream"}
            imports.append(entry | {"invalid": False, "share": False, "tracking": False})
    # With JetStream on the server, the system account also exports its API and every other
    # account imports it (nats-server does so for accounts without JetStream too).
    jetstream = server.options.jetstream
    if account == system:
        exports += [{"subject": s, "type": "service", "response_type": kind} for s, kind in SYSTEM_EXPORTS]
        if jetstream:
            exports.append({"subject": _JS_API, "type": "service", "response_type": "Singleton"})
        imports.append(_service_import(system, f"$SYS.REQ.USER.{system}.INFO", "$SYS.REQ.USER.INFO", True))
    else:
        for local, mapped, share in SYSTEM_IMPORTS:
            imports.append(_service_import(system, mapped.format(account), local, share))
        if jetstream:
            imports.append(_service_import(system, _JS_API, _JS_API, True))
    if exports:
        out["exports"] = exports
    if imports:
        out["imports"] = imports
    out["name_tag"] = name_tag(server.options.auth, account)  # getNameTag: a JWT's name
    out["sublist_stats"] = sublist_stats(router.sublist.count)
    return out


def _service_import(account: str, subject: str, local: str, share: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"subject": subject, "account": account, "to": local, "local_subject": local}
    return out | {"type": "service", "invalid": False, "share": share, "tracking": False}


def sub_details(conns: Iterable[ClientConnection], account: str, tag: str, test: str | None) -> list[dict[str, Any]]:
    """``SubDetail`` of each subscription of ``conns`` (of ``account``, whose ``getNameTag`` is
    ``tag``) that ``test`` (a publish subject) would reach, as ``/subsz?subs=1`` lists them."""
    details = []
    for conn in conns:
        for sub in conn.subs.values():
            subject = sub.subject.decode("utf-8", "replace")
            if test and not subject_matches(test, subject):
                continue
            detail: dict[str, Any] = {"account": account, "account_tag": tag, "subject": subject}
            if sub.queue:
                detail["qgroup"] = sub.queue.decode("utf-8", "replace")
            detail |= {"sid": sub.sid.decode("utf-8", "replace"), "msgs": sub.nm}
            if sub.max:
                detail["max"] = sub.max
            detail["cid"] = conn.cid
            details.append(detail)
    return details
