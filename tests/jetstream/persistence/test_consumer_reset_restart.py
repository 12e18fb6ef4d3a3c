"""A ``CONSUMER.RESET`` of a file stream's consumer outlives a restart, as on nats-server:
``jsemu serve -sd`` and the binary run the same session (deliveries, an ack, a reset, a
SIGTERM or a SIGKILL once written), then both report the same consumer state and deliver the same next messages."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import nats
import pytest

from .test_consumer_persistence import _fetch, _info, _seqs
from .test_persistence import Proc, _api


async def _before(port: int) -> list[Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    await _api(nc, "$JS.API.STREAM.CREATE.F", {"name": "F", "subjects": ["f.>"]})
    for i in range(6):
        await _api(nc, f"f.{i}", b"v%d" % i)
    cfg = {"durable_name": "D", "ack_policy": "explicit"}
    await _api(nc, "$JS.API.CONSUMER.CREATE.F.D", {"stream_name": "F", "config": cfg})
    sub = await nc.subscribe(nc.new_inbox())
    msgs = await _fetch(nc, sub, "D", {"batch": 4}, 4, 2)
    await nc.request(msgs[0].reply, b"+ACK", timeout=2)
    await asyncio.sleep(0.3)  # the ack is written (both flush consumer state within 100 ms)
    reset = await _api(nc, "$JS.API.CONSUMER.RESET.F.D", {"seq": 3})
    await asyncio.sleep(0.5)  # and so is the reset, before a SIGKILL
    await nc.close()
    return [_seqs(msgs), reset["reset_seq"], _info(reset)]


async def _after(port: int) -> list[Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    info = _info(await _api(nc, "$JS.API.CONSUMER.INFO.F.D"))
    sub = await nc.subscribe(nc.new_inbox())
    msgs = await _fetch(nc, sub, "D", {"batch": 2}, 2, 2)
    await nc.close()
    return [info, _seqs(msgs)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
async def test_a_reset_outlives_a_restart_like_nats_server(tmp_path: Path, sig: int) -> None:
    results = []
    for kind in ("jsemu", "real"):
        store = tmp_path / kind
        first = await asyncio.to_thread(Proc, kind, store)
        before = await _before(first.port)
        await asyncio.to_thread(first.stop, sig)
        second = await asyncio.to_thread(Proc, kind, store)
        try:
            after = await _after(second.port)
        finally:
            await asyncio.to_thread(second.stop)
        results.append((before, after))
    assert results[0] == results[1]
    (_, reset_seq, _), (info, next_msgs) = results[0]
    assert reset_seq == 3
    assert (info["delivered"], info["ack_floor"], info["num_ack_pending"]) == (
        {"consumer_seq": 0, "stream_seq": 2},
        {"consumer_seq": 0, "stream_seq": 2},
        0,
    )
    assert next_msgs == [(1, 3, 1), (1, 4, 2)]  # consumer sequences from 1 again
