"""jsemu-only: a paused consumer resumes at ``pause_until`` on the server's clock. With the
clock frozen, ``pause_remaining`` is exact, nothing is delivered a millisecond before the
deadline, and stepping onto it delivers to the waiting request at once, after the
``consumer_pause`` advisory that says so."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest

import jsemu
from jsemu.timefmt import format_ns

pytestmark = pytest.mark.fake_only

S = 1_000_000_000


async def _api(nc: Any, subject: str, body: Any = None) -> dict[str, Any]:
    msg = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=2)
    reply: dict[str, Any] = json.loads(msg.data)
    return reply


async def test_pause_ends_at_pause_until_on_the_server_clock() -> None:
    async with jsemu.Server() as srv:
        ctl = srv.control
        t0 = ctl.freeze_clock()
        nc = await nats.connect(srv.url)
        events: list[dict[str, Any]] = []
        got: list[tuple[str, str]] = []  # (kind, what) in arrival order

        async def on_event(msg: Any) -> None:
            events.append(json.loads(msg.data))
            got.append(("advisory", str(events[-1]["paused"])))

        async def on_msg(msg: Any) -> None:
            got.append(("msg", msg.data.decode()))

        await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.PAUSE.>", cb=on_event)
        await nc.subscribe("inbox", cb=on_msg)
        await _api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        for i in range(2):
            await nc.request(f"s.{i}", f"m{i}".encode(), timeout=2)
        until = format_ns(t0 + 60 * S)
        cfg = {"durable_name": "D", "ack_policy": "explicit", "ack_wait": 3600 * S, "pause_until": until}
        created = await _api(nc, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": cfg})
        assert (created["paused"], created["pause_remaining"]) == (True, 60 * S)
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.D", json.dumps({"batch": 2}).encode(), reply="inbox")
        await nc.flush()
        ctl.advance_clock(ns=60 * S - 1_000_000)
        await asyncio.sleep(0.1)
        assert [kind for kind, _ in got] == ["advisory"]  # paused at create; nothing delivered
        info = await _api(nc, "$JS.API.CONSUMER.INFO.S.D")
        assert (info["paused"], info["pause_remaining"], info["num_waiting"]) == (True, 1_000_000, 1)
        ctl.advance_clock(ns=1_000_000)
        for _ in range(50):
            if len(got) == 4:
                break
            await asyncio.sleep(0.02)
        assert got == [("advisory", "True"), ("advisory", "False"), ("msg", "m0"), ("msg", "m1")]
        assert events[1]["pause_until"] == until
        info = await _api(nc, "$JS.API.CONSUMER.INFO.S.D")
        assert "paused" not in info and info["delivered"]["stream_seq"] == 2
        # CONSUMER.PAUSE answers on the same clock
        reply = await _api(nc, "$JS.API.CONSUMER.PAUSE.S.D", {"pause_until": format_ns(t0 + 90 * S)})
        assert (reply["paused"], reply["pause_remaining"]) == (True, 30 * S)
        await nc.request("s.2", b"m2", timeout=2)
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.D", json.dumps({"batch": 1}).encode(), reply="inbox")
        await nc.flush()
        await asyncio.sleep(0.1)
        assert got[4:] == [("advisory", "True")]
        ctl.advance_clock(seconds=30)
        for _ in range(50):
            if len(got) == 7:
                break
            await asyncio.sleep(0.02)
        assert got[5:] == [("advisory", "False"), ("msg", "m2")]
        await nc.close()
