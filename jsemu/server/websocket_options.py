"""The ``websocket { }`` block as the server uses it (parsed by ``config/websocket.py``).

A separate listener takes WebSocket clients (``server/websocket_listener.py``); once upgraded
they are client connections like any other, so only what the listener and the handshake
need lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .tls import TlsOptions

__all__ = ["WebSocketOptions"]


@dataclass
class WebSocketOptions:
    """nats-server's ``WebsocketOpts``: the keys jsemu implements."""

    #: nats-server's default: every interface, whatever the client port's host.
    host: str = "0.0.0.0"
    #: The port; 0: a random one (the file's ``-1``).
    port: int = 0
    #: ``advertise``: ``host[:port]`` for the connect URLs instead of the listener's.
    advertise: str = ""
    no_tls: bool = False
    tls: TlsOptions | None = None
    #: ``permessage-deflate`` when the client offers it.
    compression: bool = False
    #: Refuse an ``Origin`` other than the request's own host (403).
    same_origin: bool = False
    #: ``scheme://host[:port]`` origins accepted (empty: any); as given, for /varz.
    allowed_origins: list[str] = field(default_factory=list)
    #: Seconds a client has to finish the HTTP upgrade (0: no limit).
    handshake_timeout: float = 0.0
    #: Response headers added to the ``101 Switching Protocols``, in the file's order.
    headers: dict[str, str] = field(default_factory=dict)

    def varz(self, port: int) -> dict[str, Any]:
        """``/varz``'s ``websocket`` (nats-server's ``WebsocketOptsVarz``, empty values left
        out), ``port`` the one the listener has."""
        out: dict[str, Any] = {"host": self.host, "port": port, "advertise": self.advertise}
        out["handshake_timeout"] = round(self.handshake_timeout * 1e9)
        out["no_tls"] = self.no_tls
        out["same_origin"] = self.same_origin
        out["allowed_origins"] = list(self.allowed_origins)
        out["compression"] = self.compression
        return {key: value for key, value in out.items() if value}
