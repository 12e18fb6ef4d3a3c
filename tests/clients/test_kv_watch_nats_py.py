"""nats-py's key-value watchers and push subscriptions, built on push and ordered
consumers, on jsemu and on nats-server: the same entries in the same order."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import nats


async def _entries(watcher: Any, n: int) -> list[tuple[str, bytes, int, str]]:
    out: list[tuple[str, bytes, int, str]] = []
    for _ in range(n):
        e = await watcher.updates(timeout=2)
        if e is None:
            out.append(("<init done>", b"", 0, ""))
            continue
        out.append((e.key, e.value or b"", e.revision, str(e.operation)))
    return out


async def test_kv_watch_keys_history(server) -> None:  # type: ignore[no-untyped-def]
    bucket = "B" + uuid.uuid4().hex[:8]
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    try:
        kv = await js.create_key_value(bucket=bucket, history=5)
        await kv.put("a", b"1")
        await kv.put("b", b"2")
        await kv.put("a", b"3")
        await kv.delete("b")
        assert sorted(await kv.keys()) == ["a"]
        hist = await kv.history("a")
        assert [(e.value, e.revision) for e in hist] == [(b"1", 1), (b"3", 3)]
        watcher = await kv.watchall()
        initial = await _entries(watcher, 3)
        values = [("a", b"3", 3, "None"), ("b", b"", 4, "DEL")]
        if server.kind == "real":  # nats-server under load: the race described below
            assert [e for e in initial if e[0] != "<init done>"] == values and len(initial) == 3
        else:
            assert initial == [*values, ("<init done>", b"", 0, "")]
        await kv.put("c", b"4")
        await kv.put("a", b"5")
        assert await _entries(watcher, 2) == [("c", b"4", 5, "None"), ("a", b"5", 6, "None")]
        await watcher.stop()
        one = await kv.watch("c")
        # In either order: nats-py asks for the consumer's info right after subscribing, and when
        # the server has already handed the value out (nothing pending) before nats-py's
        # subscription task counted it, it signals the end of the initial values first (seen once
        # with nats-server in a loaded CI run).
        got = await _entries(one, 2)
        assert sorted(got) == sorted([("c", b"4", 5, "None"), ("<init done>", b"", 0, "")])
        await one.stop()
        await kv.purge_deletes(olderthan=-1)
        assert sorted(await kv.keys()) == ["a", "c"]
    finally:
        await nc.close()


async def test_push_and_ordered_subscribe(server) -> None:  # type: ignore[no-untyped-def]
    name = "P" + uuid.uuid4().hex[:8]
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    try:
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        for i in range(5):
            await js.publish(f"{name}.{i % 2}", b"m%d" % i)
        sub = await js.subscribe(f"{name}.>", durable="push")
        got = [await sub.next_msg(timeout=2) for _ in range(5)]
        assert [m.data for m in got] == [b"m%d" % i for i in range(5)]
        for m in got:
            await m.ack()
        await asyncio.sleep(0.1)
        info = await js.consumer_info(name, "push")
        assert (info.num_ack_pending, info.num_pending, info.delivered.stream_seq) == (0, 0, 5)
        await sub.unsubscribe()
        ordered = await js.subscribe(f"{name}.1", ordered_consumer=True)
        got = [await ordered.next_msg(timeout=2) for _ in range(2)]
        assert [m.data for m in got] == [b"m1", b"m3"]
        await js.publish(f"{name}.1", b"m5")
        assert (await ordered.next_msg(timeout=2)).data == b"m5"
        await ordered.unsubscribe()
    finally:
        await nc.close()


async def test_object_store_multi_chunk(server) -> None:  # type: ignore[no-untyped-def]
    """A 5 MB object is 40 chunks; ``get`` reads them back through an ordered consumer."""
    bucket = "O" + uuid.uuid4().hex[:8]
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    try:
        obs = await js.create_object_store(bucket=bucket)
        data = bytes(range(256)) * (5 * 1024 * 1024 // 256)
        info = await obs.put("big", data)
        assert (info.size, info.chunks) == (len(data), 40)
        await obs.put("small", b"tiny")
        got = await obs.get("big")
        assert got.data == data
        assert sorted(o.name for o in await obs.list()) == ["big", "small"]
        await obs.delete("big")
        assert [o.name for o in await obs.list(ignore_deletes=True)] == ["small"]
    finally:
        await nc.close()
