"""Account claim updates pushed to a running operator-mode server (memory resolver), side by
side with nats-server 2.15.1: the replies to ``$SYS.REQ.ACCOUNT.<key>.CLAIMS.UPDATE`` for a bad
JWT, a user JWT, another account's JWT, another operator's, an account the server does not hold
and a good update; the update applied: a revoked user closed with ``User Authentication Revoked``
(another user of the account left alone), the account's new JetStream limits in force."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import nats
from support.rawclient import RawClient
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.protocol.jwt.mint import account_jwt
from jsemu.testing.operator import OperatorSetup

STRANGER = KeyPair.create(PREFIX_ACCOUNT)


async def _run(kind: str, setup: OperatorSetup, conf: str, updated: str) -> dict[str, Any]:
    server = RealServer(conf_text=conf, jetstream=True, jsemu_process=kind == "jsemu")
    url = f"nats://127.0.0.1:{server.port}"
    seen: dict[str, Any] = {}
    try:
        admin = await nats.connect(url, user_credentials=str(setup.users["admin"].creds_path))
        victim = setup.users["victim"]
        raw = await RawClient.connect(server.port)
        sig = base64.urlsafe_b64encode(victim.key.sign(raw.info["nonce"].encode())).rstrip(b"=").decode()
        raw.send(b"CONNECT " + json.dumps({"jwt": victim.jwt, "sig": sig, "verbose": False}).encode() + b"\r\n")
        assert await raw.exchange() == []
        other = await nats.connect(url, user_credentials=str(setup.users["other"].creds_path))
        app = setup.accounts["APP"].public_key
        bodies = {
            "garbage": (app, b"garbage"),
            "user-jwt": (app, victim.jwt.encode()),
            "another-accounts-jwt": (app, setup.accounts["SYS"].jwt.encode()),
            "another-operators": (app, account_jwt(app, OperatorSetup().operator).encode()),
            "unknown-account": (STRANGER.public_key, account_jwt(STRANGER.public_key, setup.operator).encode()),
            "update": (app, updated.encode()),
        }
        for name, (key, body) in bodies.items():
            reply = json.loads((await admin.request(f"$SYS.REQ.ACCOUNT.{key}.CLAIMS.UPDATE", body, timeout=2)).data)
            assert set(reply.pop("server")) >= {"name", "id", "ver"}
            seen[name] = reply
        seen["victim"] = (await raw.read_until_closed(5), raw.eof)
        seen["other"] = other.is_connected
        seen["max_streams"] = (await other.jetstream().account_info()).limits.max_streams
        await other.close()
        await admin.close()
    finally:
        server.stop()
    return seen


async def test_claim_updates_as_nats_server(tmp_path: Path) -> None:
    setup = OperatorSetup(tmp_path)
    setup.account("APP", jetstream={"streams": 1})
    setup.user("admin", "SYS")
    setup.user("victim", "APP")
    setup.user("other", "APP")
    victim = setup.users["victim"].public_key
    conf = setup.config_text()  # the claims at start; the update is minted next
    updated = setup.account("APP", jetstream={"streams": 5}, revocations={victim: int(time.time()) + 5}).jwt
    got = {kind: await _run(kind, setup, conf, updated) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    assert got["real"]["victim"] == ([b"-ERR 'User Authentication Revoked'\r\n"], True)
    assert got["real"]["max_streams"] == 5 and got["real"]["update"]["data"]["message"] == "jwt updated"
