"""``rate_limit_bps`` on push consumers: Go's token bucket (``rate.NewLimiter(bps/8, burst)``,
burst = the stream's ``max_msg_size``), each message reserving its subject, ack reply,
headers and payload before it goes.

Side by side (coarse, wall clock): with a 1000-byte burst and 3000 bytes/s, 20 messages of
~143 bytes arrive as 7 at once and then one every ~48 ms, on both servers. On jsemu the
limiter runs on the server's clock, so a frozen clock holds the rest back exactly.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import nats
import pytest
from support.servers import RealServer

import jsemu
from jsemu.jetstream.consumers.rate_limit import NEVER, TokenBucket

RATE = 3000  # bytes per second
CONSUMER = {"durable_name": "C", "deliver_subject": "dlv", "ack_policy": "none", "rate_limit_bps": 8 * RATE}


async def _arrivals(url: str, wait: float, on_created: Any = None) -> list[float]:
    """Seconds from consumer creation to each of 20 messages' arrival (within ``wait``)."""
    nc = await nats.connect(url)
    try:
        stream = {"name": "S", "subjects": ["s.>"], "max_msg_size": 1000, "storage": "memory"}
        await nc.request("$JS.API.STREAM.CREATE.S", json.dumps(stream).encode(), timeout=2)
        for i in range(20):
            await nc.publish(f"s.{i % 10}", b"x" * 100)
        await nc.flush()
        times: list[float] = []
        start = [0.0]

        async def got(_: Any) -> None:
            times.append(time.monotonic() - start[0])

        await nc.subscribe("dlv", cb=got)
        await nc.flush()
        start[0] = time.monotonic()
        body = json.dumps({"stream_name": "S", "config": CONSUMER}).encode()
        reply = json.loads((await nc.request("$JS.API.CONSUMER.CREATE.S.C", body, timeout=2)).data)
        assert reply["config"]["rate_limit_bps"] == 8 * RATE, reply
        if on_created is not None:
            await on_created(times)
        else:
            await asyncio.sleep(wait)
        return times
    finally:
        await nc.close()


def _shape(times: list[float]) -> tuple[int, int]:
    """(messages in the first burst, messages in all): the 8th comes ~48 ms after the burst."""
    return sum(1 for t in times if t < times[0] + 0.035), len(times)


async def _paced(kind: str) -> list[float]:
    """One side's arrivals; measured again (up to three times) when a loaded machine stretched
    the burst past its window: a server that does not pace as Go does never shows (7, 20)."""
    for _ in range(3):
        if kind == "real":
            real = RealServer()
            try:
                times = await _arrivals(f"nats://127.0.0.1:{real.port}", 2.0)
            finally:
                real.stop()
        else:
            async with jsemu.Server() as srv:
                times = await _arrivals(srv.url, 2.0)
        if _shape(times) == (7, 20):
            break
    return times


async def test_rate_limit_paces_push_delivery_like_nats_server() -> None:
    theirs = await _paced("real")
    ours = await _paced("jsemu")
    assert _shape(ours) == _shape(theirs) == (7, 20)
    for times in (ours, theirs):
        # one message per ~143 bytes / 3000 bytes/s after the burst (loose: a loaded machine)
        assert 0.4 < times[-1] - times[6] < 1.5, times


@pytest.mark.fake_only
async def test_rate_limit_follows_the_server_clock() -> None:
    async with jsemu.Server() as srv:
        srv.control.freeze_clock()

        async def steps(times: list[float]) -> None:
            await asyncio.sleep(0.3)
            # 6 x 143 bytes of the 1000-byte burst; the 7th is 1 byte short (on the wall
            # clock it goes a third of a millisecond later, with the burst)
            assert len(times) == 6
            srv.control.advance_clock(ns=1_000_000)
            await asyncio.sleep(0.1)
            assert len(times) == 7
            srv.control.advance_clock(ns=40_000_000)
            await asyncio.sleep(0.1)
            assert len(times) == 7  # the 8th message's reservation needs ~47.7 ms
            srv.control.advance_clock(ns=8_000_000)
            await asyncio.sleep(0.1)
            assert len(times) == 8
            # a long step refills the bucket up to its burst, not beyond: 7 more, then wait
            srv.control.advance_clock(seconds=1)
            await asyncio.sleep(0.2)
            assert len(times) == 15
            srv.control.advance_clock(seconds=1)
            await asyncio.sleep(0.2)
            assert len(times) == 20

        await _arrivals(srv.url, 0, steps)


def test_token_bucket_is_go_rate_limiter() -> None:
    bucket = TokenBucket(8 * 1000, 500)  # 1000 bytes/s, burst 500
    assert bucket.reserve(0, 300) == 0
    assert bucket.reserve(0, 300) == 100_000_000  # 100 bytes short: 0.1 s
    assert bucket.reserve(100_000_000, 100) == 100_000_000  # the debt was paid; this one waits
    assert bucket.reserve(10**10, 501) == NEVER  # bigger than the burst: never
    assert bucket.reserve(10**10, 500) == 0  # refilled to the burst, not beyond
    zero = TokenBucket(7, 100)  # 7 bits/s is 0 bytes/s: the burst is all there ever is
    assert (zero.reserve(0, 60), zero.reserve(10**12, 60)) == (0, NEVER)
