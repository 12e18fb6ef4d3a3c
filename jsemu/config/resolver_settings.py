"""``resolver: {type: full | cache, dir, allow_delete, hard_delete, limit, ttl, interval, timeout}``,
read as nats-server's ``parseAccountResolver`` reads the map form, with its texts for what it
refuses (``dir has no value and needs to point to a directory``, ``CACHE does not accept
allow_delete``, ``FULL does not accept ttl``, a bad duration's ``time: ...``). A ``type`` of
``MEM``/``MEMORY`` in the map is the memory resolver (:func:`resolver_settings` returns None, as
for the string form); any other type is the caller's "should be MEM or URL" error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..protocol.go_duration import parse_duration
from ..server.resolver_dir import DEFAULT_FETCH_TIMEOUT_NS, DELETE_HARD, DELETE_NONE, DELETE_RENAME, ResolverSettings
from .parser import ConfigError

__all__ = ["resolver_settings"]

_CACHE_LIMIT = 1000


def resolver_settings(value: Any, error: Callable[[str], ConfigError]) -> ResolverSettings | None:
    """The NATS-based resolver's settings, None when ``value`` is not that (``ConfigError`` via
    ``error(message)`` when nats-server refuses it)."""
    if not isinstance(value, dict):
        return None
    kind = str(value.get("type", "")).upper()
    if kind not in ("FULL", "CACHE"):
        if kind in ("MEM", "MEMORY"):
            return None
        raise error(
            'error parsing account resolver, should be MEM or  URL("url") or a map containing dir and type '
            "state=[FULL|CACHE])"
        )
    durations: dict[str, int] = {}
    for key in ("ttl", "interval", "timeout"):
        if key in value:
            try:
                durations[key] = parse_duration(str(value[key]))
            except ValueError as exc:
                raise error(str(exc)) from None
    directory = str(value.get("dir") or "")
    if not directory:
        raise error("dir has no value and needs to point to a directory")
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise error("dir needs to point to an accessible directory")
    allow_delete = value.get("allow_delete") is True
    limit = value.get("limit", 0)
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) else 0
    timeout = durations.get("timeout", DEFAULT_FETCH_TIMEOUT_NS)
    if "timeout" in durations and timeout <= 0:
        raise error(f"Fetch timeout {value['timeout']} is too smal")
    if kind == "CACHE":
        if durations.get("interval"):
            raise error("CACHE does not accept sync")
        if allow_delete:
            raise error("CACHE does not accept allow_delete")
        if "hard_delete" in value:
            raise error("CACHE does not accept hard_delete")
        return ResolverSettings(
            False,
            path,
            DELETE_HARD,
            limit if limit > 0 else _CACHE_LIMIT,
            timeout_ns=timeout,
            ttl_ns=durations.get("ttl", 0),
        )
    if durations.get("ttl"):
        raise error("FULL does not accept ttl")
    if "hard_delete" in value and not allow_delete:
        raise error("hard_delete has no effect without delete")
    delete = DELETE_NONE
    if allow_delete:
        delete = DELETE_HARD if value.get("hard_delete") is True else DELETE_RENAME
    interval = durations.get("interval", 0)
    return ResolverSettings(True, path, delete, limit, interval if interval > 0 else 60 * 10**9, timeout)
