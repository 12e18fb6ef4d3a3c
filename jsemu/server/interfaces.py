"""The machine's addresses, as Go's ``net.Interfaces`` lists them for nats-server.

A server listening on the wildcard host advertises a client URL per global unicast address
of each interface (``getNonLocalIPsIfHostIsIPAny``): interfaces in index order, each one's
IPv4 address then its IPv6 ones; loopback, link-local and multicast addresses left out.
Python has no portable interface listing, so Linux is read directly (``SIOCGIFADDR`` for
IPv4, ``/proc/net/if_inet6`` for IPv6); elsewhere the host name's addresses stand in.
"""

from __future__ import annotations

import ipaddress
import socket
import struct

__all__ = ["global_unicast_ips", "interface_ips"]

_SIOCGIFADDR = 0x8915


def _ipv4_of(name: str) -> str | None:
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            packed = fcntl.ioctl(sock.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
        except OSError:  # no IPv4 address on this interface
            return None
    return socket.inet_ntoa(packed[20:24])


def _ipv6_by_interface() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    try:
        with open("/proc/net/if_inet6") as f:
            lines = f.read().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if len(fields) >= 6:
            found.setdefault(fields[5], []).append(str(ipaddress.IPv6Address(bytes.fromhex(fields[0]))))
    return found


def _is_global_unicast(text: str) -> bool:
    """Go's ``IP.IsGlobalUnicast``: private ranges count, loopback and link-local do not."""
    ip = ipaddress.ip_address(text)
    return not (ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified or text == "255.255.255.255")


def interface_ips() -> list[str]:
    """Every address of every interface, loopback and link-local too, in Go's order: what
    nats-server's ports file lists for a listener on the wildcard host (``resolveHostPorts``)."""
    try:
        interfaces = socket.if_nameindex()
    except OSError:
        interfaces = []
    v6 = _ipv6_by_interface()
    ips: list[str] = []
    for _, name in sorted(interfaces):
        v4 = _ipv4_of(name)
        # link-local last, as Go's netlink listing has them (/proc/net/if_inet6 may not)
        ips += ([v4] if v4 else []) + sorted(v6.get(name, []), key=lambda ip: ip.startswith("fe80:"))
    return ips


def global_unicast_ips() -> list[str]:
    """Every global unicast address of the machine, in Go's order (see the module docstring)."""
    ips: list[str] = []
    listed = interface_ips()
    for ip in listed:
        if _is_global_unicast(ip) and ip not in ips:
            ips.append(ip)
    if not ips and not listed:
        try:
            infos = socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)
        except OSError:
            infos = []
        ips = [str(a[0]) for *_, a in infos if _is_global_unicast(str(a[0]))]
        ips = list(dict.fromkeys(ips))
    return ips
