"""``client_advertise`` and the cluster's ``advertise``: the address a server tells others.

Behind NAT, a proxy or a container's port mapping, the address a server listens on is not
the one others can reach it at. nats-server then advertises what it is told instead:

* ``client_advertise`` (``--client_advertise``): the server's client INFO ``host``/``port``,
  its own entry in ``connect_urls`` (to its clients, and to route peers, which pass it to
  theirs), and ``/varz`` ``host``/``port``;
* the cluster block's ``advertise`` (``--cluster_advertise``): the route INFO ``host``/``port``
  and ``ip`` (``nats-route://host:port/``), which peers gossip on to servers that will dial
  it.

Both are read by nats-server's ``parseHostPort``: ``host:port`` split by Go's
``net.SplitHostPort``; a value without a port (``host``) takes the listener's port, and so do
ports 0 and -1. Its errors are Go's words; the server stops at start-up with them
(``Error setting server INFO with ClientAdvertise value of ...``). The parsing here is a
port of those two functions, so the same value is accepted or refused with the same line.
"""

from __future__ import annotations

import re

__all__ = ["AdvertiseError", "join_host_port", "parse_host_port"]

_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64 = 2**63


class AdvertiseError(ValueError):
    """An advertise value nats-server refuses, with Go's error text."""


def _split_host_port(hostport: str) -> tuple[str, str]:
    """Go's ``net.SplitHostPort``."""

    def fail(why: str) -> AdvertiseError:
        return AdvertiseError(f"address {hostport}: {why}")

    i = hostport.rfind(":")
    if i < 0:
        raise fail("missing port in address")
    j = k = 0
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise fail("missing ']' in address")
        if end + 1 == len(hostport):
            raise fail("missing port in address")
        if end + 1 != i:
            raise fail("too many colons in address" if hostport[end + 1] == ":" else "missing port in address")
        host = hostport[1:end]
        j, k = 1, end + 1
    else:
        host = hostport[:i]
        if ":" in host:
            raise fail("too many colons in address")
    if "[" in hostport[j:]:
        raise fail("unexpected '[' in address")
    if "]" in hostport[k:]:
        raise fail("unexpected ']' in address")
    return host, hostport[i + 1 :]


def _atoi(text: str) -> int:
    """Go's ``strconv.Atoi`` (decimal, an optional sign, nothing else)."""
    if not _GO_INT.fullmatch(text):
        raise AdvertiseError(f'strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if not -_INT64 <= value < _INT64:
        raise AdvertiseError(f'strconv.Atoi: parsing "{text}": value out of range')
    return value


def parse_host_port(hostport: str, default_port: int) -> tuple[str, int]:
    """nats-server's ``parseHostPort``: (host, port) of an advertise value; the listener's
    ``default_port`` when it has none, or 0 or -1; :class:`AdvertiseError` as Go's."""
    if not hostport:
        raise AdvertiseError("no hostport specified")
    try:
        host, port_text = _split_host_port(hostport)
    except AdvertiseError as exc:
        if not str(exc).endswith("missing port in address"):
            raise
        host, port_text = _split_host_port(f"{hostport}:{default_port}")
    port = _atoi(port_text.strip(" \t\n\r\v\f"))
    if port in (0, -1):
        port = default_port
    return host.strip(" \t\n\r\v\f"), port


def join_host_port(host: str, port: int) -> str:
    """Go's ``net.JoinHostPort``: an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
