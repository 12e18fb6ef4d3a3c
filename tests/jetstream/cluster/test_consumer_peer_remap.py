"""jsemu-only: ``CONSUMER.PEER.REMOVE`` / ``EVACUATE`` in a simulated 5-node cluster, against a
real 5-node nats-server 2.15.1 cluster (stream ``S`` with five messages, durable ``D``):

- an R3 consumer of an R5 stream: removing a follower or the leader answers ``success``; the
  server leaves the consumer's group and one of the stream's servers outside it joins (a
  removed leader hands over first, ``CONSUMER.LEADER_ELECTED``); the consumer keeps its state
  and the stream's group is unchanged;
- an R3 consumer of an R3 stream has no server to move to: 503/10075 ``peer remap failed``,
  nothing changes (a spare outside the stream's group does not count);
- the only replica of an R1 consumer is refused by jsemu (nats-server brings it back on another
  server empty and without a leader)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest

import jsemu

pytestmark = pytest.mark.fake_only

_T = "io.nats.jetstream.api.v1."
REMAP_FAILED = {"code": 503, "err_code": 10075, "description": "peer remap failed"}


async def _json(nc: nats.NATS, subject: str, body: bytes = b"") -> dict[str, Any]:
    reply: dict[str, Any] = json.loads((await nc.request(subject, body, timeout=2)).data)
    return reply


def _group(info: dict[str, Any]) -> list[str]:
    cl = info["cluster"]
    return sorted([cl["leader"], *(r["name"] for r in cl.get("replicas", []))])


async def _cluster(stream_replicas: int, consumer_replicas: int) -> AsyncIterator[nats.NATS]:
    async with jsemu.Server(cluster_size=5) as srv:
        nc = await nats.connect(srv.url)
        stream = {"name": "S", "subjects": ["s"], "num_replicas": stream_replicas}
        await nc.request("$JS.API.STREAM.CREATE.S", json.dumps(stream).encode(), timeout=2)
        for i in range(5):
            await nc.request("s", b"m%d" % i, timeout=2)
        durable = {
            "stream_name": "S",
            "config": {"durable_name": "D", "ack_policy": "explicit", "num_replicas": consumer_replicas},
        }
        await nc.request("$JS.API.CONSUMER.DURABLE.CREATE.S.D", json.dumps(durable).encode(), timeout=2)
        yield nc
        await nc.close()


@pytest.fixture
async def r5_stream() -> AsyncIterator[nats.NATS]:
    async for nc in _cluster(5, 3):
        yield nc


@pytest.mark.parametrize(("verb", "who"), [("REMOVE", "follower"), ("EVACUATE", "leader")])
async def test_a_consumer_replica_moves_within_its_streams_group(r5_stream: nats.NATS, verb: str, who: str) -> None:
    nc = r5_stream
    elected: list[dict[str, Any]] = []

    async def seen(msg: Any) -> None:
        elected.append(json.loads(msg.data))

    await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.D", cb=seen)
    before = await _json(nc, "$JS.API.CONSUMER.INFO.S.D")
    stream_before = _group(await _json(nc, "$JS.API.STREAM.INFO.S"))
    leader = before["cluster"]["leader"]
    victim = leader if who == "leader" else before["cluster"]["replicas"][0]["name"]
    reply = await _json(nc, f"$JS.API.CONSUMER.PEER.{verb}.S.D", json.dumps({"peer": victim}).encode())
    kind = "consumer_remove_peer_response" if verb == "REMOVE" else "consumer_evacuate_peer_response"
    assert reply == {"type": _T + kind, "success": True}
    after = await _json(nc, "$JS.API.CONSUMER.INFO.S.D")
    group = _group(after)
    assert victim not in group and len(group) == 3 and set(group) <= set(stream_before)
    assert after["num_pending"] == 5
    assert _group(await _json(nc, "$JS.API.STREAM.INFO.S")) == stream_before
    await nc.flush()
    await asyncio.sleep(0.05)
    if who == "leader":
        assert after["cluster"]["leader"] != victim and [e["leader"] for e in elected] == [after["cluster"]["leader"]]
    else:
        assert after["cluster"]["leader"] == leader and elected == []


async def test_no_server_left_in_the_streams_group() -> None:
    async for nc in _cluster(3, 3):
        before = await _json(nc, "$JS.API.CONSUMER.INFO.S.D")
        victim = before["cluster"]["replicas"][0]["name"]
        reply = await _json(nc, "$JS.API.CONSUMER.PEER.REMOVE.S.D", json.dumps({"peer": victim}).encode())
        assert reply["error"] == REMAP_FAILED  # n4 and n5 are spare, but outside the stream's group
        assert _group(await _json(nc, "$JS.API.CONSUMER.INFO.S.D")) == _group(before)


async def test_an_r1_consumers_only_replica_is_refused() -> None:
    async for nc in _cluster(3, 1):
        before = await _json(nc, "$JS.API.CONSUMER.INFO.S.D")
        home = before["cluster"]["leader"]
        reply = await _json(nc, "$JS.API.CONSUMER.PEER.REMOVE.S.D", json.dumps({"peer": home}).encode())
        assert reply["error"]["err_code"] == 10051 and "does not implement" in reply["error"]["description"]
        assert (await _json(nc, "$JS.API.CONSUMER.INFO.S.D"))["cluster"]["leader"] == home
