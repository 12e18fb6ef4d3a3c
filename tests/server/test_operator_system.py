"""The system account's requests that operator tools use, in operator mode, on both servers:
``$SYS.REQ.USER.INFO`` (the user and account JWTs' names, the JWT permissions),
``$SYS.REQ.ACCOUNT.<account key>.CONNZ`` asked by a system account user, ``$SYS.REQ.SERVER.PING``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats
from support.servers import KINDS, RealServer

from jsemu.testing.operator import OperatorSetup


def _sorted_lists(value: Any) -> Any:
    """nats-server keeps a JWT's permission subjects in a Go map: their order varies per run."""
    if isinstance(value, dict):
        return {k: _sorted_lists(v) for k, v in value.items()}
    return sorted(value) if isinstance(value, list) else value


async def _ask(kind: str, setup: OperatorSetup) -> dict[str, Any]:
    server = RealServer(conf_text=setup.config_text(), jetstream=True, jsemu_process=kind == "jsemu")
    url = f"nats://127.0.0.1:{server.port}"
    seen: dict[str, Any] = {}
    try:
        app = await nats.connect(url, user_credentials=str(setup.users["app"].creds_path))
        admin = await nats.connect(url, user_credentials=str(setup.users["admin"].creds_path))
        for name, nc in (("user_info", app), ("admin_info", admin)):
            seen[name] = _sorted_lists(
                json.loads((await nc.request("$SYS.REQ.USER.INFO", b"", timeout=2)).data)["data"]
            )
        account = setup.accounts["APP"].public_key
        connz = json.loads((await admin.request(f"$SYS.REQ.ACCOUNT.{account}.CONNZ", b"{}", timeout=2)).data)["data"]
        seen["connz"] = (sorted(connz), connz["num_connections"], sorted(connz["connections"][0]))
        ping = json.loads((await admin.request("$SYS.REQ.SERVER.PING", b"", timeout=2)).data)
        seen["ping"] = sorted(ping["statsz"])
        await app.close()
        await admin.close()
    finally:
        server.stop()
    return seen


async def test_system_requests_in_operator_mode(tmp_path: Path) -> None:
    setup = OperatorSetup(tmp_path)
    setup.account("APP", jetstream={})
    setup.user("app", "APP", pub={"allow": ["x", "$SYS.REQ.>", "_INBOX.>"]}, sub={"deny": ["y"]})
    setup.user("admin", "SYS")
    got = {kind: await _ask(kind, setup) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    assert got["real"]["user_info"]["account_name"] == "APP" and got["real"]["user_info"]["user_name"] == "app"
