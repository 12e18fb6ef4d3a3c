"""nats.js v3 in operator mode on nats-server 2.15.1 and on jsemu alike: ``js/creds_check.mjs``
logs in with a ``.creds`` file (``credsAuthenticator``), with a JWT and its seed
(``jwtAuthenticator``) and with a bearer JWT alone, makes one round trip, meets a subscribe
permission violation, and is refused with the server's text for an expired user, a user
without its seed and a user of an account the server does not know; both servers get the
same operator configuration and JWTs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.protocol.jwt.mint import user_jwt
from jsemu.testing.operator import OperatorSetup

from . import test_kv_nats_js as kv_nats_js

node = kv_nats_js.node
__all__ = ["node"]  # fixtures


async def run_creds_check(node: str, url: str, options: dict[str, Any]) -> dict[str, Any]:
    return await kv_nats_js.run_script(node, "creds_check.mjs", url, json.dumps(options))


async def test_nats_js_with_creds_and_jwt(node: str, tmp_path: Path) -> None:
    setup = OperatorSetup(tmp_path)
    setup.account("APP")
    sub = {"deny": ["denied.>"]}
    app = setup.user("app", "APP", sub=sub)
    bearer = setup.user("bearer", "APP", sub=sub, bearer_token=True)
    expired = setup.user("expired", "APP", exp=int(time.time()) - 60)
    stranger = KeyPair.create(PREFIX_ACCOUNT)
    unknown = user_jwt(app.public_key, stranger, "unknown")
    attempts = [
        {"creds": str(app.creds_path)},
        {"jwt": app.jwt, "seed": app.seed},
        {"jwt": bearer.jwt},
        {"creds": str(expired.creds_path)},
        {"jwt": app.jwt},
        {"jwt": unknown, "seed": app.seed},
    ]
    got: dict[str, list[dict[str, Any]]] = {}
    for kind in KINDS:
        server = RealServer(conf_text=setup.config_text(), jetstream=False, jsemu_process=kind == "jsemu")
        try:
            url = f"nats://127.0.0.1:{server.port}"
            got[kind] = [await run_creds_check(node, url, options) for options in attempts]
        finally:
            server.stop()
    assert got["jsemu"] == got["real"]
    ok = got["real"][0]
    assert ok["connected"] and ok["received"] == "hello" and "denied.x" in ok["denied"]
    assert [r["connected"] for r in got["real"]] == [True, True, True, False, False, False]
