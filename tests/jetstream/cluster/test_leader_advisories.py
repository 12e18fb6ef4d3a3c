"""jsemu-only: leader-elected advisories of the simulated cluster, against the JSON a real
3-node nats-server 2.15.1 cluster sent (three ``nats-server -c`` processes with routes on
localhost, a client subscribed to ``$JS.EVENT.ADVISORY.>``, recorded below): one when an R3
stream or consumer is created (before its ``CREATED`` advisory) and one per change of leader
(``CONSUMER.LEADER.STEPDOWN``, ``STREAM.LEADER.STEPDOWN``); none for an R1 stream, an R1
durable or a named ephemeral (R1: no raft node).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client

import jsemu

pytestmark = pytest.mark.fake_only

#: Recorded from the real cluster (ids, times, leaders and lags vary; keys, their order and the value types are the shape).
REAL_STREAM_ELECTED = {
    "type": "io.nats.jetstream.advisory.v1.stream_leader_elected",
    "id": "OyGSmPoiXdfDeHnU5mfZZO",
    "timestamp": "2026-11-23T22:48:27.002814449Z",
    "stream": "S",
    "leader": "n3",
    "replicas": [
        {"name": "n2", "current": True, "active": 60049, "peer": "44jzkV9D"},
        {"name": "n3", "current": True, "active": 4277760, "peer": "BXScrY9i"},
        {"name": "n1", "current": False, "active": 0, "lag": 1, "peer": "fjFyEjc1"},
    ],
}
REAL_CONSUMER_ELECTED = {
    "type": "io.nats.jetstream.advisory.v1.consumer_leader_elected",
    "id": "7Q4xQjVIfwRBpjsoYRa5uT",
    "timestamp": "2026-11-23T22:48:33.15247139Z",
    "stream": "S",
    "consumer": "D",
    "leader": "n2",
    "replicas": [
        {"name": "n3", "current": False, "active": 0, "lag": 4, "peer": "BXScrY9i"},
        {"name": "n1", "current": True, "active": 345573, "peer": "fjFyEjc1"},
        {"name": "n2", "current": True, "active": 14265651, "peer": "44jzkV9D"},
    ],
}
#: The subjects the real cluster sent, in order, for the script of the test below.
REAL_SUBJECTS = [
    "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.S",
    "$JS.EVENT.ADVISORY.STREAM.CREATED.S",
    "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.D",
    "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.D",
    "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.S",
]


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, _shape(v)) for k, v in value.items() if k != "lag"]
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[jsemu.Server, Client]]:
    async with jsemu.Server(cluster_size=3, cluster_name="C") as srv:
        nc = await nats.connect(srv.url)
        yield srv, nc
        await nc.close()


async def _request(nc: Client, subject: str, body: Any = b"") -> dict[str, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply: dict[str, Any] = json.loads((await nc.request(subject, data, timeout=2)).data)
    assert "error" not in reply, reply
    return reply


async def test_leader_elected_advisories_as_the_real_cluster(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    got: list[tuple[str, dict[str, Any]]] = []

    async def on_msg(msg: Any) -> None:
        if ".CONSUMER.CREATED." not in msg.subject:  # jsemu sends no consumer_action advisory
            got.append((msg.subject, json.loads(msg.data)))

    await nc.subscribe("$JS.EVENT.ADVISORY.STREAM.>", cb=on_msg)
    await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.>", cb=on_msg)
    await nc.flush()
    await _request(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
    await _request(nc, "$JS.API.STREAM.CREATE.R1", {"name": "R1", "subjects": ["r1.>"], "num_replicas": 1})
    body = {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}
    created = await _request(nc, "$JS.API.CONSUMER.CREATE.S.D", body)
    body = {"stream_name": "S", "config": {"durable_name": "E", "num_replicas": 1}}
    await _request(nc, "$JS.API.CONSUMER.CREATE.S.E", body)
    await _request(nc, "$JS.API.CONSUMER.CREATE.S.EPH", {"stream_name": "S", "config": {"name": "EPH"}})
    await _request(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.D")
    await _request(nc, "$JS.API.STREAM.LEADER.STEPDOWN.S")
    await nc.flush()
    await asyncio.sleep(0.05)
    assert [s for s, _ in got if "LEADER_ELECTED" in s or s.endswith("CREATED.S")] == REAL_SUBJECTS
    stream_first, consumer_first, consumer_moved, stream_moved = (e for s, e in got if "LEADER_ELECTED" in s)
    for event in (stream_first, stream_moved):
        assert _shape(event) == _shape(REAL_STREAM_ELECTED)
        assert sorted(r["name"] for r in event["replicas"]) == ["n1", "n2", "n3"]
    for event in (consumer_first, consumer_moved):
        assert _shape(event) == _shape(REAL_CONSUMER_ELECTED)
        assert sorted(r["name"] for r in event["replicas"]) == ["n1", "n2", "n3"]
    assert consumer_first["leader"] == created["cluster"]["leader"]
    assert consumer_moved["leader"] != consumer_first["leader"]
    assert consumer_moved["leader"] == (await _request(nc, "$JS.API.CONSUMER.INFO.S.D"))["cluster"]["leader"]
    assert stream_moved["leader"] != stream_first["leader"]
    assert stream_moved["leader"] == (await _request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"]
    # a leader's server going down elects another at once: the advisory shows the one down
    got.clear()
    gone = consumer_moved["leader"]
    srv.control.peer_down("S", gone)
    await nc.flush()
    await asyncio.sleep(0.05)
    [event] = [e for s, e in got if s == "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.D"]
    assert event["leader"] not in ("", gone)
    down = next(r for r in event["replicas"] if r["name"] == gone)
    assert (down["current"], down["offline"]) == (False, True)
    stream_events = [e for s, e in got if s == "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.S"]
    assert len(stream_events) == (1 if gone == stream_moved["leader"] else 0)
