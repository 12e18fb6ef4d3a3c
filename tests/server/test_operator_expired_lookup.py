"""An account whose JWT has expired, looked up again at the next login, side by side with
nats-server 2.15.1 for each resolver (``MEMORY``, ``full``, ``cache``): its clients are closed at
``exp``; a login after that is refused while the resolver holds only the expired JWT; a new JWT
written into the resolver's directory by hand (not pushed) is read at the next login
(``lookupAccount`` finds the account expired and fetches it again) and lets the user in; a new JWT
pushed as a claim update does too. The memory resolver never stores what a claim update
pushes: after the account expired by an update, the next login fetches the *preloaded* JWT
again, which lets the user in."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from support.rawclient import RawClient
from support.servers import KINDS, RealServer

from jsemu.testing.operator import MintedUser, OperatorSetup

#: Seconds from the pushed update to the account JWT's ``exp``.
LIFE = 2


async def _login(port: int, user: MintedUser) -> tuple[RawClient, list[bytes]]:
    raw = await RawClient.connect(port)
    sig = base64.urlsafe_b64encode(user.key.sign(raw.info["nonce"].encode())).rstrip(b"=").decode()
    connect = {"jwt": user.jwt, "sig": sig, "verbose": False, "pedantic": False}
    frames = await raw.exchange(b"CONNECT " + json.dumps(connect).encode() + b"\r\n")
    return raw, frames + ([b"<closed>"] if raw.eof else [])


async def _until_closed(raw: RawClient) -> list[bytes]:
    """What comes until the server closes the connection (PINGs aside), or until it should have."""
    frames: list[bytes] = []
    while (frame := await raw.next_frame(LIFE + 3)) is not None:
        frames += [] if frame == b"PING\r\n" else [frame]
    return frames + ([b"<closed>"] if raw.eof else [b"<open>"])


async def _attempt(port: int, user: MintedUser) -> list[bytes]:
    raw, frames = await _login(port, user)
    await raw.close()
    return frames


def _status(data: bytes) -> Any:
    body = json.loads(data)
    status = body.get("data", body.get("error"))
    status.pop("account", None)
    return status


def _expiring(setup: OperatorSetup) -> str:
    """The account re-issued to expire ``LIFE`` seconds from now (pushed once the server runs,
    so that its start-up time does not count)."""
    return setup.account("APP", exp=int(time.time()) + LIFE).jwt


async def _run(kind: str, setup: OperatorSetup, conf: str) -> dict[str, Any]:
    server = RealServer(conf_text=conf, jsemu_process=kind == "jsemu")
    seen: dict[str, Any] = {}
    user, key = setup.users["u"], setup.accounts["APP"].public_key
    try:
        admin = await nats.connect(
            f"nats://127.0.0.1:{server.port}", user_credentials=str(setup.users["sys"].creds_path)
        )
        raw, seen["before"] = await _login(server.port, user)  # the account looked up (held) first
        reply = await admin.request(f"$SYS.REQ.ACCOUNT.{key}.CLAIMS.UPDATE", _expiring(setup).encode(), timeout=2)
        seen["expiring-reply"] = _status(reply.data)
        seen["at-exp"] = await _until_closed(raw)
        seen["after"] = await _attempt(server.port, user)
        if setup.resolver:
            (setup.directory / "jwt" / f"{key}.jwt").write_text(setup.account("APP", conn=5).jwt)  # type: ignore[operator]
            seen["on-disk"] = await _attempt(server.port, user)
            seen["on-disk-again"] = await _attempt(server.port, user)
        reply = await admin.request(
            f"$SYS.REQ.ACCOUNT.{key}.CLAIMS.UPDATE", setup.account("APP", conn=7).jwt.encode(), timeout=2
        )
        seen["pushed-reply"] = _status(reply.data)
        seen["pushed"] = await _attempt(server.port, user)
        await admin.close()
    finally:
        server.stop()
    return seen


@pytest.mark.parametrize("resolver", ["", "full", "cache"])
async def test_expired_account_looked_up_again(tmp_path: Path, resolver: str) -> None:
    got = {}
    for kind in KINDS:
        setup = OperatorSetup(tmp_path / kind)
        setup.resolver = resolver
        setup.account("APP")
        setup.user("u", "APP")
        setup.user("sys", "SYS")
        conf = setup.config_text()
        got[kind] = await _run(kind, setup, conf)
    assert got["jsemu"] == got["real"]
    real = got["real"]
    assert real["at-exp"] == [b"-ERR 'Account Authentication Expired'\r\n", b"<closed>"]
    refused = [b"-ERR 'Authorization Violation'\r\n", b"<closed>"]
    if resolver:  # the directory's expired JWT refused, the one written there by hand taken
        assert real["after"] == refused and real["on-disk"] == real["on-disk-again"] == []
    else:  # the memory resolver fetches the preloaded JWT: the update to expire is undone
        assert real["after"] == []
    assert real["pushed"] == []
