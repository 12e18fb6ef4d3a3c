"""The ``websocket { }`` block as the server uses it (parsed by ``config/websocket.py``).

A separate listener takes WebSocket clients (``server/websocket_listener.py``); once upgraded
they are client connections like any other, so only what the listener and the handshake
need lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .auth import Auth, User
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
    #: The block's ``authorization { user, password, token, timeout }`` and ``no_auth_user``:
    #: any of user, token, no_auth_user replaces the server's for WebSocket clients
    #: (nats-server's ``authOverride``; its users and nkeys stay).
    username: str = ""
    password: str = ""
    token: str = ""
    no_auth_user: str = ""
    #: Seconds to send CONNECT (0: the server's).
    auth_timeout: float = 0.0
    #: Cookies whose values stand in for a CONNECT's ``user``, ``pass``, ``auth_token``, ``jwt``.
    user_cookie: str = ""
    pass_cookie: str = ""
    token_cookie: str = ""
    jwt_cookie: str = ""

    @property
    def auth_override(self) -> bool:
        return bool(self.username or self.token or self.no_auth_user)

    def auth(self, server_auth: Auth | None) -> Auth | None:
        """The authentication WebSocket clients get (``processClientOrLeafAuthentication``)."""
        if not self.auth_override:
            if server_auth is None or not self.auth_timeout:
                return server_auth
            return replace(server_auth, timeout=self.auth_timeout, _verified=set())
        base = server_auth if server_auth is not None else Auth()
        return replace(
            base,
            user=User(self.username, self.password) if self.username else None,
            token=self.token,
            no_auth_user=self.no_auth_user,
            timeout=self.auth_timeout or base.timeout,
            _verified=set(),
        )

    def varz(self, port: int) -> dict[str, Any]:
        """``/varz``'s ``websocket`` (nats-server's ``WebsocketOptsVarz``, empty values left
        out), ``port`` the one the listener has."""
        out: dict[str, Any] = {"host": self.host, "port": port, "advertise": self.advertise}
        out["no_auth_user"] = self.no_auth_user
        out["jwt_cookie"] = self.jwt_cookie
        out["handshake_timeout"] = round(self.handshake_timeout * 1e9)
        out["auth_timeout"] = self.auth_timeout
        out["no_tls"] = self.no_tls
        out["same_origin"] = self.same_origin
        out["allowed_origins"] = list(self.allowed_origins)
        out["compression"] = self.compression
        return {key: value for key, value in out.items() if value}
