"""jsemu-only: per-message TTL and subject delete markers across peers and restarts.

With markers, the leader's stream carries expiry out (the marker goes through the publish
path, plain removals are the store's logged ``remove``), so followers replay the same
records instead of expiring on their own; a restarted server re-arms the expiry of what it
replayed from its log.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import nats
import pytest

import jsemu

pytestmark = pytest.mark.fake_only

SECOND = 1_000_000_000
MARKER = b"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1s\r\nNats-Rollup: sub\r\n\r\n"


def _stores(srv: jsemu.Server, name: str) -> dict[str, Any]:
    return {peer.name: peer.store for peer in srv.jetstream.streams[name].replicas.peers}


def _contents(store: Any) -> list[tuple[int, bytes, bytes]]:
    st = store.state()
    out = []
    for seq in range(st.first_seq, st.last_seq + 1):
        msg = store.load(seq)
        if msg is not None:
            out.append((seq, msg.subject, msg.hdr))
    return out


async def _create(nc: Any, **config: Any) -> dict[str, Any]:
    reply = await nc.request(f"$JS.API.STREAM.CREATE.{config['name']}", json.dumps(config).encode(), timeout=2)
    return dict(json.loads(reply.data))


async def test_followers_replay_the_leaders_markers_and_removals() -> None:
    async with jsemu.Server(cluster_size=3) as srv:
        ctl = srv.control
        ctl.freeze_clock()
        nc = await nats.connect(srv.url)
        await _create(
            nc, name="S", subjects=["k.>"], storage="memory", num_replicas=3, subject_delete_marker_ttl=SECOND
        )
        js = nc.jetstream()
        await js.publish("k.a", b"1", headers={"Nats-TTL": "1"})
        await js.publish("k.b", b"2", headers={"Nats-TTL": "1"})
        await js.publish("k.b", b"3")
        stores = _stores(srv, "S")
        leader = srv.jetstream.streams["S"].store
        paused = next(name for name, store in stores.items() if store is not leader)
        ctl.pause("S", peer=paused)
        ctl.advance_clock(seconds=1.5)
        want = [(3, b"k.b", b""), (4, b"k.a", MARKER)]
        assert _contents(leader) == want
        # The paused follower has not expired anything on its own clock.
        assert [seq for seq, _, _ in _contents(stores[paused])] == [1, 2, 3]
        ctl.resume("S", peer=paused)
        assert all(_contents(store) == want for store in stores.values())
        # The marker's TTL: removed everywhere, no marker for the marker.
        ctl.advance_clock(seconds=1.5)
        assert all(_contents(store) == [(3, b"k.b", b"")] for store in stores.values())
        await nc.close()


async def test_a_restart_rearms_marker_expiry(tmp_path: Path) -> None:
    """Messages whose TTL ran out while the server was down get their markers after a restart."""
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        srv.control.freeze_clock(time.time_ns() - 30 * SECOND)
        nc = await nats.connect(srv.url)
        await _create(nc, name="F", subjects=["f.>"], storage="file", subject_delete_marker_ttl=60 * SECOND)
        js = nc.jetstream()
        await js.publish("f.a", b"1", headers={"Nats-TTL": "60s"})  # expires 30 s from now
        await js.publish("f.b", b"2", headers={"Nats-TTL": "1m0s"})
        await js.publish("f.b", b"3", headers={"Nats-TTL": "5s"})  # raised to 60 s, the marker TTL
        await nc.close()
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        store = srv.jetstream.streams["F"].store
        assert [seq for seq, _, _ in _contents(store)] == [1, 2, 3]
        assert store.next_expiry() > time.time_ns()
        assert store.load(3).hdr == b"NATS/1.0\r\nNats-TTL: 60\r\n\r\n"


async def test_a_restart_expires_ttl_messages_past_their_time(tmp_path: Path) -> None:
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        srv.control.freeze_clock(time.time_ns() - 30 * SECOND)
        nc = await nats.connect(srv.url)
        await _create(
            nc, name="F", subjects=["f.>"], storage="file", allow_msg_ttl=True, subject_delete_marker_ttl=SECOND
        )
        await _create(nc, name="P", subjects=["p.>"], storage="file", allow_msg_ttl=True)
        js = nc.jetstream()
        await js.publish("f.a", b"1", headers={"Nats-TTL": "2s"})
        await js.publish("p.a", b"1", headers={"Nats-TTL": "2s"})
        await js.publish("p.a", b"2", headers={"Nats-TTL": "never"})
        await nc.close()
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        # Without markers: expired when next read. With markers: the re-armed timer stores one.
        assert [seq for seq, _, _ in _contents(srv.jetstream.streams["P"].store)] == [2]
        store = srv.jetstream.streams["F"].store
        for _ in range(100):
            if store.state().msgs == 1 and store.load(2) is not None:
                break
            await asyncio.sleep(0.02)
        assert _contents(store) == [(2, b"f.a", MARKER)]
