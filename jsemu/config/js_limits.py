"""An account's ``jetstream`` value: ``enabled`` / ``disabled`` / a bool, or a map of limits,
checked as nats-server 2.15.1's ``parseJetStreamForAccount`` checks it (same texts, checked on
the binary: ``tests/jetstream/limits/test_account_js_limits.py``), into a
:class:`~jsemu.server.js_limits.JetStreamLimits`.

Keys are matched without regard to case, with nats-server's aliases. ``cluster_traffic``
(``system`` or ``owner``) is accepted and checked as nats-server does; it names the account
that carries a cluster's replication traffic, and jsemu's simulated cluster has none.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..server.js_limits import UNLIMITED, JetStreamLimits
from .go_types import go_type

__all__ = ["JsLimitsError", "parse_account_jetstream"]

#: nats-server's keys (lower case) -> the :class:`JetStreamLimits` field they set.
_SIZES = {
    **dict.fromkeys(("max_memory", "max_mem", "mem", "memory"), "max_memory"),
    **dict.fromkeys(("max_store", "max_file", "max_disk", "store", "disk"), "max_storage"),
    **dict.fromkeys(("max_streams", "streams"), "max_streams"),
    **dict.fromkeys(("max_consumers", "consumers"), "max_consumers"),
    **dict.fromkeys(("mem_max_stream_bytes", "memory_max_stream_bytes"), "memory_max_stream_bytes"),
    **dict.fromkeys(("disk_max_stream_bytes", "store_max_stream_bytes"), "storage_max_stream_bytes"),
    "max_ack_pending": "max_ack_pending",
}
_REQUIRED = frozenset({"max_bytes_required", "max_stream_bytes", "max_bytes"})


class JsLimitsError(Exception):
    """``message`` at ``key`` of the map (``None``: no position, as nats-server prints it)."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def _go_value(value: Any) -> str:
    """Go's ``%v`` of a parsed value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_account_jetstream(value: Any) -> tuple[bool, JetStreamLimits]:
    """(enabled, limits) of an account's ``jetstream`` value; :class:`JsLimitsError` as nats-server."""
    if isinstance(value, bool):
        return value, UNLIMITED
    if isinstance(value, str):
        low = value.lower()
        if low in ("enabled", "enable"):
            return True, UNLIMITED
        if low in ("disabled", "disable"):
            return False, UNLIMITED
        raise JsLimitsError(None, f"Expected 'enabled' or 'disabled' for string value, got '{value}'")
    if not isinstance(value, dict):
        raise JsLimitsError(None, f"Expected map, bool or string to define JetStream, got {go_type(value)}")
    sizes: dict[str, Any] = {}
    required = False
    for key, item in value.items():
        low = key.lower()
        if low in _SIZES:
            if isinstance(item, bool) or not isinstance(item, int):
                raise JsLimitsError(key, f'Expected a parseable size for "{key}", got {_go_value(item)}')
            sizes[_SIZES[low]] = item
        elif low in _REQUIRED:
            if not isinstance(item, bool):
                raise JsLimitsError(key, f'Expected a parseable bool for "{key}", got {_go_value(item)}')
            required = item
        elif low == "cluster_traffic":
            if not isinstance(item, str):
                raise JsLimitsError(
                    key, f"Expected either 'system' or 'owner' string value for \"{key}\", got {_go_value(item)}"
                )
            if item.lower() not in ("system", "owner"):
                raise JsLimitsError(key, f"Expected 'system' or 'owner' string value for \"{key}\", got {item}")
        else:
            raise JsLimitsError(key, f'unknown field "{key}"')
    return True, replace(UNLIMITED, max_bytes_required=required, **sizes)
