"""The ``websocket { }`` block, checked as nats-server's ``parseWebsocket`` and
``validateWebsocketOptions`` check it (same texts), into
:class:`~jsemu.server.websocket_options.WebSocketOptions`.

nats-server reads keys case-insensitively and refuses unknown ones (``unknown field``). The
keys it knows and jsemu does not implement yet (the block's own ``authorization``, the
cookies, ``ping_interval``) are refused with one line, never accepted and ignored.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..protocol.go_duration import parse_duration
from ..server.advertise import AdvertiseError, parse_host_port
from ..server.auth import Auth
from ..server.websocket_options import WebSocketOptions
from .go_types import go_type
from .tls import TlsConfigError, parse_tls

__all__ = ["WEBSOCKET_KEYS", "WebSocketConfigError", "check_websocket_auth", "parse_websocket"]

#: The keys read (the documentation's reference page lists them; other spellings nats-server
#: takes are accepted too: ``net``, ``compress``, ``allowed_origin``, ``origins``, ...).
WEBSOCKET_KEYS = (
    "listen",
    "port",
    "host",
    "advertise",
    "no_tls",
    "tls",
    "same_origin",
    "allowed_origins",
    "handshake_timeout",
    "compression",
    "headers",
    "authorization",
    "no_auth_user",
    "user_cookie",
    "pass_cookie",
    "token_cookie",
    "jwt_cookie",
)

_NOT_YET = {key: "not supported by jsemu yet" for key in ("ping_interval",)}
_ORIGIN_KEYS = frozenset({"allowed_origins", "allowed_origin", "allow_origins", "allow_origin", "origins", "origin"})
#: Response headers a configuration may not set (``validateWebsocketOptions``).
_RESERVED_HEADERS = frozenset({"host", "content-length", "connection", "upgrade", "nats-no-masking"})


class WebSocketConfigError(Exception):
    """``message`` at ``key`` of the block (a tuple: a key inside one of its blocks; ``""``:
    the block itself; ``None``: not placed, as nats-server's validation errors, which name no
    position)."""

    def __init__(self, key: str | tuple[str, ...] | None, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def _want(key: str | tuple[str, ...], value: Any, kind: type) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        go = {bool: "bool", int: "int64", str: "string"}[kind]
        raise WebSocketConfigError(key, f"interface conversion: interface {{}} is {go_type(value)}, not {go}")
    return value


def _listen(key: str, value: Any) -> tuple[str, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return "", value
    text = _want(key, value, str)
    host, _, port = text.rpartition(":")
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise WebSocketConfigError(key, f'could not parse port "{port}"') from None


def _handshake_timeout(key: str, value: Any) -> float:
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return parse_duration(value) / 1e9
        except ValueError as exc:
            raise WebSocketConfigError(key, str(exc)) from None
    raise WebSocketConfigError(key, f"error parsing handshake timeout: unsupported type {go_type(value)}")


def _origins(key: str, value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, str):
            raise WebSocketConfigError(key, f"error parsing allowed origins: unsupported type in array {go_type(item)}")
    return list(items)


def _check_origin(origin: str) -> None:
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https"):
        raise WebSocketConfigError(
            None,
            f"unable to parse allowed origin {_quote(origin)}: allowed origins must be absolute URLs with http or https scheme",
        )
    if not parts.netloc:
        raise WebSocketConfigError(None, f"unable to parse allowed origin {_quote(origin)}: host is required")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _headers(key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise WebSocketConfigError(key, f"error parsing headers: unsupported type {go_type(value)}")
    headers: dict[str, str] = {}
    for name, text in value.items():
        if not isinstance(text, str):
            raise WebSocketConfigError(
                (key, name), f"error parsing header key {name}: unsupported type {go_type(text)}"
            )
        headers[name] = text
    return headers


def _simple_auth(ws: WebSocketOptions, key: str, block: Any) -> None:
    """``parseSimpleAuth``: ``user``/``username``, ``password``/``pass``, ``token``, ``timeout``."""
    if not isinstance(block, dict):
        raise WebSocketConfigError(
            key, f"interface conversion: interface {{}} is {go_type(block)}, not map[string]interface {{}}"
        )
    for name, value in block.items():
        low = name.lower()
        if low in ("user", "username"):
            ws.username = _want((key, name), value, str)
        elif low in ("pass", "password"):
            ws.password = _want((key, name), value, str)
        elif low == "token":
            ws.token = _want((key, name), value, str)
        elif low == "timeout":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise WebSocketConfigError((key, name), f"error parsing timeout: unsupported type {go_type(value)}")
            ws.auth_timeout = float(value)
        else:
            raise WebSocketConfigError((key, name), f'unknown field "{name}"')


def check_websocket_auth(ws: WebSocketOptions, server_auth: Auth | None, trusted: bool = False) -> None:
    """``validateWebsocketOptions``'s authentication checks, once the server's users are known
    (``trusted``: operators or trusted keys are configured)."""
    users = server_auth is not None and bool(server_auth.users or server_auth.nkeys)
    if ws.no_auth_user:
        if not users:
            raise WebSocketConfigError(
                None, f'no_auth_user: "{ws.no_auth_user}" present, but users/nkeys are not defined'
            )
        assert server_auth is not None
        if ws.no_auth_user not in server_auth.users and ws.no_auth_user not in server_auth.nkeys:
            raise WebSocketConfigError(
                None,
                f'no_auth_user: "{ws.no_auth_user}" not present as user or nkey in authorization block '
                "or account configuration",
            )
    if users and ws.username:
        raise WebSocketConfigError(
            None, "websocket authentication username not compatible with presence of users/nkeys"
        )
    if users and ws.token:
        raise WebSocketConfigError(None, "websocket authentication token not compatible with presence of users/nkeys")
    if ws.jwt_cookie and not trusted:
        raise WebSocketConfigError(
            None,
            "trusted operators or trusted keys configuration is required for JWT authentication "
            f"via cookie {_quote(ws.jwt_cookie)}",
        )


def parse_websocket(block: Any) -> WebSocketOptions | None:
    """A ``websocket`` value into options (``None``: no port, so no listener, as nats-server);
    :class:`WebSocketConfigError` otherwise."""
    if not isinstance(block, dict):
        raise WebSocketConfigError("", f"Expected websocket to be a map, got {go_type(block)}")
    ws = WebSocketOptions()
    port = 0
    for key, value in block.items():
        low = key.lower()
        if low == "listen":
            host, port = _listen(key, value)
            ws.host = host or ws.host
        elif low == "port":
            port = _want(key, value, int)
        elif low in ("host", "net"):
            ws.host = _want(key, value, str)
        elif low == "advertise":
            ws.advertise = _want(key, value, str)
        elif low == "no_tls":
            ws.no_tls = _want(key, value, bool)
        elif low == "tls":
            try:
                ws.tls = parse_tls(value)
            except TlsConfigError as exc:
                raise WebSocketConfigError(key, exc.message) from None
        elif low == "same_origin":
            ws.same_origin = _want(key, value, bool)
        elif low in _ORIGIN_KEYS:
            ws.allowed_origins = _origins(key, value)
        elif low == "handshake_timeout":
            ws.handshake_timeout = _handshake_timeout(key, value)
        elif low in ("compress", "compression"):
            ws.compression = _want(key, value, bool)
        elif low == "headers":
            ws.headers = _headers(key, value)
        elif low in ("authorization", "authentication"):
            _simple_auth(ws, key, value)
        elif low == "no_auth_user":
            ws.no_auth_user = _want(key, value, str)
        elif low in ("user_cookie", "pass_cookie", "token_cookie", "jwt_cookie"):
            setattr(ws, low, _want(key, value, str))
        elif low in _NOT_YET:
            raise WebSocketConfigError(key, f'"{key}": {_NOT_YET[low]}')
        else:
            raise WebSocketConfigError(key, f'unknown field "{key}"')
    if port == 0:
        return None  # nats-server: no port, no websocket listener (and nothing else is checked)
    ws.port = 0 if port == -1 else port
    _validate(ws)
    return ws


def _validate(ws: WebSocketOptions) -> None:
    """``validateWebsocketOptions``: errors without a position."""
    if ws.tls is None and not ws.no_tls:
        raise WebSocketConfigError(None, "websocket requires TLS configuration")
    for origin in ws.allowed_origins:
        _check_origin(origin)
    for name in ws.headers:
        low = name.lower()
        if low in _RESERVED_HEADERS:
            raise WebSocketConfigError(None, f"websocket: invalid header {_quote(name)} not allowed")
        if low.startswith("sec-websocket-"):
            raise WebSocketConfigError(
                None, f'websocket: invalid header {_quote(name)}, "Sec-WebSocket-" prefix not allowed'
            )
    if ws.advertise:
        try:
            parse_host_port(ws.advertise, ws.port)
        except AdvertiseError as exc:
            raise WebSocketConfigError(None, str(exc)) from None
