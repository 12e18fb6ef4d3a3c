"""nats-py 2.16 when a consumer or stream goes away or the server restarts, on jsemu and on
nats-server: the same outcome on both.

* A ``fetch`` waiting while its consumer or stream is deleted gets ``409 Consumer Deleted``.
  nats-py 2.16 treats it by batch size: ``fetch(1)`` takes it for a temporary error (like
  404 and 408) and swallows it, so it waits out its own timeout and raises
  ``nats.errors.TimeoutError`` (not an ``APIError``); ``fetch(n > 1)`` stops waiting for
  messages on any status and, after waiting out its timeout for stragglers, returns what it
  has: an empty list (without the status it would raise ``TimeoutError``).
* An ordered consumer (``js.subscribe(ordered_consumer=True)``: a push consumer with idle
  heartbeats) notices two missed heartbeats after its consumer is deleted, or after the
  server restarts on the same port and store directory, and creates a new consumer from the
  next stream sequence: no message lost, none twice.

The restart runs ``jsemu serve`` as a process, stopped and started like nats-server.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import nats
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from support.cluster import free_port
from support.servers import KINDS, RealServer


def _name() -> str:
    return "G" + uuid.uuid4().hex[:8]


async def _num_waiting(js: JetStreamContext, stream: str, consumer: str, n: int) -> None:
    for _ in range(300):
        if (await js.consumer_info(stream, consumer)).num_waiting == n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"num_waiting never reached {n}")


@pytest.mark.parametrize(("what", "batch"), [("consumer", 1), ("consumer", 3), ("stream", 3)])
async def test_fetch_when_its_consumer_goes(server, what: str, batch: int) -> None:  # type: ignore[no-untyped-def]
    name = _name()
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    try:
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        sub = await js.pull_subscribe(f"{name}.>", durable="work", stream=name)
        start = time.monotonic()
        fetch = asyncio.ensure_future(sub.fetch(batch, timeout=2))
        await _num_waiting(js, name, "work", 1)
        if what == "consumer":
            await js.delete_consumer(name, "work")
        else:
            await js.delete_stream(name)
        if batch == 1:
            with pytest.raises(nats.errors.TimeoutError):
                await asyncio.wait_for(fetch, 10)
            assert time.monotonic() - start > 1.9  # its own timeout: the 409 swallowed
        else:
            assert await asyncio.wait_for(fetch, 10) == []  # the 409 ended the wait for messages
    finally:
        if what == "consumer":
            await js.delete_stream(name)
        await nc.close()


async def _take(sub: Any, n: int, timeout: float = 10.0) -> list[bytes]:
    return [(await sub.next_msg(timeout=timeout)).data for _ in range(n)]


async def test_ordered_consumer_recovers_after_its_consumer_is_deleted(server) -> None:  # type: ignore[no-untyped-def]
    name = _name()
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    try:
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        for i in range(3):
            await js.publish(f"{name}.a", b"m%d" % i)
        sub = await js.subscribe(f"{name}.>", ordered_consumer=True, idle_heartbeat=0.3)
        assert await _take(sub, 3) == [b"m0", b"m1", b"m2"]
        (consumer,) = [c.name for c in await js.consumers_info(name)]
        await js.delete_consumer(name, consumer)
        for i in range(3, 6):
            await js.publish(f"{name}.a", b"m%d" % i)
        assert await _take(sub, 3) == [b"m3", b"m4", b"m5"]
        (again,) = [c.name for c in await js.consumers_info(name)]
        assert again != consumer
        await sub.unsubscribe()
    finally:
        await js.delete_stream(name)
        await nc.close()


@pytest.fixture(params=KINDS)
async def restartable(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[], RealServer]]:
    """Start (and start again) a server process of the parametrised kind on one port and one
    store directory."""
    port = free_port()
    procs: list[RealServer] = []
    with tempfile.TemporaryDirectory(prefix="jsemu-restart-") as store:

        def start() -> RealServer:
            proc = RealServer(jsemu_process=request.param == "jsemu", port=port, store_dir=store)
            procs.append(proc)
            return proc

        try:
            yield start
        finally:
            for proc in procs:
                proc.stop()


async def _publish(js: JetStreamContext, subject: str, data: bytes) -> None:
    """Publish once the client is back (reconnecting, nats-py fails a request at once)."""
    for _ in range(100):
        try:
            await js.publish(subject, data)
            return
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError, nats.errors.ConnectionReconnectingError):
            await asyncio.sleep(0.1)
    raise AssertionError("no PubAck after the restart")


async def test_ordered_consumer_recovers_after_a_restart(restartable: Callable[[], RealServer]) -> None:
    first = restartable()
    reconnected = asyncio.Event()

    async def on_reconnect() -> None:
        reconnected.set()

    nc: NATS = await nats.connect(
        f"nats://127.0.0.1:{first.port}",
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.1,
        reconnected_cb=on_reconnect,
    )
    js = nc.jetstream(timeout=2)
    try:
        await js.add_stream(name="R", subjects=["r.>"])
        for i in range(3):
            await js.publish("r.a", b"m%d" % i)
        sub = await js.subscribe("r.>", ordered_consumer=True, idle_heartbeat=0.3)
        assert await _take(sub, 3) == [b"m0", b"m1", b"m2"]
        first.stop()
        restartable()
        await asyncio.wait_for(reconnected.wait(), 10)
        for i in range(3, 6):
            await _publish(js, "r.a", b"m%d" % i)
        assert await _take(sub, 3) == [b"m3", b"m4", b"m5"]
    finally:
        await nc.close()
