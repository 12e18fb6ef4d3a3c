"""Lame duck mode as the official clients meet it, on a two-node cluster of nats-server 2.15.1
processes and one of ``jsemu serve`` processes (``lame_duck_duration: 30s``, the least
nats-server accepts, and a 1 s grace period; the tests wait only for the callback, the close
and the reconnect, never for the whole duration).

nats-py 2.16 (``lame_duck_mode_cb``: awaited for an INFO with ``ldm`` after the first) and
nats.js v3 (status ``{type: "ldm", server}``) both hear of it as soon as the node is signalled;
after the grace period the node closes them and they reconnect to the other node, the only
URL the lame duck INFO left them (the one they were given first refuses connections now).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from support.cluster import Node, start_cluster, stop_cluster
from support.servers import KINDS

from . import test_kv_nats_js as kv_nats_js

node = kv_nats_js.node
__all__ = ["node"]  # fixtures

GRACE = 1.0


@pytest.fixture(params=KINDS)
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[Node]]:
    """Two nodes; node 1 is the one put into lame duck mode."""
    conf = tmp_path / "ldm.conf"
    conf.write_text(f'lame_duck_duration: "30s"\nlame_duck_grace_period: "{int(GRACE)}s"\n')
    nodes = start_cluster(["jsemu" if request.param == "jsemu" else "real"] * 2, extra=["-c", str(conf)])
    yield nodes
    stop_cluster(nodes)


async def test_nats_py_lame_duck_callback_then_reconnect_elsewhere(pair: list[Node]) -> None:
    stay, leave = pair
    events: list[tuple[str, float]] = []
    reconnected = asyncio.Event()

    async def ldm() -> None:
        events.append(("ldm", time.monotonic()))

    async def disconnected() -> None:
        events.append(("disconnected", time.monotonic()))

    async def on_reconnect() -> None:
        events.append(("reconnected", time.monotonic()))
        reconnected.set()

    nc = await nats.connect(
        leave.url,
        lame_duck_mode_cb=ldm,
        disconnected_cb=disconnected,
        reconnected_cb=on_reconnect,
        reconnect_time_wait=0.1,
        max_reconnect_attempts=-1,
    )
    try:
        await nc.flush()
        start = time.monotonic()
        os.kill(leave.proc.pid, signal.SIGUSR2)
        await asyncio.wait_for(reconnected.wait(), GRACE + 8)
        assert [e for e, _ in events] == ["ldm", "disconnected", "reconnected"]
        assert events[0][1] - start < GRACE  # the callback at once, the close after the grace period
        assert events[1][1] - start >= GRACE * 0.9
        assert nc.connected_url is not None and nc.connected_url.port == stay.port
        sub = await nc.subscribe("after")
        await nc.publish("after", b"moved")
        assert (await sub.next_msg(2)).data == b"moved"
    finally:
        await nc.close()


async def test_nats_js_lame_duck_status_then_reconnect_elsewhere(node: str, pair: list[Node]) -> None:
    stay, leave = pair
    proc = await asyncio.create_subprocess_exec(
        node,
        str(kv_nats_js.JS_DIR / "ldm_check.mjs"),
        leave.url,
        str(leave.port),
        cwd=kv_nats_js.JS_DIR,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None and proc.stdout is not None
        line = await asyncio.wait_for(proc.stderr.readline(), 15)
        assert line == b"ready\n", line + await proc.stderr.read()
        os.kill(leave.proc.pid, signal.SIGUSR2)
        out, err = await asyncio.wait_for(proc.communicate(), GRACE + 15)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err

    result = json.loads(out)
    assert result == {
        "connected": True,
        "events": ["ldm", "disconnect", "reconnect"],
        "ldmServer": f"127.0.0.1:{leave.port}",
        "reconnectedPort": stay.port,
        "received": "moved",
        "error": None,
    }
