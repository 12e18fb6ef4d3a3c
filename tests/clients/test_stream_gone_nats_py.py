"""nats-py 2.16 when the STREAM under a consumer is deleted, or deleted and made again: the same
outcome on jsemu as on nats-server 2.15.1 (each test runs on both, ``server`` fixture).

* A pull ``fetch(3)`` waiting while its stream goes ends as when its consumer goes (the
  ``409 Consumer Deleted``, see ``test_going_away_nats_py.py``: an empty list, not a
  ``TimeoutError``, also when the stream is made again at once); a later ``fetch`` on the
  same subscription, the durable gone with the stream, hears no responders: ``503`` to the
  pull request, ``nats.js.errors.ServiceUnavailableError`` at once.
* An ordered consumer (``js.subscribe(ordered_consumer=True)``, a push consumer with idle
  heartbeats) misses two heartbeats and tries to make a new consumer from the next stream
  sequence: with the stream gone each try fails with ``NotFoundError`` (10059, ``stream not
  found``) to the error callback; once the stream is made again the try succeeds and the
  subscription goes on with the new stream's messages from that sequence.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import nats
import pytest
from nats.js import JetStreamContext


def _name() -> str:
    return "Z" + uuid.uuid4().hex[:8]


async def _num_waiting(js: JetStreamContext, stream: str, consumer: str) -> None:
    for _ in range(300):
        if (await js.consumer_info(stream, consumer)).num_waiting == 1:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the pull never waited")


@pytest.mark.parametrize("recreate", [False, True])
async def test_fetch_when_its_stream_goes(server, recreate: bool) -> None:  # type: ignore[no-untyped-def]
    name = _name()
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    try:
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        sub = await js.pull_subscribe(f"{name}.>", durable="work", stream=name)
        fetch = asyncio.ensure_future(sub.fetch(3, timeout=1.5))
        await _num_waiting(js, name, "work")
        await js.delete_stream(name)
        if recreate:
            await js.add_stream(name=name, subjects=[f"{name}.>"])
            await js.publish(f"{name}.a", b"new")
        assert await asyncio.wait_for(fetch, 10) == []  # not a TimeoutError: the 409 ended it
        with pytest.raises(nats.js.errors.ServiceUnavailableError):
            await sub.fetch(1, timeout=0.5)
    finally:
        try:
            await js.delete_stream(name)
        except nats.js.errors.NotFoundError:
            pass
        await nc.close()


async def test_ordered_consumer_when_its_stream_goes_and_comes_back(server) -> None:  # type: ignore[no-untyped-def]
    name = _name()
    errors: list[Any] = []

    async def on_error(err: Exception) -> None:
        errors.append((type(err).__name__, getattr(err, "code", None), getattr(err, "err_code", None)))

    nc = await nats.connect(server.url, error_cb=on_error)
    js = nc.jetstream()
    try:
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        for i in range(3):
            await js.publish(f"{name}.a", b"m%d" % i)
        sub = await js.subscribe(f"{name}.>", ordered_consumer=True, idle_heartbeat=0.2)
        assert [(await sub.next_msg(timeout=5)).data for _ in range(3)] == [b"m0", b"m1", b"m2"]
        await js.delete_stream(name)
        for _ in range(100):  # two missed heartbeats, then a failing re-create
            if errors:
                break
            await asyncio.sleep(0.05)
        assert set(errors) == {("NotFoundError", 404, 10059)}
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        for i in range(6):
            await js.publish(f"{name}.a", b"n%d" % i)
        # the next re-create starts at stream sequence 4 of the new stream
        got = [await sub.next_msg(timeout=5) for _ in range(3)]
        assert [(m.data, m.metadata.sequence.stream) for m in got] == [(b"n3", 4), (b"n4", 5), (b"n5", 6)]
        with pytest.raises(nats.errors.TimeoutError):
            await sub.next_msg(timeout=0.5)
        await sub.unsubscribe()
    finally:
        await js.delete_stream(name)
        await nc.close()
