"""The ``cluster {}`` block and nats-server's cluster flags, into ``ClusterOptions``.

nats-server's flags: ``--cluster URL`` (and ``--cluster_listen URL``) is where routes are
accepted (``nats://host:port``, port ``-1`` a random one), ``--routes URL[,URL]`` the routes
to dial, ``--cluster_name``, ``--no_advertise``, ``--connect_retries``, ``--cluster_advertise`` (the block's ``advertise``: the route URL peers
are told, ``server/advertise.py``). The flags win over the file's block. Routes without a cluster port are refused with
nats-server's words.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..protocol.go_duration import parse_duration
from ..server.options import ClusterOptions, ServerOptions
from .go_types import go_type

__all__ = [
    "ROUTES_NEED_CLUSTER",
    "ClusterConfigError",
    "add_cluster_flags",
    "apply_cluster_flags",
    "cluster_block",
    "parse_cluster_url",
]

#: nats-server's line for ``--routes`` without ``--cluster``.
ROUTES_NEED_CLUSTER = "solicited routes require cluster capabilities, e.g. --cluster"

#: What the ``cluster`` block may hold.
CLUSTER_KEYS = frozenset(
    {
        "name",
        "listen",
        "host",
        "net",
        "port",
        "routes",
        "no_advertise",
        "connect_retries",
        "authorization",
        "ping_interval",
        "ping_max",
        "advertise",
        "cluster_advertise",
    }
)


#: nats-server's other ``cluster`` keys: refused, never ignored.
CLUSTER_NOT_YET = frozenset(
    {
        "pool_size",
        "compression",
        "tls",
        "permissions",
        "accounts",
        "write_deadline",
        "write_timeout",
    }
)


class ClusterConfigError(ValueError):
    """A cluster setting nats-server refuses; ``key`` is its path inside the block."""

    def __init__(self, message: str, key: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.key = key


def parse_cluster_url(url: str) -> tuple[str, int]:
    """``nats://host:port`` (or ``host:port``) as host and port; ``-1`` is a random port (0)."""
    rest = url.split("://", 1)[-1].rstrip("/")
    if "@" in rest:
        rest = rest.rsplit("@", 1)[1]
    host, sep, port = rest.rpartition(":")
    if not sep or not re.fullmatch(r"-?\d+", port):
        raise ClusterConfigError("missing port in address")
    value = int(port)
    return host.strip("[]") or "0.0.0.0", 0 if value == -1 else value


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "t", "true"):
        return True
    if lowered in ("0", "f", "false"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}")


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cluster options", "as nats-server's; see the documentation (Clusters)")
    group.add_argument("--routes", "-routes", dest="routes", metavar="URLS", help="routes to solicit and connect")
    group.add_argument("--cluster", "-cluster", dest="cluster", metavar="URL", help="cluster URL for routes")
    group.add_argument(
        "--cluster_name", "-cluster_name", dest="route_cluster_name", metavar="NAME", help="cluster name"
    )
    group.add_argument(
        "--no_advertise",
        "-no_advertise",
        dest="no_advertise",
        nargs="?",
        const=True,
        type=_bool,
        default=None,
        help="do not advertise known cluster information to clients",
    )
    group.add_argument(
        "--cluster_advertise",
        "-cluster_advertise",
        dest="cluster_advertise",
        metavar="URL",
        help="cluster URL to advertise to other servers",
    )
    group.add_argument(
        "--connect_retries", "-connect_retries", dest="connect_retries", type=int, help="retries for implicit routes"
    )
    group.add_argument(
        "--cluster_listen", "-cluster_listen", dest="cluster_listen", metavar="URL", help="cluster URL to listen on"
    )


def apply_cluster_flags(args: argparse.Namespace, options: ServerOptions) -> None:
    """The cluster flags over the file's block; :class:`ClusterConfigError` as nats-server."""
    listen = args.cluster_listen or args.cluster
    cluster = options.cluster
    if listen or args.route_cluster_name or args.routes or args.no_advertise is not None:
        cluster = cluster if cluster is not None else ClusterOptions()
    if cluster is None:
        return
    if listen:
        cluster.host, cluster.port = parse_cluster_url(listen)
        cluster.listen_set = True
    if args.route_cluster_name:
        cluster.name = args.route_cluster_name
    if args.routes:
        cluster.routes = [u.strip() for u in args.routes.split(",") if u.strip()]
    if args.no_advertise is not None:
        cluster.no_advertise = args.no_advertise
    if args.connect_retries is not None:
        cluster.connect_retries = args.connect_retries
    if args.cluster_advertise:
        cluster.advertise = args.cluster_advertise
    if cluster.routes and not cluster.listen_set:
        raise ClusterConfigError(ROUTES_NEED_CLUSTER)
    if not cluster.listen_set:
        return  # a name alone does not make a cluster
    options.cluster = cluster


def cluster_block(block: Any) -> ClusterOptions:
    """The file's ``cluster { ... }`` block."""
    if not isinstance(block, dict):
        raise ClusterConfigError(f"Expected cluster to be a map/struct, got {block}")
    for key in block:
        if key in CLUSTER_NOT_YET:
            raise ClusterConfigError(f'"{key}": not supported by jsemu', (key,))
        if key not in CLUSTER_KEYS:
            raise ClusterConfigError(f'unknown field "{key}"', (key,))
    cluster = ClusterOptions()
    if "listen" in block:
        cluster.host, cluster.port = parse_cluster_url(str(block["listen"]))
        cluster.listen_set = True
    for key in ("host", "net"):
        if key in block:
            cluster.host = str(block[key])
            cluster.listen_set = True
    if "port" in block:
        port = block["port"]
        if not isinstance(port, int) or isinstance(port, bool):
            raise ClusterConfigError(f"interface conversion: interface {{}} is {go_type(port)}, not int64", ("port",))
        cluster.port = 0 if port == -1 else port
        cluster.listen_set = True
    if "name" in block:
        cluster.name = str(block["name"])
    routes = block.get("routes", [])
    if isinstance(routes, str):
        routes = [routes]
    if not isinstance(routes, list):
        raise ClusterConfigError("Expected routes to be an array", ("routes",))
    cluster.routes = [str(r) for r in routes]
    if "no_advertise" in block:
        cluster.no_advertise = bool(block["no_advertise"])
    for key in ("advertise", "cluster_advertise"):
        if key in block:
            cluster.advertise = str(block[key])
    if "connect_retries" in block:
        cluster.connect_retries = int(block["connect_retries"])
    if "ping_interval" in block:
        cluster.ping_interval = _duration("ping_interval", block["ping_interval"])
    if "ping_max" in block:
        ping_max = block["ping_max"]
        if not isinstance(ping_max, int) or isinstance(ping_max, bool):
            raise ClusterConfigError(
                f"interface conversion: interface {{}} is {go_type(ping_max)}, not int64", ("ping_max",)
            )
        cluster.ping_max = ping_max
    auth = block.get("authorization")
    if auth is not None:
        if not isinstance(auth, dict):
            raise ClusterConfigError("Expected authorization to be a map/struct", ("authorization",))
        for key in auth:
            if key not in ("user", "username", "password", "pass", "timeout"):
                raise ClusterConfigError(f'unknown field "{key}"', ("authorization", key))
        cluster.user = str(auth.get("user", auth.get("username", "")))
        cluster.password = str(auth.get("password", auth.get("pass", "")))
        if "timeout" in auth:
            cluster.auth_timeout = float(auth["timeout"])
    return cluster


def _duration(field: str, value: Any) -> float:
    """A Go duration string or a number of seconds, as nats-server's ``parseDuration``."""
    if isinstance(value, str):
        try:
            return parse_duration(value) / 1e9
        except ValueError as exc:
            raise ClusterConfigError(f"error parsing {field}: {exc}", (field,)) from None
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    raise ClusterConfigError(f'invalid use of field "{field}": {field} should be converted to a duration', (field,))
