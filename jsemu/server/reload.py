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

Accounts (``accountsOption``, applied in ``reloadAuthorization``): users, accounts, imports
and exports change at run time with no line of their own (``Reloaded: accounts`` comes with
every reload). The accounts still configured keep their subject space and their clients'
subscriptions (:meth:`AccountSpace.reload`); a client whose user is gone or now in another
account is closed silently, before the others are checked again; a changed ``no_auth_user``
is refused as nats-server refuses it. An account's JetStream nats-server changes too; jsemu
refuses that, and says so.

Routes (``reloadRoutes``/``routesOption``): the ``routes`` list is the one part of a cluster
that changes at run time. New URLs are dialled as configured routes, routes to URLs no longer
listed are closed (``Route Removed``, each followed by ``Removed route <url>``) before the
``cluster routes`` line, as nats-server applies an option before it logs its line. The
cluster's host and port cannot change (nats-server's ``cluster host``/``cluster port``
messages; a random port compares as 0 against the port in use, so nats-server refuses any
reload of a server started with ``--cluster ...:-1``: so does jsemu). Any other change of
the block (``clusterOption``) is applied and logged as ``Reloaded: cluster``: a new name as
``Cluster name updated to <name>`` just before it (routes stay up, clients are not told; new
clients and routes get the new name), ``no_advertise`` in the route INFO new routes get (the
client URLs already learnt stay), the ping settings at each route's next PING.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..protocol.go_duration import format_duration
from .options import ServerOptions

if TYPE_CHECKING:
    from .auth import Auth
    from .connection import ClientConnection
    from .server import Server

__all__ = ["CLUSTER_LINE", "NO_CONFIG_FILE", "ROUTES_LINE", "ReloadRefused", "apply_options", "diff_options"]

log = logging.getLogger("jsemu.server")
_INF = {"nats_level": "INF"}
_ERR = {"nats_level": "ERR"}

#: nats-server's ``Reload`` error for a server started without a configuration file.
NO_CONFIG_FILE = "can only reload config when a file is provided using -c or --config"
#: The line of a change of the routes list (the routes change just before it is logged).
ROUTES_LINE = "cluster routes"
#: The line of any other change of the ``cluster`` block (applied just before it is logged).
CLUSTER_LINE = "cluster"


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
        if f.attr == "max_subscriptions":  # Nkeys, Users, Accounts, NoAuthUser, Username, ...
            old_nau = old_auth.no_auth_user if old_auth else ""
            new_nau = new_auth.no_auth_user if new_auth else ""
            if old_nau != new_nau:
                raise ReloadRefused(f"config reload not supported for NoAuthUser: old={old_nau}, new={new_nau}")
            lines += auth_lines
        elif f.attr == "max_pending" and _diff_cluster(old, new):  # then Cluster
            lines.append(CLUSTER_LINE)
        elif f.attr == "domain" and _route_urls(old) != _route_urls(new):  # ... then Routes
            lines.append(ROUTES_LINE)
    if old.store_dir != new.store_dir:
        raise ReloadRefused("config reload not supported for jetstream storage dir")
    if (old.max_memory_store, old.max_file_store) != (new.max_memory_store, new.max_file_store):
        raise ReloadRefused("config reload not supported for jetstream max memory and max store")
    for other in ("cluster_size", "cluster_name", "tls", "system_account", "client_advertise"):
        if getattr(old, other) != getattr(new, other):
            raise ReloadRefused(f"config reload not supported for {other} by jsemu yet")
    _diff_accounts(old, new)
    return lines


def _diff_accounts(old: ServerOptions, new: ServerOptions) -> None:
    """What of the ``accounts`` block jsemu cannot change at run time, though nats-server
    can: an account's JetStream (enabled, its limits: nats-server enables or disables it and
    applies new limits) and the system account's existence."""
    if old.jetstream:
        before = [(a.name, a.jetstream, a.limits) for a in old.accounts if a.jetstream]
        after = [(a.name, a.jetstream, a.limits) for a in new.accounts if a.jetstream]
        if sorted(before, key=repr) != sorted(after, key=repr) or bool(old.accounts) != bool(new.accounts):
            raise ReloadRefused("config reload not supported for the JetStream of accounts by jsemu yet")
    was = {a.name for a in old.accounts}
    now = {a.name for a in new.accounts}
    if old.system_account in was and old.system_account not in now:
        raise ReloadRefused("config reload not supported for removing the system account by jsemu yet")


def _cluster_view(options: ServerOptions) -> tuple[str, int]:
    """(host, port) of the route listener as Go's ``ClusterOpts`` has them ("", 0 without one)."""
    c = options.cluster
    return (c.host, c.port) if c is not None else ("", 0)


def _route_urls(options: ServerOptions) -> list[str]:
    return list(options.cluster.routes) if options.cluster is not None else []


def _diff_cluster(old: ServerOptions, new: ServerOptions) -> bool:
    """``validateClusterOpts``: host and port stay; whether anything else of the block (not
    its routes, a separate option) changed."""
    (old_host, old_port), (new_host, new_port) = _cluster_view(old), _cluster_view(new)
    if old_host != new_host:
        raise ReloadRefused(f"config reload not supported for cluster host: old={old_host}, new={new_host}")
    if old_port != new_port:
        raise ReloadRefused(f"config reload not supported for cluster port: old={old_port}, new={new_port}")
    if old.cluster is not None and new.cluster is not None:
        before = replace(old.cluster, routes=[], port=0, listen_set=False)
        after = replace(new.cluster, routes=[], port=0, listen_set=False)
        return before != after
    return False


def apply_options(
    server: Server, new: ServerOptions, lines: Sequence[str] = (), say: Callable[[str], None] | None = None
) -> None:
    """Put ``new`` in force on a running server (after :func:`diff_options` accepted it),
    logging ``lines`` with ``say``: the routes change right before its line."""
    old = server.options
    for line in lines:
        if line == ROUTES_LINE and server.cluster is not None:
            server.cluster.reload_routes(_route_urls(old), _route_urls(new))
        elif line == CLUSTER_LINE and server.cluster is not None and new.cluster is not None:
            server.cluster.reload_settings(new.cluster)
        if say is not None:
            say(line)
    new.port = old.port
    if server.cluster is not None and new.cluster is not None:
        new.cluster.port = old.cluster.port if old.cluster is not None else new.cluster.port
        server.cluster.options = new.cluster
    server.options = new
    server.write_deadline_ns = new.write_deadline_ns()
    server.refresh_info()
    for conn in server.connections.values():  # as each client's ``mpay`` and ``mcl``
        conn.parser.max_payload = new.max_payload
        conn.parser.max_control_line = new.max_control_line
    if old.accounts != new.accounts:
        server.account_space.reload(new.accounts)
    _reauthorize(server, new)


def _reauthorize(server: Server, new: ServerOptions) -> None:
    """``reloadAuthorization``: every client checked against the new settings. A client that
    named a user (or logged in as the ``no_auth_user``) whose new entry is gone or in another
    account is closed silently first (``clientHasMovedToDifferentAccount``; nats-server looks
    only in ``users`` and ``nkeys``, so a client of a single ``user``/``password`` or one that
    sent a name the server never asked for is closed too); the others are checked again."""
    auth = new.auth
    for conn in list(server.connections.values()):
        if conn.closed or not conn.connect_received:
            continue
        if _has_moved(conn, auth):
            conn.close_quietly("Client Closed")
            continue
        if auth is None:
            conn.user = None
            conn.set_permissions(None)
            continue
        user = auth.authenticate(conn.opts, conn.nonce)
        if user is None:
            conn.auth_violation()
            continue
        conn.user = user
        conn.set_permissions(user.permissions)
    server.flush()


def _has_moved(conn: ClientConnection, auth: Auth | None) -> bool:
    """nats-server's ``clientHasMovedToDifferentAccount`` (its ``opts.Username`` is the
    ``no_auth_user``'s name for a client that logged in as it)."""
    opts = conn.opts
    nkey = opts.get("nkey") or ""
    name = opts.get("user") or ""
    if not nkey and not name and conn.user is not None and _anonymous(opts):
        if auth is not None and conn.user.name in auth.nkeys:
            nkey = conn.user.name
        else:
            name = conn.user.name
    if nkey:
        user = auth.nkeys.get(nkey) if auth is not None else None
    elif name:
        user = auth.users.get(name) if auth is not None else None
    else:
        return False
    return user is None or user.account != conn.account.name


def _anonymous(opts: dict[str, Any]) -> bool:
    return not any(opts.get(key) for key in ("user", "pass", "auth_token", "nkey"))
