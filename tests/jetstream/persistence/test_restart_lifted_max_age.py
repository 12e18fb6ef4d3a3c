"""A file stream whose ``max_age`` was lifted keeps, across a restart, the messages it held:
nats-server removes an expired message when it expires and a restart applies only the current
config, so what the old max_age had not removed by the time it was lifted stays; what it had
removed stays gone. jsemu replays its log at the time of each record (limits are logged with
their time), not by the clock of the restart. Both servers run as processes on one store
dir, stopped and started again on the same port."""

from __future__ import annotations

import asyncio
import json
import tempfile
from typing import Any

import nats
import pytest
from support.servers import RealServer

SECOND_NS = 1_000_000_000


async def _api(port: int, subject: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    try:
        reply = await nc.request(subject, json.dumps(body or {}).encode(), timeout=10)
        return dict(json.loads(reply.data))
    finally:
        await nc.close()


def _config(max_age_s: float) -> dict[str, Any]:
    return {
        "name": "S",
        "subjects": ["s.>"],
        "storage": "file",
        "max_age": int(max_age_s * SECOND_NS),
        "duplicate_window": SECOND_NS // 2,
    }


def _counts(state: dict[str, Any]) -> tuple[int, int, int]:
    return state["messages"], state["first_seq"], state["last_seq"]


@pytest.mark.parametrize("kind", ["real", "jsemu"])
@pytest.mark.parametrize("expired_first", [False, True], ids=["lifted_in_time", "lifted_after_expiry"])
async def test_messages_kept_by_a_lifted_max_age_survive_a_restart(kind: str, expired_first: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="lifted-age-") as store:
        server = RealServer(store_dir=store, jsemu_process=kind == "jsemu")
        try:
            port = server.port
            assert "error" not in await _api(port, "$JS.API.STREAM.CREATE.S", _config(1))
            nc = await nats.connect(f"nats://127.0.0.1:{port}")
            await nc.jetstream().publish("s.a", b"x")
            await nc.close()
            if expired_first:
                await asyncio.sleep(1.6)  # the message is 1 s old: removed before the lift
            assert "error" not in await _api(port, "$JS.API.STREAM.UPDATE.S", _config(0))
            if not expired_first:
                await asyncio.sleep(1.6)  # past the old max_age, under no max_age
            before = _counts((await _api(port, "$JS.API.STREAM.INFO.S"))["state"])
        finally:
            server.stop()
        again = RealServer(store_dir=store, jsemu_process=kind == "jsemu", port=port)
        try:
            after = _counts((await _api(port, "$JS.API.STREAM.INFO.S"))["state"])
        finally:
            again.stop()
    assert before == after == ((0, 2, 1) if expired_first else (1, 1, 1))
