"""Lame duck mode: leave gracefully, so clients move elsewhere without a reconnect storm.

Theory of operation (nats-server's ``lameDuckMode``, every step on the server's clock so a
test that moves the controlled clock sees the schedule exactly):

1. ``Entering lame duck mode, stop accepting new clients``; the client listener closes (the
   monitoring port stays up). The services go quiet (``Server.lame_duck_hooks``: JetStream
   shuts down, so its API answers nothing and its streams take no publishes).
2. No clients: the server shuts down at once (the routes hear nothing before they close).
   Otherwise the clients of this moment are taken, each route gets an INFO with ``ldm`` (its
   peer drops this server's client URLs and tells its own clients at once, so none moves
   here), each client that takes async INFO gets the lame duck INFO (``ldm`` and the peers'
   URLs only), and the grace period (``lame_duck_grace_period``) starts, during which a cluster
   of servers can all be put into lame duck mode before their clients move between them.
3. ``Closing existing clients``: one by one, silently (no ``-ERR``; the closed reason is
   ``Server Shutdown``), the wait between two a random duration in [si/2, si) where si is
   (``lame_duck_duration`` - grace) / clients, at most 1 s; with more clients than
   nanoseconds to spread them over, in batches without a wait inside.
4. After the last one the server shuts down (``Server.lame_duck_done`` is set after it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from .timers import Cancellable

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .server import Server

__all__ = ["SERVER_SHUTDOWN", "LameDuck", "close_interval"]

log = logging.getLogger("jsemu.server")
_INF = {"nats_level": "INF"}

#: The closed reason of a client closed by the server's shutdown (Go's ``ServerShutdown``).
SERVER_SHUTDOWN = "Server Shutdown"
_SECOND = 10**9


def close_interval(duration: int, grace: int, clients: int) -> tuple[int, int]:
    """``(si, batch)`` of ``lameDuckMode``: the longest wait between two closes (ns) and how
    many clients are closed between two waits."""
    spread = duration - grace
    if spread <= 0:
        spread = _SECOND
    si = spread // clients if clients else 0
    batch = 1
    if si < 1:
        si = 1
        batch = clients // spread
    elif si > _SECOND:
        si = _SECOND
    return si, batch


class LameDuck:
    """One server's lame duck run (``Server.enter_lame_duck`` starts it)."""

    def __init__(self, server: Server, shutdown: Callable[[], None]) -> None:
        self.server = server
        self._shutdown = shutdown
        self._clients: list[ClientConnection] = []
        self._next = 0
        self._si = 0
        self._batch = 1
        self.timer: Cancellable | None = None

    def enter(self) -> None:
        server = self.server
        log.info("Entering lame duck mode, stop accepting new clients", extra=_INF)
        server.lame_duck = True
        server.close_listener()
        for hook in server.lame_duck_hooks:
            hook()
        clients = [c for c in server.connections.values() if not c.closed]
        if not clients:
            self._shutdown()
            return
        opts = server.options
        grace = abs(opts.lame_duck_grace_period)
        self._si, self._batch = close_interval(opts.lame_duck_duration, grace, len(clients))
        self._clients = clients
        if server.cluster is not None:
            server.cluster.send_lame_duck()
        server.send_lame_duck_info()
        server.flush()
        self.timer = server.timers.at(server.clock.now_ns() + grace, self._start_closing)

    def _start_closing(self) -> None:
        log.info("Closing existing clients", extra=_INF)
        self._close_some()

    def _close_some(self) -> None:
        """Close the next client (or batch), then wait a random part of ``si`` for the next."""
        server = self.server
        clients = self._clients
        while True:
            i = self._next
            self._next += 1
            clients[i].close_quietly(SERVER_SHUTDOWN)
            if i == len(clients) - 1:
                self.timer = None
                self._shutdown()
                return
            if self._batch == 1 or i % self._batch == 0:
                si = self._si
                wait = max(server.rng.randrange(si), si // 2)
                self.timer = server.timers.at(server.clock.now_ns() + wait, self._close_some)
                return

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def shutdown_task(server: Server) -> Callable[[], None]:
    """The end of lame duck mode: stop the server (``Server.stop``, the app's included)
    in a task, then set ``lame_duck_done``."""

    def shutdown() -> None:
        async def run() -> None:
            await server.stop()
            server.lame_duck_done.set()

        server.lame_duck_task = asyncio.ensure_future(run())

    return shutdown
