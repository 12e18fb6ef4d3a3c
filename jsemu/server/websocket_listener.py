"""The WebSocket port: the HTTP upgrade, then a client connection like a TCP one.

Theory of operation. :class:`WebSocketListener` listens on the ``websocket {}`` block's port
(TLS first when it has a ``tls`` block, as nats-server's ``wss://``). Each accepted socket
gets an :class:`UpgradeProtocol`, which reads request heads and answers them
(``protocol/websocket.py``: refusals keep the connection for another request, as Go's HTTP
server does) until one upgrades. From then on the protocol owns a
:class:`~jsemu.server.connection.ClientConnection` made exactly as the TCP listener makes
one, and sits between it and the socket: frames in are decoded and their payload handed to
``data_received`` (so auth, permissions, accounts, JetStream, limits and faults are the TCP
client's), and the connection writes through a :class:`WebSocketTransport` that wraps each
flush in a binary frame and ends with the close frame nats-server sends for the reason the
connection closed. The ``handshake_timeout`` closes a socket that has not upgraded in time.
A socket that misbehaves (garbage, a handshake never finished, bad frames) is answered and
closed on its own; no other connection waits for it.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from ..protocol.websocket import (
    Accepted,
    BadHttp,
    HandshakeReader,
    HandshakeSettings,
    Refused,
    WebSocketFrames,
    check_upgrade,
    close_frame_for,
)
from .auth import Auth
from .connection import ClientConnection
from .tls import server_context
from .websocket_options import WebSocketOptions
from .websocket_tls_port import TlsPort
from .websocket_transport import WebSocketTransport

if TYPE_CHECKING:
    from .node import Node
    from .server import Server

__all__ = ["UpgradeProtocol", "WebSocketListener"]

log = logging.getLogger("jsemu.server")

#: Go's ``rstAvoidanceDelay``: how long a connection stays after its last answer and FIN.
_RST_AVOIDANCE_DELAY = 0.5


class UpgradeProtocol(asyncio.Protocol):
    """One socket of the WebSocket port: the handshake, then the frames of a client."""

    def __init__(self, listener: WebSocketListener) -> None:
        self.listener = listener
        self.raw: asyncio.Transport | None = None
        self.reader: HandshakeReader | None = HandshakeReader()
        self.frames: WebSocketFrames | None = None
        self.conn: ClientConnection | None = None
        self.transport: WebSocketTransport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.raw = transport
        timeout = self.listener.options.handshake_timeout
        if timeout > 0:
            self.timer = asyncio.get_running_loop().call_later(timeout, self._timed_out)

    def _timed_out(self) -> None:
        """The handshake timeout: Go's answer to what came of a request head, if any, and the close."""
        raw, reader = self.raw, self.reader
        assert raw is not None
        answer = reader.timed_out() if reader is not None else b""
        if answer:
            raw.write(answer)
            raw.close()
        else:
            raw.abort()

    def data_received(self, data: bytes) -> None:
        if self.frames is not None:
            self._frames_received(data)
            return
        reader, raw = self.reader, self.raw
        if reader is None:  # answered and closing (_close_after_answer): what comes is dropped
            return
        assert raw is not None
        while True:
            request = reader.feed(data)
            data = b""
            if request is None:
                return
            if isinstance(request, BadHttp):
                raw.write(request.response)
                self._close_after_answer(raw)
                return
            result = check_upgrade(request, self.listener.settings)
            if isinstance(result, Refused):
                peer = raw.get_extra_info("peername") or ("", 0)
                log.warning("%s:%s - websocket handshake error: %s", peer[0], peer[1], result.reason)
                raw.write(result.response(email.utils.formatdate(usegmt=True)))
                if not reader.rest:
                    return
                continue
            if reader.rest:  # nats-server: "client sent data before handshake is complete"
                raw.close()
                return
            self._upgrade(raw, result)
            return

    def _close_after_answer(self, raw: asyncio.Transport) -> None:
        """Go's ``closeWriteAndWait``: the answer and a FIN, then the close half a second
        later (``rstAvoidanceDelay``), so unread input does not reset the connection before
        the client has read the answer."""
        self.reader = None
        if self.timer is not None:
            self.timer.cancel()
        if raw.can_write_eof():
            raw.write_eof()
        self.timer = asyncio.get_running_loop().call_later(_RST_AVOIDANCE_DELAY, raw.close)

    def _upgrade(self, raw: asyncio.Transport, accepted: Accepted) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.reader = None
        raw.write(accepted.response)
        self.frames = WebSocketFrames(
            accepted.compress, accepted.browser, accepted.no_masking, self.listener.server.options.max_payload
        )
        listener = self.listener
        conn = ClientConnection(listener.server, listener.node)
        conn.info_base = listener.info_base()
        conn.auth_source = listener.auth
        conn.awaiting_auth = listener.auth() is not None
        self.conn = conn
        self.transport = WebSocketTransport(raw, self.frames)
        self.transport.connect_defaults = accepted.connect_defaults
        self.transport.forwarded_for = accepted.forwarded_for
        conn.connection_made(self.transport)

    def _frames_received(self, data: bytes) -> None:
        frames, conn, transport = self.frames, self.conn, self.transport
        assert frames is not None and conn is not None and transport is not None
        received = frames.receive(data)
        if received.data and not conn.closed:
            conn.data_received(received.data)
        if received.closing:
            transport.close_frame = received.reply
            if conn.closed:
                transport.close()
            else:
                conn.close_quietly("Client Closed")
        elif received.reply and not conn.closed:
            transport.raw.write(received.reply)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.conn is not None:
            self.conn.connection_lost(exc)


class WebSocketListener:
    """The ``websocket {}`` port of a server (its first node's identity)."""

    def __init__(self, server: Server, node: Node, options: WebSocketOptions) -> None:
        self.server = server
        self.node = node
        self.options = options
        self.port = options.port
        self.settings = HandshakeSettings(
            compression=options.compression,
            same_origin=options.same_origin,
            allowed_origins=tuple(options.allowed_origins),
            headers=tuple(options.headers.items()),
            tls=options.tls is not None,
            cookies=tuple(
                (name, option)
                for name, option in (  # nats-server's order: of two options naming one cookie, the first
                    (options.jwt_cookie, "jwt"),
                    (options.user_cookie, "user"),
                    (options.pass_cookie, "pass"),
                    (options.token_cookie, "auth_token"),
                )
                if name
            ),
        )
        self._listener: asyncio.base_events.Server | None = None
        self._tls_port: TlsPort | None = None
        #: The server's authentication the WebSocket one was made from, and that one.
        self._auth: tuple[Auth | None, Auth | None] | None = None

    @property
    def scheme(self) -> str:
        return "wss" if self.options.tls is not None else "ws"

    @property
    def url(self) -> str:
        """The URL a client dials (loopback for a wildcard listener)."""
        host = self.options.host
        host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
        return f"{self.scheme}://{host}:{self.port}"

    async def start(self) -> None:
        host = self.options.host or "0.0.0.0"
        if self.options.tls is not None:  # wss://: the first bytes looked at before TLS
            tls = TlsPort(partial(UpgradeProtocol, self), server_context(self.options.tls), self.options.tls.timeout)
            self.port = tls.start(host, self.port)
            self._tls_port = tls
            return
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(
            partial(UpgradeProtocol, self), host=host, port=self.port, reuse_address=True
        )
        self.port = self._listener.sockets[0].getsockname()[1]

    def close(self) -> asyncio.base_events.Server | None:
        """Take no new WebSocket client (lame duck, stop); the closed listener (``None``
        for a ``wss://`` port, closed at once)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        tls, self._tls_port = self._tls_port, None
        if tls is not None:
            tls.close()
        return listener

    def auth(self) -> Auth | None:
        """What WebSocket clients authenticate against (kept while the server's stays, so a
        bcrypt check is not paid again per client)."""
        server_auth = self.server.options.auth
        if self._auth is None or self._auth[0] is not server_auth:
            self._auth = (server_auth, self.options.auth(server_auth))
        return self._auth[1]

    def shutting_down(self, connections: Iterable[ClientConnection]) -> None:
        """The server stops: its WebSocket clients' close frames say so (1001 ``Server
        Shutdown``), though the connections close as a client's would."""
        for conn in connections:
            if isinstance(conn.transport, WebSocketTransport) and conn.transport.close_frame is None:
                conn.transport.close_frame = close_frame_for("Server Shutdown")

    def info_base(self) -> dict[str, Any]:
        """The node's INFO as a WebSocket client sees it (``generateClientInfoJSON``): the
        WebSocket port's host and port, TLS as that port has it."""
        tls = self.options.tls is not None
        info: dict[str, Any] = {}
        for key, value in self.node.info_base.items():
            if key in ("tls_required", "tls_available"):
                continue
            if key in ("tls_verify", "max_payload") and tls and "tls_required" not in info:
                info["tls_required"] = info["tls_available"] = True
            info[key] = value
        info["host"] = self.options.host
        info["port"] = self.port
        if self.options.auth_override and "auth_required" not in info:
            at = list(info).index("headers") + 1
            items = list(info.items())
            info = dict([*items[:at], ("auth_required", True), *items[at:]])
        return info
