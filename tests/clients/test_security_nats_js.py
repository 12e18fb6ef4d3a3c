"""nats.js v3 (``@nats-io/transport-node``) logs in with an nkey seed (and over TLS, see
``tests/server/test_tls.py``) on nats-server 2.15.1 and on jsemu alike: ``js/security_check.mjs``
connects with the given options, makes one round trip and prints what it saw; both servers
get the same configuration file and must give the same result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server.test_auth import _pair
from server.test_nkeys import CONF, SEED1, SEED3
from server.test_tls import Certs, certs

from . import test_kv_nats_js as kv_nats_js

node = kv_nats_js.node
__all__ = ["certs", "node"]  # fixtures


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


async def test_nats_js_over_tls(node: str, certs: Certs, tmp_path: Path) -> None:
    """With ``verify``: a client certificate gets in, none does not; ``handshake_first`` too."""
    with_cert = {"caFile": str(certs.ca), "certFile": str(certs.client_cert), "keyFile": str(certs.client_key)}
    for extra, attempts in (
        ("  verify: true\n", [{"tls": with_cert}, {"tls": {"caFile": str(certs.ca)}}]),
        ("  handshake_first: true\n", [{"tls": {"caFile": str(certs.ca), "handshakeFirst": True}}]),
    ):
        async for pair in _pair(tmp_path, certs.block(extra)):
            got: dict[str, list[dict[str, Any]]] = {}
            for kind, port in pair.ports.items():
                url = f"tls://127.0.0.1:{port}"
                got[kind] = [await run_security_check(node, url, options) for options in attempts]
            assert [r["connected"] for r in got["jsemu"]] == [r["connected"] for r in got["real"]], got
            assert got["real"][0] == got["jsemu"][0] == {"connected": True, "received": "hello", "error": None}
            if len(attempts) > 1:
                assert got["real"][1]["connected"] is False


async def test_nats_js_with_creds_and_jwt(node: str, tmp_path: Path) -> None:
    """Operator mode: a ``.creds`` file, a JWT and seed, and another operator's user."""
    from jsemu.testing.operator import OperatorSetup

    setup = OperatorSetup(tmp_path / "creds")
    setup.account("APP")
    user = setup.user("app", "APP")
    stranger = OperatorSetup(tmp_path / "other")
    stranger.account("X")
    outsider = stranger.user("x", "X")
    async for pair in _pair(tmp_path, setup.config_text()):
        got: dict[str, list[dict[str, Any]]] = {}
        for kind, port in pair.ports.items():
            url = f"nats://127.0.0.1:{port}"
            got[kind] = [
                await run_security_check(node, url, {"credsFile": str(user.creds_path)}),
                await run_security_check(node, url, {"jwt": user.jwt, "seed": user.seed}),
                await run_security_check(node, url, {"credsFile": str(outsider.creds_path)}),
            ]
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == got["real"][1] == {"connected": True, "received": "hello", "error": None}
        assert got["real"][2]["connected"] is False
