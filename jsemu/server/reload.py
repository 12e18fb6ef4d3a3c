"""Configuration reload (SIGHUP, ``--signal reload``): nats-server's ``server/reload.go``.

Theory of operation. The file is read again into a fresh :class:`ServerOptions` (the command
line's flags on top, as at start-up) by the caller; :func:`diff_options` walks the options in
the field order of Go's ``Options`` struct and either refuses the whole reload at the first
option nats-server cannot change at run time (``config reload not supported for <Field>:
old=<v>, new=<v>``, nothing applied) or returns the ``Reloaded: ...`` lines of what changes.
:func:`apply_options` then puts the new options in force: limits and the client INFO at
once, authorization by checking every client again (``reloadAuthorization``): a client whose
user is gone is closed silently, one whose credentials no longer pass gets ``-ERR
'Authorization Violation'``, and the others take their user's new permissions, losing the
subscriptions those no longer allow (``Removed sub ...``, ``-ERR 'Permissions Violation for
Subscription to ...'``).

Routes (``cluster``) are reloaded by the routes layer: :data:`ROUTE_RELOAD` is its hook.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.go_duration import format_duration
from .options import ServerOptions

if TYPE_CHECKING:
    from .server import Server

__all__ = ["ROUTE_RELOAD", "ReloadRefused", "apply_options", "diff_options"]

log = logging.getLogger("jsemu.server")
_INF = {"nats_level": "INF"}
_ERR = {"nats_level": "ERR"}

#: The routes layer's part of a reload (``cluster`` and ``routes``): called with the server,
#: the old and the new options; it may raise :class:`ReloadRefused`. None: no routes.
ROUTE_RELOAD: list[Callable[[Server, ServerOptions, ServerOptions], list[str]]] = []


class ReloadRefused(Exception):
    """nats-server's reason for refusing a reload (nothing has been applied)."""


@dataclass(frozen=True)
class _Field:
    attr: str
    go_name: str
    #: The ``Reloaded:`` line for a new value; None: nats-server refuses a change.
    line: Callable[[Any], str] | None
    show: Callable[[Any], str] = str


def _ns(value: Any) -> str:
    return format_duration(int(value))


def _seconds(value: Any) -> str:
    return format_duration(round(float(value) * 1e9))


#: jsemu's options in the order of Go's ``Options`` struct (so errors and lines come in its order).
_FIELDS = [
    _Field("server_name", "ServerName", None, lambda v: v or ""),
    _Field("host", "Host", None),
    _Field("port", "Port", None),
    _Field("max_connections", "MaxConn", lambda v: f"max_connections = {v}"),
    _Field("max_subscriptions", "MaxSubs", None),
    _Field("ping_interval", "PingInterval", lambda v: f"ping_interval = {_seconds(v)}", _seconds),
    _Field("max_pings_out", "MaxPingsOut", lambda v: f"ping_max = {v}"),
    _Field("http_port", "HTTPPort", None, lambda v: str(v or 0)),
    _Field("max_control_line", "MaxControlLine", lambda v: f"max_control_line = {v}"),
    _Field("max_payload", "MaxPayload", lambda v: f"max_payload = {v}"),
    _Field("max_pending", "MaxPending", None),
    _Field("jetstream", "JetStream", None, lambda v: "true" if v else "false"),
    _Field("domain", "JetStreamDomain", None, lambda v: v or ""),
    _Field("write_deadline", "WriteDeadline", lambda v: f"write_deadline = {_seconds(v)}", _seconds),
    _Field("lame_duck_duration", "LameDuckDuration", None, _ns),
    _Field("lame_duck_grace_period", "LameDuckGracePeriod", None, _ns),
]


def diff_options(old: ServerOptions, new: ServerOptions) -> list[str]:
    """The ``Reloaded: ...`` lines of going from ``old`` to ``new``, in nats-server's order;
    :class:`ReloadRefused` for a change it cannot make."""
    lines: list[str] = []
    auth_lines: list[str] = []
    old_auth, new_auth = old.auth, new.auth
    if (old_auth.nkeys if old_auth else {}) != (new_auth.nkeys if new_auth else {}):
        auth_lines.append("authorization nkey users")
    auth_lines += ["authorization users", "accounts"]  # always, as nats-server's (never DeepEqual)
    if old.accounts != new.accounts:
        raise ReloadRefused("config reload not supported for Accounts by jsemu yet")
    old_user = old_auth.user if old_auth else None
    new_user = new_auth.user if new_auth else None
    if (old_user.name if old_user else "") != (new_user.name if new_user else ""):
        auth_lines.append("authorization username")
    if (old_user.password if old_user else "") != (new_user.password if new_user else ""):
        auth_lines.append("authorization password")
    if (old_auth.token if old_auth else "") != (new_auth.token if new_auth else ""):
        auth_lines.append("authorization token")
    for f in _FIELDS:
        before, after = getattr(old, f.attr), getattr(new, f.attr)
        if before != after and not (f.attr == "port" and after == 0):  # a random port: ignored
            if f.line is None:
                raise ReloadRefused(
                    f"config reload not supported for {f.go_name}: old={f.show(before)}, new={f.show(after)}"
                )
            lines.append(f.line(after))
        if f.attr == "max_subscriptions":  # Nkeys, Users, Accounts, Username, Password, Authorization
            lines += auth_lines
    if old.store_dir != new.store_dir:
        raise ReloadRefused("config reload not supported for jetstream storage dir")
    if (old.max_memory_store, old.max_file_store) != (new.max_memory_store, new.max_file_store):
        raise ReloadRefused("config reload not supported for jetstream max memory and max store")
    for other in ("cluster_size", "cluster_name", "tls", "system_account"):
        if getattr(old, other) != getattr(new, other):
            raise ReloadRefused(f"config reload not supported for {other} by jsemu yet")
    return lines


def apply_options(server: Server, new: ServerOptions) -> None:
    """Put ``new`` in force on a running server (after :func:`diff_options` accepted it)."""
    old = server.options
    new.port = old.port
    server.options = new
    server.write_deadline_ns = new.write_deadline_ns()
    server.refresh_info()
    for conn in server.connections.values():  # as each client's ``mpay`` and ``mcl``
        conn.parser.max_payload = new.max_payload
        conn.parser.max_control_line = new.max_control_line
    if old.auth != new.auth or new.auth is not None:
        _reauthorize(server, new)


def _reauthorize(server: Server, new: ServerOptions) -> None:
    """``reloadAuthorization``: every client checked against the new settings."""
    auth = new.auth
    for conn in list(server.connections.values()):
        if conn.closed or not conn.connect_received:
            continue
        if auth is None:
            conn.user = None
            conn.set_permissions(None)
            continue
        old_user = conn.user
        if old_user is not None and old_user.name and not _still_defined(new, old_user.name):
            conn.close_quietly("Client Closed")
            continue
        user = auth.authenticate(conn.opts, conn.nonce)
        if user is None:
            conn.auth_violation()
            continue
        conn.user = user
        conn.set_permissions(user.permissions)
    server.flush()


def _still_defined(options: ServerOptions, name: str) -> bool:
    auth = options.auth
    if auth is None:
        return False
    if name in auth.users or name in auth.nkeys:
        return True
    return auth.user is not None and auth.user.name == name
