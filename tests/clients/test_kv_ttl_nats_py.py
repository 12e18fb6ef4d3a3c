"""nats-py's Key-Value store with per-key TTLs and limit markers (``limit_marker_ttl``): the
same results from jsemu as from nats-server 2.15.1.

The expected values are what nats-server answers; both servers run each test (``server``
fixture) on the wall clock with TTLs of one second (jsemu's expiry timers run on its event
loop, as under ``jsemu serve``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError
from support.names import Names


async def updates(watcher: Any, n: int) -> list[tuple[str, bytes, int, str]]:
    out: list[tuple[str, bytes, int, str]] = []
    for _ in range(n):
        e = await watcher.updates(timeout=3)
        out.append(("<init done>", b"", 0, "") if e is None else (e.key, e.value or b"", e.revision, str(e.operation)))
    return out


async def op_of_missing(kv: Any, key: str) -> str | None:
    with pytest.raises(KeyNotFoundError) as exc:
        await kv.get(key)
    return exc.value.op


async def test_kv_key_ttl_leaves_a_limit_marker(js: JetStreamContext, names: Names) -> None:
    # The marker lives 2 s: keys() below must run before it goes (on a loaded machine the watcher
    # can see the marker late, and with 1 s nats-server's marker was once gone under keys()).
    kv = await js.create_key_value(bucket=names.bucket(), history=2, limit_marker_ttl=2)
    status = await kv.status()
    assert status.marker_ttl == 2.0
    assert await kv.create("k", b"v", msg_ttl=1) == 1
    assert await kv.put("other", b"w") == 2
    watcher = await kv.watchall()
    # nats-py marks the end of the initial values when the consumer's create reply says nothing is
    # pending; on a loaded machine nats-server has sometimes delivered both already when it builds
    # that reply, so the marker may come first: its place is the client's race, the values are not.
    seen = await updates(watcher, 3)
    assert ("<init done>", b"", 0, "") in seen
    assert [u for u in seen if u[0] != "<init done>"] == [("k", b"v", 1, "None"), ("other", b"w", 2, "None")]
    assert (await kv.get("k")).value == b"v"
    # The key's TTL is up: the server replaces it by a marker, which watchers see as a purge.
    assert await updates(watcher, 1) == [("k", b"", 3, "PURGE")]
    # nats-py's get does not read Nats-Marker-Reason: the marker comes back as an empty entry.
    marker = await kv.get("k")
    assert (marker.value, marker.revision, marker.operation) == (None, 3, None)
    assert sorted(await kv.keys()) == ["other"]
    # The marker's own TTL (2 s) is up too: the key is gone without a trace.
    await asyncio.sleep(3.0)
    with pytest.raises(KeyNotFoundError):
        await kv.get("k")
    info = await js.stream_info(f"KV_{kv._name}")
    assert (info.state.messages, info.state.first_seq, info.state.last_seq) == (1, 2, 3)
    # create works again once the key has expired.
    assert await kv.create("k", b"again") == 4
    await watcher.stop()


async def test_kv_purge_with_ttl(js: JetStreamContext, names: Names) -> None:
    kv = await js.create_key_value(bucket=names.bucket(), history=5, limit_marker_ttl=1)
    await kv.put("p", b"1")
    await kv.put("p", b"2")
    await kv.purge("p", msg_ttl=1)
    assert await op_of_missing(kv, "p") == "PURGE"
    info = await js.stream_info(f"KV_{kv._name}")
    assert (info.state.messages, info.state.last_seq) == (1, 3)
    await asyncio.sleep(2.2)
    # The purge marker expires without leaving a marker of its own.
    info = await js.stream_info(f"KV_{kv._name}")
    assert (info.state.messages, info.state.first_seq, info.state.last_seq) == (0, 4, 3)
    with pytest.raises(KeyNotFoundError):
        await kv.get("p")


async def test_kv_ttl_without_markers(js: JetStreamContext, names: Names) -> None:
    """A per-key TTL on a bucket without limit markers: the key just goes."""
    kv = await js.create_key_value(bucket=names.bucket())
    await kv.create("t", b"x", msg_ttl=1)
    await kv.put("u", b"y")
    await asyncio.sleep(2.0)
    with pytest.raises(KeyNotFoundError):
        await kv.get("t")
    assert await kv.keys() == ["u"]
    info = await js.stream_info(f"KV_{kv._name}")
    assert (info.state.messages, info.state.first_seq, info.state.last_seq) == (1, 2, 2)
