"""nats.js v3 (``@nats-io/transport-node``) logs in with an nkey seed (and over TLS, see
``tests/test_tls.py``) on nats-server 2.15.1 and on jsemu alike: ``js/security_check.mjs``
connects with the given options, makes one round trip and prints what it saw; both servers
get the same configuration file and must give the same result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_auth import _pair
from test_nkeys import CONF, SEED1, SEED3

from . import test_kv_nats_js as kv_nats_js

node = kv_nats_js.node


async def run_security_check(node: str, url: str, options: dict[str, Any]) -> dict[str, Any]:
    return await kv_nats_js.run_script(node, "security_check.mjs", url, json.dumps(options))


async def test_nats_js_with_nkey_seed(node: str, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, CONF):
        got: dict[str, list[dict[str, Any]]] = {}
        for kind, port in pair.ports.items():
            url = f"nats://127.0.0.1:{port}"
            got[kind] = [
                await run_security_check(node, url, {"nkeySeed": SEED1}),
                await run_security_check(node, url, {"nkeySeed": SEED3}),
            ]
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == {"connected": True, "received": "hello", "error": None}
        assert got["real"][1]["connected"] is False
