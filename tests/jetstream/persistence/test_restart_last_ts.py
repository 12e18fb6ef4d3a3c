"""A file stream's ``state.last_ts`` survives a restart when its last messages are deleted
(or all of them purged): nats-server keeps the time of the last sequence, not the last
live message's. jsemu's clean stop compacts the log to its live messages, so the time is
saved beside them (a ``LastTime`` record). Both servers run as processes on one store dir,
stopped and started again on the same port."""

from __future__ import annotations

import json
import tempfile
from typing import Any

import nats
import pytest
from support.servers import RealServer

# 150 messages of 1 KiB: more than a clean stop leaves as records, so jsemu compacts the log.
MESSAGES = 150


async def _state(port: int) -> dict[str, Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    try:
        reply = await nc.request("$JS.API.STREAM.INFO.S", b"", timeout=10)
        return dict(json.loads(reply.data)["state"])
    finally:
        await nc.close()


async def _api(nc: Any, subject: str, body: dict[str, Any]) -> None:
    await nc.request(subject, json.dumps(body).encode(), timeout=10)


@pytest.mark.parametrize("kind", ["real", "jsemu"])
@pytest.mark.parametrize("ending", ["last_two_deleted", "purged"])
async def test_last_ts_of_deleted_last_messages_survives_a_restart(kind: str, ending: str) -> None:
    with tempfile.TemporaryDirectory(prefix="last-ts-") as store:
        server = RealServer(store_dir=store, jsemu_process=kind == "jsemu")
        try:
            nc = await nats.connect(f"nats://127.0.0.1:{server.port}")
            js = nc.jetstream()
            await js.add_stream(name="S", subjects=["s.>"], storage="file")
            for i in range(MESSAGES):
                await js.publish(f"s.{i % 4}", b"x" * 1024)
            published = await _state(server.port)
            if ending == "purged":
                await _api(nc, "$JS.API.STREAM.PURGE.S", {})
            else:
                for seq in (MESSAGES, MESSAGES - 1):
                    await _api(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": seq})
            await nc.close()
            before = await _state(server.port)
            port = server.port
        finally:
            server.stop()
        assert before["last_seq"] == MESSAGES and before["last_ts"] == published["last_ts"]
        again = RealServer(store_dir=store, jsemu_process=kind == "jsemu", port=port)
        try:
            after = await _state(again.port)
        finally:
            again.stop()
    assert after == before
