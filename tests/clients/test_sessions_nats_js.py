"""A nats.js v3 application's session (``js/session_check.mjs``: core pub/sub, a Direct Get batch,
KV put/get, a pull consumer's fetch and acks) recorded through ``jsemu record``'s proxy against
nats-server 2.15.1 replays against jsemu, and against nats-server itself, with no difference.
The Node setup (``node`` fixture, ``npm ci``) is the one of :mod:`tests.clients.test_kv_nats_js`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.servers import RealServer, nats_server_binary

from jsemu.sessions import Recorder, read_session, replay
from jsemu.sessions.targets import server_at

from . import test_kv_nats_js as kv_nats_js

node = kv_nats_js.node


@pytest.fixture(scope="module")
def session_file(node: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("njs") / "nats_js.jsonl"

    async def record() -> None:
        real = await asyncio.to_thread(RealServer)
        try:
            async with Recorder(f"nats://127.0.0.1:{real.port}", path) as recorder:
                assert await kv_nats_js.run_script(node, "session_check.mjs", recorder.url, "ORDERS") == {"ok": True}
                await asyncio.sleep(0.1)
        finally:
            await asyncio.to_thread(real.stop)

    asyncio.run(record())
    return path


@pytest.mark.parametrize("target", ["spawn-jsemu", "spawn-real"])
async def test_nats_js_session_replays_without_difference(session_file: Path, target: str) -> None:
    session = read_session(session_file)
    async with server_at(target, nats_server_binary()) as (host, port):
        result = await replay(session, host, port)
    assert [d.describe() for d in result.differences] == []
    assert result.frames >= 15
