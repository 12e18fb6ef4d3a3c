"""The order of /connz (and CONNZ requests): nats-server's ``sort`` options (``monitor_sort_opts.go``).

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .closed import ClosedClient
    from .connection import ClientConnection

__all__ = ["SORTS", "check_sort", "sort_entries"]

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
