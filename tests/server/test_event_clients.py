"""The ``client`` of ``$SYS.ACCOUNT.<acc>.CONNECT`` / ``DISCONNECT`` events for nkey, JWT and
WebSocket clients, and an account's name tag, side by side with nats-server 2.15.1 (both as
processes).

nats-server fills ``issuer_key`` for a user it keeps as ``c.user`` (``issuerForClient``: the
signing key that issued a JWT, else the account; a password user has none), ``jwt`` with the
JWT a user sent, ``client_type`` ``websocket`` for a client of its WebSocket port, and names an
account by its JWT's ``name`` (``getNameTag``) in events, account INFO and SUBSZ."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import nats
import nkeys
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.testing.operator import OperatorSetup


async def _events(kind: str, conf: str, seed_file: Path) -> list[tuple[str, dict[str, Any]]]:
    srv = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu", websocket=True)
    out: list[tuple[str, dict[str, Any]]] = []
    try:
        listener = await nats.connect(f"nats://127.0.0.1:{srv.port}", user="sys", password="sys", name="listener")

        async def seen(msg: Any) -> None:
            client = json.loads(msg.data)["client"]
            if client.get("name") != "listener":
                for key in ("start", "stop", "id", "host", "rtt", "ver"):
                    client.pop(key, None)
                out.append((msg.subject, client))

        await listener.subscribe("$SYS.ACCOUNT.*.CONNECT", cb=seen)
        await listener.subscribe("$SYS.ACCOUNT.*.DISCONNECT", cb=seen)
        await listener.flush()
        nk = await nats.connect(f"nats://127.0.0.1:{srv.port}", nkeys_seed=str(seed_file), name="nk")
        await nk.close()
        ws = await nats.connect(srv.ws_url, user="a", password="a", name="ws")
        await ws.close()
        for _ in range(200):  # nats-server sends events from its send queue
            if len(out) >= 4:
                break
            await asyncio.sleep(0.05)
        await listener.close()
    finally:
        srv.stop()
    return sorted(out, key=lambda e: (str(e[1].get("name")), e[0]))


async def test_nkey_and_websocket_clients_in_events(tmp_path: Path) -> None:
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    public = nkeys.from_seed(seed).public_key.decode()
    seed_file = tmp_path / "user.nk"
    seed_file.write_bytes(seed)
    conf = (
        "system_account: SYS\naccounts {\n  SYS: { users: [ {user: sys, password: sys} ] }\n"
        f"  A: {{ users: [ {{user: a, password: a}}, {{nkey: {public}}} ] }}\n}}\n"
    )
    got = dict(zip(KINDS, await asyncio.gather(*(_events(kind, conf, seed_file) for kind in KINDS)), strict=True))
    assert got["jsemu"] == got["real"]
    real = {client["name"]: client for _, client in got["real"]}
    assert real["nk"]["issuer_key"] == "A" and real["nk"]["client_type"] == "nats"
    assert "issuer_key" not in real["ws"] and real["ws"]["client_type"] == "websocket"


async def _jwt_events(kind: str, setup: OperatorSetup, conf: str) -> list[tuple[str, dict[str, Any]]]:
    srv = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu")
    out: list[tuple[str, dict[str, Any]]] = []
    try:
        creds = str(setup.users["admin"].creds_path)
        listener = await nats.connect(f"nats://127.0.0.1:{srv.port}", user_credentials=creds, name="listener")

        async def seen(msg: Any) -> None:
            client = json.loads(msg.data)["client"]
            if client.get("name") != "listener":
                for key in ("start", "stop", "id", "host", "rtt", "ver"):
                    client.pop(key, None)
                client["jwt"] = client.get("jwt") == setup.users[client["name"]].jwt
                out.append((msg.subject, client))

        await listener.subscribe("$SYS.ACCOUNT.*.CONNECT", cb=seen)
        await listener.subscribe("$SYS.ACCOUNT.*.DISCONNECT", cb=seen)
        await listener.flush()
        for name in ("plain", "signed"):
            creds = str(setup.users[name].creds_path)
            client = await nats.connect(f"nats://127.0.0.1:{srv.port}", user_credentials=creds, name=name)
            await client.close()
        for _ in range(200):
            if len(out) >= 4:
                break
            await asyncio.sleep(0.05)
        await listener.close()
    finally:
        srv.stop()
    return sorted(out, key=lambda e: (str(e[1].get("name")), e[0]))


async def test_jwt_users_in_events(tmp_path: Path) -> None:
    """A JWT user's events carry the JWT, ``issuer_key`` (the signing key that issued it, else
    the account) and the account JWT's name as ``name_tag``."""
    setup = OperatorSetup(tmp_path)
    setup.user("admin", "SYS")
    signing = KeyPair.create(PREFIX_ACCOUNT)
    app = setup.account("APP", signing_keys=[signing.public_key])
    setup.user("plain", "APP")
    setup.user("signed", "APP", signer=signing)
    conf = setup.config_text()
    runs = await asyncio.gather(*(_jwt_events(kind, setup, conf) for kind in KINDS))
    got = dict(zip(KINDS, runs, strict=True))
    assert got["jsemu"] == got["real"]
    real = {client["name"]: client for _, client in got["real"]}
    assert real["plain"]["jwt"] is True and real["plain"]["name_tag"] == "APP"
    assert real["plain"]["issuer_key"] == app.public_key and real["signed"]["issuer_key"] == signing.public_key


def _tags(value: Any) -> list[tuple[str, str]]:
    """Every ``name_tag`` and ``account_tag`` in a monitoring answer."""
    if isinstance(value, dict):
        own = [(k, v) for k, v in value.items() if k in ("name_tag", "account_tag")]
        return own + [t for v in value.values() for t in _tags(v)]
    if isinstance(value, list):
        return [t for v in value for t in _tags(v)]
    return []


async def _monitor_tags(kind: str, setup: OperatorSetup, conf: str, key: str) -> dict[str, list[tuple[str, str]]]:
    srv = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu")
    try:
        url = f"nats://127.0.0.1:{srv.port}"
        admin = await nats.connect(url, user_credentials=str(setup.users["admin"].creds_path))
        user = await nats.connect(url, user_credentials=str(setup.users["plain"].creds_path))
        await user.subscribe("foo")
        await user.flush()
        out = {}
        for what, body in (("INFO", b""), ("SUBSZ", b'{"subscriptions": true}')):
            reply = await admin.request(f"$SYS.REQ.ACCOUNT.{key}.{what}", body, timeout=3)
            out[what] = _tags(json.loads(reply.data))
        await user.close()
        await admin.close()
        return out
    finally:
        srv.stop()


async def test_jwt_account_name_in_account_views(tmp_path: Path) -> None:
    """Account INFO's ``name_tag`` and SUBSZ's ``account_tag`` are the account JWT's name too."""
    setup = OperatorSetup(tmp_path)
    setup.user("admin", "SYS")
    app = setup.account("APP")
    setup.user("plain", "APP")
    conf = setup.config_text()
    runs = await asyncio.gather(*(_monitor_tags(kind, setup, conf, app.public_key) for kind in KINDS))
    got = dict(zip(KINDS, runs, strict=True))
    # nats-server's SUBSZ also lists its own subscriptions in the account (a known difference):
    # the tags are compared, not how many subscriptions carry them.
    assert {k: set(v) for k, v in got["jsemu"].items()} == {k: set(v) for k, v in got["real"].items()}
    assert got["jsemu"]["SUBSZ"] and got["real"]["INFO"] == got["jsemu"]["INFO"] == [("name_tag", "APP")]
    assert got["real"]["SUBSZ"] and set(got["real"]["SUBSZ"]) == {("account_tag", "APP")}
