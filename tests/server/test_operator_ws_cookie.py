"""``jwt_cookie`` on the WebSocket port in operator mode, on nats-server 2.15.1 and jsemu alike:
a browser-style client sends its user JWT in a cookie at the upgrade and leaves ``jwt`` out of
its CONNECT (which then carries only the nonce signature, or nothing for a bearer user). The
cases: the cookie with and without a signature, a bearer user's cookie, a garbage cookie, a
quoted cookie, the CONNECT's own ``jwt`` winning over the cookie, no cookie, and a cookie of
another name. Each: INFO's ``auth_required`` and nonce, the frames a CONNECT+PING gets, and
whether the server closed."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import Any

import pytest
from support.wsclient import WsClient, frame

from jsemu.testing.operator import MintedUser, OperatorSetup

from .test_websocket_frames import _get
from .ws_pair import ws_pair

SETUP = OperatorSetup()
SETUP.account("APP")
USER = SETUP.user("u", "APP")
OTHER = SETUP.user("other", "APP")
BEARER = SETUP.user("b", "APP", bearer_token=True)
SYS_ACCOUNT = SETUP.accounts["SYS"]
CONF = (
    f"operator: {SETUP.operator_jwt}\nsystem_account: {SETUP.system.public_key}\nresolver: MEMORY\n"
    f"resolver_preload: {{\n  {SYS_ACCOUNT.public_key}: {SYS_ACCOUNT.jwt}\n"
    f"  {SETUP.accounts['APP'].public_key}: {SETUP.accounts['APP'].jwt}\n}}\n"
)


def _sig(user: MintedUser, nonce: str) -> str:
    return base64.urlsafe_b64encode(user.key.sign(nonce.encode())).rstrip(b"=").decode()


async def _attempt(port: int, cookie: str, signer: MintedUser | None, jwt: str = "") -> tuple[Any, ...]:
    client = await WsClient.connect(port, f"Cookie: {cookie}\r\n" if cookie else "")
    first, _ = await client.frames(quiet=0.15)
    info = json.loads(first[0].payload.split(b"\r\n")[0][5:])
    connect: dict[str, Any] = {"verbose": False, "protocol": 1}
    if signer is not None:
        connect["sig"] = _sig(signer, info["nonce"])
    if jwt:
        connect["jwt"] = jwt
    client.send(frame(2, f"CONNECT {json.dumps(connect)}\r\nPING\r\n".encode()))
    frames, closed = await client.frames(quiet=0.4)
    client.close()
    # The INFO after the first PONG (protocol 1) carries ids: only that it came is compared.
    text = re.sub(rb"INFO \{[^\r]*\r\n", b"INFO", b"".join(f.payload for f in frames))
    return info.get("auth_required"), bool(info.get("nonce")), text, closed


CASES = {
    "cookie and signature": ("jwt={user}", USER, ""),
    "quoted cookie": ('other=1; jwt="{user}"', USER, ""),
    "cookie without signature": ("jwt={user}", None, ""),
    "bearer cookie without signature": ("jwt={bearer}", None, ""),
    "signature by another user": ("jwt={user}", OTHER, ""),
    "garbage cookie": ("jwt=abc.def.ghi", USER, ""),
    "empty cookie": ("jwt=", USER, ""),
    "no cookie": ("", USER, ""),
    "cookie of another name": ("token={user}", USER, ""),
    "connect's jwt wins": ("jwt={user}", OTHER, "{other}"),
    "connect's jwt wins over a bad cookie": ("jwt=junk", OTHER, "{other}"),
}


@pytest.mark.parametrize(
    ("block_cookies", "cases"),
    [
        ("jwt_cookie: jwt", sorted(CASES)),
        # token_cookie naming the same cookie: nats-server takes it as the JWT (matched first).
        ("token_cookie: jwt, jwt_cookie: jwt", ["cookie and signature", "bearer cookie without signature"]),
    ],
)
async def test_jwt_cookie_as_nats_server(block_cookies: str, cases: list[str]) -> None:
    names = {"user": USER.jwt, "bearer": BEARER.jwt, "other": OTHER.jwt}
    async with ws_pair(f"port: -1, no_tls: true, {block_cookies}", extra=CONF) as sides:
        got: dict[str, dict[str, Any]] = {}
        for kind, side in sides.items():
            got[kind] = {
                name: await _attempt(side.ws_port, cookie.format(**names), signer, jwt.format(**names))
                for name, (cookie, signer, jwt) in CASES.items()
                if name in cases
            }
    assert got["jsemu"] == got["real"]
    real = got["real"]
    assert real["cookie and signature"][2:] == (b"PONG\r\nINFO", False)
    assert real["bearer cookie without signature"][2:] == (b"PONG\r\nINFO", False)
    if "garbage cookie" in real:
        assert real["cookie without signature"][2].startswith(b"-ERR 'Authorization Violation'")
        assert real["connect's jwt wins over a bad cookie"][2:] == (b"PONG\r\nINFO", False)


async def test_varz_shows_jwt_cookie_as_nats_server() -> None:
    async with ws_pair("port: -1, no_tls: true, jwt_cookie: jwt", extra=CONF + "http_port: -1\n") as sides:
        got = {}
        for kind, side in sides.items():
            ws = json.loads(await asyncio.to_thread(_get, f"{side.monitor}/varz"))["websocket"]
            assert ws.pop("port") == side.ws_port
            got[kind] = ws
    assert got["jsemu"] == got["real"]
    assert got["real"]["jwt_cookie"] == "jwt"
