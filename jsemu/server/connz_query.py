"""Which connections /connz (and a CONNZ request) shows, and in what order, as nats-server's ``Connz``.

Selection: ``cid`` asks for one connection of the account asked for (open first, then
closed; the page's ``limit`` becomes 1); ``user`` keeps the connections whose login user
(``getRawAuthUser``) it is; ``filter_subject`` (requests only, and only with an account)
keeps the open connections with a subscription that could receive a message on it;
``mqtt_client`` keeps none (jsemu has no MQTT clients). ``total``
counts the connections before these three filters, as nats-server's does.

Order: nats-server's ``sort`` options (``monitor_sort_opts.go``).

nats-server sorts every connection the page may come from, then cuts the page (``offset``,
``limit``), so ``sort=msgs_to&limit=5`` is the five busiest connections. Most options put the
largest first (``subs``, ``pending``, ``msgs_to``, ``msgs_from``, ``bytes_to``, ``bytes_from``,
``last``, ``idle``, ``stop``, ``rtt``); ``uptime`` puts the newest first and ``reason`` sorts
the reasons' text; ``cid`` and ``start`` are the default order. ``stop`` and ``reason`` are
refused unless only closed connections are asked for. Go's sort is not stable: connections
with equal keys may come out in any order there; here they stay in connection id order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..subjects import subjects_collide

if TYPE_CHECKING:
    from .closed import ClosedClient
    from .connection import ClientConnection

__all__ = ["SORTS", "check_sort", "raw_auth_user", "select_entries", "sort_entries"]

Entry = tuple["ClientConnection", "ClosedClient | None"]

#: ``SortOpt.IsValid``'s options.
SORTS = frozenset(
    {"cid", "start", "subs", "pending", "msgs_to", "msgs_from", "bytes_to", "bytes_from"}
    | {"last", "idle", "uptime", "stop", "reason", "rtt"}
)


def check_sort(sort: str, closed_only: bool) -> None:
    """ValueError with nats-server's words for a sort it refuses."""
    if sort not in SORTS:
        raise ValueError(f"invalid sorting option: {sort}")
    if sort in ("stop", "reason") and not closed_only:
        raise ValueError(f"sort by {sort} only valid on closed connections")


def sort_entries(entries: list[Entry], sort: str, now_ns: int, last_ns: Callable[[Entry], int]) -> list[Entry]:
    """``entries`` (in connection id order) in the order of ``sort``."""

    def end_ns(entry: Entry) -> int:
        return now_ns if entry[1] is None else entry[1].stop_ns

    def pending(entry: Entry) -> int:
        conn, closed = entry
        return sum(len(b) for b in conn.out) if closed is None else closed.pending_bytes

    def subs(entry: Entry) -> int:
        conn, closed = entry
        return len(conn.subs) if closed is None else len(closed.subjects)

    largest_first: dict[str, Callable[[Entry], float]] = {
        "subs": subs,
        "pending": pending,
        "msgs_to": lambda e: e[0].out_msgs,
        "msgs_from": lambda e: e[0].in_msgs,
        "bytes_to": lambda e: e[0].out_bytes,
        "bytes_from": lambda e: e[0].in_bytes,
        "last": last_ns,
        "idle": lambda e: now_ns - last_ns(e),
        "stop": end_ns,
        "rtt": lambda e: e[0].rtt,
    }
    if sort in largest_first:
        key = largest_first[sort]
        return sorted(entries, key=lambda e: -key(e))
    if sort == "uptime":
        return sorted(entries, key=lambda e: end_ns(e) - e[0].start_ns)
    if sort == "reason":
        return sorted(entries, key=lambda e: e[1].reason if e[1] is not None else "")
    return entries


def raw_auth_user(opts: dict[str, Any]) -> str:
    """``getRawAuthUser``: the nkey, the user name, or a token's stand-in."""
    for key in ("nkey", "user"):
        if isinstance(opts.get(key), str) and opts[key]:
            return str(opts[key])
    return "[REDACTED]" if opts.get("auth_token") else ""


def select_entries(entries: list[Entry], cid: int, user: str, filter_subject: str, mqtt_client: str) -> list[Entry]:
    """``entries`` (the connections of the state and account asked for, by id) narrowed by
    ``cid`` (an open one first), ``user``, ``mqtt_client`` and ``filter_subject``."""
    if cid > 0:
        found = [e for e in entries if e[1] is None and e[0].cid == cid]
        if found:
            return found
        entries = [e for e in entries if e[1] is not None and e[0].cid == cid][:1]
    if user:
        entries = [e for e in entries if raw_auth_user(e[0].opts) == user]
    if mqtt_client and cid <= 0:
        return []  # jsemu has no MQTT clients
    if filter_subject and cid <= 0:
        entries = [
            e
            for e in entries
            if e[1] is not None
            or any(subjects_collide(filter_subject, s.subject.decode("utf-8", "replace")) for s in e[0].subs.values())
        ]
    return entries
