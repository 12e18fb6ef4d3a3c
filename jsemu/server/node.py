"""A client listener and the server identity its clients see.

A real cluster is N processes, each with its own client port, server id, server name and
xkey, and each telling its clients where the others are (INFO ``connect_urls``). jsemu's
simulated cluster (``cluster_size`` N > 1) keeps one subject space (the core server's
routers) and gives each simulated server a :class:`Node`: a listener of its own and the
identity its connections point at (``ClientConnection.node``), so a client connected to
node k gets node k's INFO and no route protocol is needed. A standalone server is one node
holding the server's own identity, so a single listener costs nothing more than before.

Each node keeps its own view of the other nodes' client URLs, counted as nats-server's
``refCountedUrlSet`` (a URL stays while any server advertises it): ``connect_urls`` is the
node's own URLs first, then its peers', empty while it has none (a lone server advertises
nothing). Every change is pushed by the server as an async INFO to that node's clients.

A node taken down closes its listener (connections refused) and its clients; brought up it
listens again on the same address and port. Its socket is bound synchronously, so the port
takes connections (into the kernel's backlog) as soon as ``reopen`` returns; the event loop
accepts them once the listener is registered, one loop turn later.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from functools import partial
from typing import Any

__all__ = ["Node"]


class Node:
    """One simulated server's client side: its listener, identity and ``connect_urls``."""

    __slots__ = (
        "addresses",
        "closed_stats",
        "info_base",
        "info_urls",
        "listeners",
        "name",
        "peer_urls",
        "port",
        "server_id",
        "total_connections",
        "up",
        "ws_info_urls",
        "ws_peer_urls",
        "xkey",
    )

    def __init__(self, name: str, server_id: str, xkey: str, port: int) -> None:
        self.name = name
        self.server_id = server_id
        self.xkey = xkey
        #: The port asked for until the listener is up (0: a random one), then the one it has.
        self.port = port
        #: The listener (one per bound address once reopened; none while down).
        self.listeners: list[asyncio.base_events.Server] = []
        #: What the listener was bound to: (family, address, dual stack), to reopen it.
        self.addresses: list[tuple[int, Any, bool]] = []
        #: INFO's fields common to all of this node's clients, built once the port is known.
        self.info_base: dict[str, Any] = {}
        #: The other servers' client URLs, counted by how many of them advertise each.
        self.peer_urls: dict[str, int] = {}
        #: ``connect_urls`` of client INFO (own first, then the peers'); empty until a peer is heard of.
        self.info_urls: list[str] = []
        #: The same for WebSocket clients (``ws_connect_urls``: the cluster's WebSocket ports).
        self.ws_peer_urls: dict[str, int] = {}
        self.ws_info_urls: list[str] = []
        #: Taking clients (False while the control plane has it down).
        self.up = True
        #: For this node's ``/varz``: clients it has taken, and the in msgs, in bytes, out msgs
        #: and out bytes of those that have closed.
        self.total_connections = 0
        self.closed_stats = [0, 0, 0, 0]

    def __repr__(self) -> str:
        return f"<Node {self.name} port={self.port}{'' if self.up else ' down'}>"

    def listening(self, listener: asyncio.base_events.Server, dual_stack: bool) -> None:
        """The listener is up: its port, and what to bind again after a ``close``."""
        self.up = True
        self.listeners = [listener]
        self.addresses = [(s.family, s.getsockname(), dual_stack) for s in listener.sockets]
        self.port = self.addresses[0][1][1]

    def add_urls(self, urls: list[str], ws: bool = False) -> bool:
        """A peer advertises ``urls`` (``ws``: WebSocket ones): count them; whether any is new."""
        peers = self.ws_peer_urls if ws else self.peer_urls
        changed = False
        for url in urls:
            count = peers.get(url, 0)
            peers[url] = count + 1
            changed = changed or count == 0
        return changed

    def remove_urls(self, urls: list[str], ws: bool = False) -> bool:
        """A peer that advertised ``urls`` is gone; whether any URL went."""
        peers = self.ws_peer_urls if ws else self.peer_urls
        changed = False
        for url in urls:
            count = peers.get(url, 0)
            if count <= 1:
                changed = changed or count == 1
                peers.pop(url, None)
            else:
                peers[url] = count - 1
        return changed

    def refresh_urls(self, own: list[str], ws: bool = False) -> None:
        """``connect_urls`` once a peer was heard of: ``own`` (none in lame duck mode), then
        the peers' (own only once they have all gone, as nats-server's ``updateInfo``)."""
        if ws:
            self.ws_info_urls = own + [u for u in self.ws_peer_urls if u not in own]
        else:
            self.info_urls = own + [u for u in self.peer_urls if u not in own]

    def close(self) -> list[asyncio.base_events.Server]:
        """Stop taking connections (the port refuses them from now on); the closed listeners."""
        self.up = False
        closed, self.listeners = self.listeners, []
        for listener in closed:
            listener.close()
        return closed

    def reopen(self, loop: asyncio.AbstractEventLoop, factory: Callable[[], asyncio.Protocol], backlog: int) -> None:
        """Listen again on the addresses and port the listener had (bound and listening when
        this returns; accepted from the next loop turn)."""
        self.up = True
        for family, address, dual_stack in self.addresses:
            sock = _bind(family, address, dual_stack, backlog)
            task = loop.create_task(loop.create_server(factory, sock=sock, backlog=backlog))
            task.add_done_callback(partial(self._serving, sock))

    def _serving(self, sock: socket.socket, task: asyncio.Task[asyncio.base_events.Server]) -> None:
        if task.cancelled() or task.exception() is not None:
            sock.close()
            return
        listener = task.result()
        if self.up:
            self.listeners.append(listener)
        else:  # taken down again before the loop got to it
            listener.close()


def _bind(family: int, address: Any, dual_stack: bool, backlog: int) -> socket.socket:
    """A listening socket on ``address`` as the first listener had it."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if dual_stack else 1)
        sock.bind(address)
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock
