"""The server-wide monitoring views beyond /varz, /connz and /jsz: /subsz, /accountz, /gatewayz.

nats-server builds each of these once (``Subsz``, ``Accountz``, ``Gatewayz`` in
``monitor.go``) and serves the result both on the HTTP monitoring port and as the ``data`` of
``$SYS.REQ.SERVER.<PING|id>.<SUBSZ|ACCOUNTZ|GATEWAYZ>``; so does jsemu: these functions take
the decoded options and return the JSON value, and ``server/monitor.py`` (query strings) and
``server/system_account.py`` (request bodies) only translate their input into options.

What jsemu shows differently, as ``server/account_monitor.py`` explains for one account: the
subscription lists hold client subscriptions only (nats-server also lists its internal
clients' subscriptions, which jsemu's internal subscribers are not), and the sublist
statistics other than the count are those of an unused match cache. Accounts are listed in
the order they were configured (nats-server's come out of a ``sync.Map`` in no fixed order).
jsemu has no gateways: /gatewayz answers as nats-server does when gateways are not
configured, whatever the options ask for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..subjects import is_valid_literal_subject
from ..timefmt import format_ns
from .account_lookups import is_looked_up
from .account_monitor import account_info, account_statz, leafz, sub_details, sublist_stats
from .monitor_query import QueryError, query_bool, query_int
from .operator_auth import name_tag

if TYPE_CHECKING:
    from .monitor import Monitor

__all__ = ["SUBSZ_LIMIT", "accountz", "gatewayz", "http_handlers", "query_subs", "subsz"]

#: ``DefaultSubListSize``: the page size when no positive ``limit`` is asked for.
SUBSZ_LIMIT = 1024


def subsz(monitor: Monitor, subscriptions: bool, offset: int, limit: int, account: str, test: str) -> dict[str, Any]:
    """``Subsz``: the sublist statistics of every account (or of ``account``), and with
    ``subscriptions`` a page of the client subscriptions that a publish to ``test`` would
    reach (all of them without ``test``). ValueError with nats-server's words for a ``test``
    that is not a publish subject."""
    server = monitor.server
    if test and not is_valid_literal_subject(test):
        raise ValueError(f"invalid test subject, must be valid publish subject: {test}")
    offset = max(offset, 0)
    limit = limit if limit > 0 else SUBSZ_LIMIT
    routers = [r for name, r in server.account_space.by_name.items() if not account or name == account]
    count = sum(router.sublist.count for router in routers)
    out: dict[str, Any] = {"server_id": monitor.node.server_id, "now": format_ns(time.time_ns())}
    out |= sublist_stats(count)
    if not subscriptions:
        return out | {"total": 0, "offset": offset, "limit": limit}
    details = []
    for router in routers:
        name = router.name
        conns = sorted((c for c in server.connections.values() if c.account is router), key=lambda c: c.cid)
        details += sub_details(conns, name, name_tag(server.options.auth, name), test)
    start = min(offset, len(details))
    out |= {"total": len(details), "offset": offset, "limit": limit}
    page = details[start : start + limit]
    if page:  # Go's omitempty on an empty slice
        out["subscriptions_list"] = page
    return out


def accountz(monitor: Monitor, account: str) -> dict[str, Any]:
    """``Accountz``: the names of the accounts, or with ``account`` its ``AccountInfo``
    (LookupError with nats-server's words for an account that does not exist)."""
    server = monitor.server
    out: dict[str, Any] = {"server_id": monitor.node.server_id, "now": format_ns(time.time_ns())}
    system = server.options.system_account
    if system:
        out["system_account"] = system
    if not account:
        names = [name for name in server.account_space.by_name if is_looked_up(server, name)]
        # nats-server always has its system account, configured or not.
        out["accounts"] = names if not system or system in names else [*names, system]
        return out
    out["account_detail"] = account_info(monitor, account)
    return out


def gatewayz(monitor: Monitor) -> dict[str, Any]:
    """``Gatewayz`` of a server without gateways."""
    out: dict[str, Any] = {"server_id": monitor.node.server_id, "now": format_ns(time.time_ns())}
    return out | {"outbound_gateways": {}, "inbound_gateways": {}}


def query_subs(query: dict[str, str]) -> tuple[bool, bool]:
    """``decodeSubs``: ``subs=detail``, or a boolean ``subs``: (subscriptions, detail)."""
    if query.get("subs", "").lower() == "detail":
        return False, True
    return query_bool(query, "subs"), False


def http_handlers(monitor: Monitor) -> dict[str, Callable[[dict[str, str]], dict[str, Any]]]:
    """The monitoring port's pages of this module, by path, reading their query strings in
    nats-server's order (a value that does not parse is a :class:`QueryError`, a 400)."""

    def http_subsz(query: dict[str, str]) -> dict[str, Any]:
        subs = query_bool(query, "subs")
        offset, limit = query_int(query, "offset"), query_int(query, "limit")
        try:
            return subsz(monitor, subs, offset, limit, query.get("acc", ""), query.get("test", ""))
        except ValueError as exc:
            raise QueryError(str(exc)) from None

    def http_accountz(query: dict[str, str]) -> dict[str, Any]:
        try:
            return accountz(monitor, query.get("acc", ""))
        except LookupError as exc:
            raise QueryError(str(exc.args[0])) from None

    def http_accstatz(query: dict[str, str]) -> dict[str, Any]:
        return account_statz(monitor, [], query_bool(query, "unused"))

    def http_gatewayz(query: dict[str, str]) -> dict[str, Any]:
        query_subs(query)
        query_bool(query, "accs")
        return gatewayz(monitor)

    def http_leafz(query: dict[str, str]) -> dict[str, Any]:
        query_bool(query, "subs")
        return leafz(monitor)

    return {
        "/subsz": http_subsz,
        "/subscriptionsz": http_subsz,
        "/accountz": http_accountz,
        "/accstatz": http_accstatz,
        "/gatewayz": http_gatewayz,
        "/leafz": http_leafz,
    }
