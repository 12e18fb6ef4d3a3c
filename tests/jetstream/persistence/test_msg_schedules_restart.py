"""Message schedules across a restart, ``jsemu serve`` against ``nats-server`` (both on the
wall clock, with a store dir, run side by side): a repeating schedule resumes from the time its
last copy named and a one-shot one still fires; both overdue after the downtime, they fire
once, at once, in sequence order, the repeating one's next time one period from now."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nats

from .test_persistence import Proc, _api

_TS = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


async def _contents(port: int) -> list[tuple[int, str, bytes, str]]:
    """Every message: sequence, subject, header block (times as <ts>), body."""
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    last = (await _api(nc, "$JS.API.STREAM.INFO.F"))["state"]["last_seq"]
    out = []
    for seq in range(1, last + 1):
        msg = (await _api(nc, "$JS.API.STREAM.MSG.GET.F", {"seq": seq})).get("message")
        if msg is not None:
            hdr = _TS.sub(b"<ts>", base64.b64decode(msg.get("hdrs", "")))
            out.append((seq, msg["subject"], hdr, base64.b64decode(msg.get("data", "")).decode()))
    await nc.close()
    return out


async def _scenario(kind: str, store: Path) -> list[Any]:
    first = await asyncio.to_thread(Proc, kind, store)
    try:
        nc = await nats.connect(f"nats://127.0.0.1:{first.port}")
        await _api(nc, "$JS.API.STREAM.CREATE.F", {"name": "F", "subjects": ["f.>"], "allow_msg_schedules": True})
        await asyncio.sleep((1.2 - time.time() % 1.0) % 1.0)  # 0.2 s past a whole second
        at = datetime.fromtimestamp(int(time.time()) + 4, UTC).strftime("@at %Y-%m-%dT%H:%M:%SZ")
        every = {"Nats-Schedule": "@every 2s", "Nats-Schedule-Target": "f.te"}
        acks = [json.loads((await nc.request("f.every", b"e", headers=every, timeout=5)).data)]
        once = {"Nats-Schedule": at, "Nats-Schedule-Target": "f.ta"}
        acks.append(json.loads((await nc.request("f.at", b"a", headers=once, timeout=5)).data))
        await nc.close()
        await asyncio.sleep(2.4)  # the first copy at X+2, the one-shot due at X+4
        before = await _contents(first.port)
    finally:
        await asyncio.to_thread(first.stop)
    await asyncio.sleep(4.5)  # back after X+7: the repeating one's X+6 is past too, so it skips ahead
    second = await asyncio.to_thread(Proc, kind, store)
    try:
        await asyncio.sleep(1.0)
        after = await _contents(second.port)
    finally:
        await asyncio.to_thread(second.stop)
    return [acks, before, after]


async def test_schedules_survive_a_restart_like_nats_server(tmp_path: Path) -> None:
    emu, real = await asyncio.gather(_scenario("jsemu", tmp_path / "jsemu"), _scenario("real", tmp_path / "real"))
    assert emu == real
    acks, before, after = real
    assert [a["seq"] for a in acks] == [1, 2]
    assert [(m[0], m[1]) for m in before] == [(1, "f.every"), (2, "f.at"), (3, "f.te")]
    assert [(m[0], m[1]) for m in after] == [(1, "f.every"), (3, "f.te"), (4, "f.te"), (5, "f.ta")]
    assert after[3][2] == b"NATS/1.0\r\nNats-Scheduler: f.at\r\nNats-Schedule-Next: purge\r\n\r\n"
