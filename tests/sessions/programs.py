"""nats-py programs whose sessions the tests record against nats-server and replay: each takes
a server URL and does what an application does (connect, work, close)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import nats


async def pubsub(url: str) -> None:
    """Two connections: a subscriber (a plain and a queue subscription) and a publisher
    (publishes, a request answered by the subscriber's side)."""
    sub_nc = await nats.connect(url)
    pub_nc = await nats.connect(url)
    got: list[bytes] = []

    async def take(msg: nats.aio.msg.Msg) -> None:
        got.append(msg.data)

    await sub_nc.subscribe("orders.>", cb=take)

    async def answer(msg: nats.aio.msg.Msg) -> None:
        await msg.respond(b"pong:" + msg.data)

    await sub_nc.subscribe("svc.echo", queue="workers", cb=answer)
    await sub_nc.flush()
    for i in range(3):
        await pub_nc.publish(f"orders.{i}", f"order {i}".encode(), headers={"X-Seq": str(i)} if i else None)
    await pub_nc.flush()
    reply = await pub_nc.request("svc.echo", b"ping", timeout=2)
    assert reply.data == b"pong:ping"
    for _ in range(100):
        if len(got) == 3:
            break
        await asyncio.sleep(0.01)
    await pub_nc.close()
    await sub_nc.close()


async def kv(url: str) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream(timeout=2)
    bucket = await js.create_key_value(bucket="PROFILES", history=3)
    await bucket.put("alice", b"v1")
    await bucket.put("alice", b"v2")
    assert (await bucket.get("alice")).value == b"v2"
    await bucket.delete("alice")
    await bucket.put("bob", b"hello")
    assert (await bucket.get("bob")).value == b"hello"
    await nc.close()


async def pull(url: str) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream(timeout=2)
    await js.add_stream(name="JOBS", subjects=["jobs.>"])
    for i in range(5):
        await js.publish(f"jobs.{i % 2}", f"job {i}".encode())
    psub = await js.pull_subscribe("jobs.>", durable="worker")
    for msg in await psub.fetch(3, timeout=2):
        await msg.ack_sync()
    info = await js.consumer_info("JOBS", "worker")
    assert info.num_ack_pending == 0
    await nc.close()


async def direct_batch(url: str) -> None:
    """A Direct Get batch (ADR-31): raw requests, since nats-py asks for one message at a time."""
    nc = await nats.connect(url)
    js = nc.jetstream(timeout=2)
    await js.add_stream(name="READINGS", subjects=["readings.>"], allow_direct=True)
    for i in range(6):
        await js.publish(f"readings.{'ab'[i % 2]}", f"r{i}".encode())
    inbox = nc.new_inbox()
    replies: list[nats.aio.msg.Msg] = []
    done = asyncio.Event()

    async def collect(msg: nats.aio.msg.Msg) -> None:
        replies.append(msg)
        if msg.headers and msg.headers.get("Status") == "204":
            done.set()

    await nc.subscribe(inbox, cb=collect)
    await nc.publish("$JS.API.DIRECT.GET.READINGS", json.dumps({"seq": 2, "batch": 3}).encode(), reply=inbox)
    await asyncio.wait_for(done.wait(), 2)
    done.clear()
    await nc.publish(
        "$JS.API.DIRECT.GET.READINGS", json.dumps({"multi_last": ["readings.*"], "batch": 5}).encode(), reply=inbox
    )
    await asyncio.wait_for(done.wait(), 2)
    await nc.close()


PROGRAMS: dict[str, Callable[[str], Awaitable[None]]] = {
    "pubsub": pubsub,
    "kv": kv,
    "pull": pull,
    "direct_batch": direct_batch,
}
