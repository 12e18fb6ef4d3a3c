"""The ``wss://`` port's accept loop: TLS for clients that speak it, Go's answer to those that
do not.

Why not ``loop.create_server(ssl=...)``: nats-server's WebSocket port is Go's HTTP server on a
TLS listener, and Go reads the first record header before the handshake; a client that sends
plain HTTP there (``ws://`` to a ``wss://`` port, a common mistake) gets ``HTTP/1.0 400 Bad
Request`` and ``Client sent an HTTP request to an HTTPS server.`` before the close. asyncio's
TLS transport would consume those bytes in a failed handshake. So each accepted socket is
looked at first (its first byte peeked, nothing read): a TLS record (handshake or alert)
goes to asyncio's TLS with :meth:`asyncio.loop.connect_accepted_socket`, anything else to a
small protocol that reads the five bytes Go reads and answers as Go does
(``protocol/websocket.py`` :func:`plain_text_on_tls`). A socket that sends nothing waits in a
reader callback, costing nobody else anything, and is dropped when the port closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable

from ..protocol.websocket import plain_text_on_tls

__all__ = ["TlsPort"]

#: TLS record types a client's first record may have: handshake, alert.
_TLS_FIRST = (0x16, 0x15)


class _PlainOnTls(asyncio.Protocol):
    """A client in the clear on the TLS port: the first five bytes, then Go's answer."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.head = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        transport = self.transport
        assert transport is not None
        self.head += data
        if len(self.head) < 5 or transport.is_closing():
            return
        answer = plain_text_on_tls(self.head)
        if answer:
            transport.write(answer)
        transport.close()


class TlsPort:
    """A listening socket whose accepted sockets become ``factory()`` protocols over TLS."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], context: ssl.SSLContext, timeout: float | None) -> None:
        self.factory = factory
        self.context = context
        self.timeout = timeout
        self.port = 0
        self._sock: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        #: Accepted sockets not handed to a transport yet.
        self._waiting: set[socket.socket] = set()

    def start(self, host: str, port: int, backlog: int = 100) -> int:
        """Listen (bound when this returns) and accept from the next loop turn; the port."""
        family, _, _, _, address = socket.getaddrinfo(
            host or "0.0.0.0", port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._sock = sock
        self.port = sock.getsockname()[1]
        self._accepting = asyncio.get_running_loop().create_task(self._accept(sock))
        return self.port

    async def _accept(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError:
                if self._sock is None:
                    return
                await asyncio.sleep(0.01)  # out of descriptors, say: try again, as Go does
                continue
            conn.setblocking(False)
            self._waiting.add(conn)
            loop.add_reader(conn.fileno(), self._readable, conn)

    def _readable(self, conn: socket.socket) -> None:
        """The first bytes arrived: TLS, or plain text; the socket leaves the waiting room."""
        loop = asyncio.get_running_loop()
        loop.remove_reader(conn.fileno())
        self._waiting.discard(conn)
        try:
            first = conn.recv(1, socket.MSG_PEEK)
        except OSError:
            first = b""
        if not first:
            conn.close()
            return
        if first[0] in _TLS_FIRST:
            coro = loop.connect_accepted_socket(
                self.factory, conn, ssl=self.context, ssl_handshake_timeout=self.timeout
            )
        else:
            coro = loop.connect_accepted_socket(_PlainOnTls, conn)
        loop.create_task(coro).add_done_callback(_quiet)

    def close(self) -> None:
        """Take no new socket; drop those that have sent nothing yet."""
        sock, self._sock = self._sock, None
        if self._accepting is not None:
            self._accepting.cancel()
            self._accepting = None
        if sock is not None:
            sock.close()
        loop = asyncio.get_running_loop()
        for conn in self._waiting:
            with contextlib.suppress(OSError, ValueError):
                loop.remove_reader(conn.fileno())
            conn.close()
        self._waiting.clear()


def _quiet(task: asyncio.Task[object]) -> None:
    """A failed handshake is the client's doing (asyncio closes the socket): nothing to log."""
    if not task.cancelled():
        task.exception()
