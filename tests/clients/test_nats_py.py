"""nats-py sees the same behaviour from jsemu as from the real server."""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.errors import NoRespondersError


async def test_pub_sub_request(server) -> None:
    nc = await nats.connect(server.url)
    got: list[tuple[str, bytes, dict[str, str] | None]] = []
    done = asyncio.Event()

    async def handler(msg) -> None:  # type: ignore[no-untyped-def]
        got.append((msg.subject, msg.data, msg.headers))
        if len(got) == 3:
            done.set()

    await nc.subscribe("greet.*", cb=handler)
    await nc.publish("greet.a", b"hello")
    await nc.publish("greet.b", b"", headers={"X-Id": "7"})
    await nc.publish("greet.c.d", b"not matched")
    await nc.publish("greet.c", b"third")
    await asyncio.wait_for(done.wait(), 5)
    assert got == [("greet.a", b"hello", None), ("greet.b", b"", {"X-Id": "7"}), ("greet.c", b"third", None)]

    async def service(msg) -> None:  # type: ignore[no-untyped-def]
        await msg.respond(msg.data.upper())

    await nc.subscribe("svc", queue="workers", cb=service)
    reply = await nc.request("svc", b"ping", timeout=5)
    assert reply.data == b"PING"
    await nc.close()


async def test_no_responders(server) -> None:
    nc = await nats.connect(server.url)
    with pytest.raises(NoRespondersError):
        await nc.request("nobody.home", b"x", timeout=5)
    await nc.close()


async def test_no_responders_after_unsubscribe(server) -> None:
    nc = await nats.connect(server.url)
    sub = await nc.subscribe("ask")
    await sub.unsubscribe()
    with pytest.raises(NoRespondersError):
        await nc.request("ask", b"x", timeout=5)
    await nc.close()


async def test_queue_group_spreads_and_delivers_once(server) -> None:
    nc = await nats.connect(server.url)
    counts = [0, 0, 0]

    def make(i: int):  # type: ignore[no-untyped-def]
        async def cb(msg) -> None:  # type: ignore[no-untyped-def]
            counts[i] += 1

        return cb

    for i in range(3):
        await nc.subscribe("jobs", queue="q", cb=make(i))
    for _ in range(60):
        await nc.publish("jobs", b"x")
    await nc.flush()
    await asyncio.sleep(0.1)
    assert sum(counts) == 60
    # Each member is picked at random: 60 messages give each about 20 (fewer than 5 has a
    # probability below 1e-5), so a server that always picks one member fails here.
    assert min(counts) >= 5, counts
    await nc.close()


async def test_server_info_seen_by_client(server) -> None:
    nc = await nats.connect(server.url)
    assert nc.connected_server_version.major == 2
    assert nc.max_payload == 1048576
    await nc.close()
