"""jsemu-only: consumers in the simulated cluster (``cluster_size=3``): their replica count,
``cluster`` info block, ``CONSUMER.LEADER.STEPDOWN``, and a leader that moves when its
server goes down while the consumer's state carries on.

The shapes are those of a real 3-node nats-server 2.15.1 cluster (three ``nats-server -c``
processes with routes on localhost), recorded below: a durable on an R3 file stream gets
an R3 group (``C-R3F-…``), one with ``mem_storage`` or on a memory stream ``C-R3M-…``, a
named ephemeral or an R1 durable only ``{"name", "leader"}``, and the step-down errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client

import jsemu
from jsemu.ids import get_hash

pytestmark = pytest.mark.fake_only

#: From the real cluster (values vary; keys, their order and the value types are the shape).
REAL_R3_CLUSTER = {
    "name": "C",
    "raft_group": "C-R3F-IE4WzZnY",
    "leader": "n3",
    "leader_since": "2026-11-23T19:25:10.700986211Z",
    "system_account": True,
    "traffic_account": "$SYS",
    "replicas": [
        {"name": "n1", "current": True, "active": 290642, "peer": "fjFyEjc1"},
        {"name": "n2", "current": True, "active": 299395, "peer": "44jzkV9D"},
    ],
}
REAL_R1_CLUSTER = {"name": "C", "leader": "n3"}
REAL_STEPDOWN_ERRORS = {
    "nope": {"code": 404, "err_code": 10014, "description": "consumer not found"},
    "T": {"code": 404, "err_code": 10059, "description": "stream not found"},
    "zz": {"code": 400, "err_code": 10005, "description": 'preferred server "zz" not known'},
}


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, _shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[jsemu.Server, Client]]:
    async with jsemu.Server(cluster_size=3, cluster_name="C") as srv:
        nc = await nats.connect(srv.url)
        yield srv, nc
        await nc.close()


async def _json(nc: Client, subject: str, body: Any = b"") -> dict[str, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply: dict[str, Any] = json.loads((await nc.request(subject, data, timeout=2)).data)
    return reply


async def _consumer(nc: Client, stream: str, consumer: str, **cfg: Any) -> dict[str, Any]:
    return await _json(nc, f"$JS.API.CONSUMER.CREATE.{stream}.{consumer}", {"stream_name": stream, "config": cfg})


async def test_consumer_cluster_blocks_have_the_real_shapes(cluster: tuple[jsemu.Server, Client]) -> None:
    _srv, nc = cluster
    await _json(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
    await _json(
        nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "subjects": ["m.>"], "num_replicas": 3, "storage": "memory"}
    )
    d = await _consumer(nc, "S", "D", durable_name="D", ack_policy="explicit")
    assert d["config"]["num_replicas"] == 0  # echoed as asked, as the real cluster does
    block = d["cluster"]
    assert _shape(block) == _shape(REAL_R3_CLUSTER)
    assert list(d)[list(d).index("num_pending") + 1] == "cluster"
    assert re.fullmatch(r"C-R3F-[0-9A-Za-z]{8}", block["raft_group"])
    names = {block["leader"], *(r["name"] for r in block["replicas"])}
    assert names == {"n1", "n2", "n3"}
    assert [r["name"] for r in block["replicas"]] == sorted(r["name"] for r in block["replicas"])
    assert all(r["peer"] == get_hash(r["name"]) for r in block["replicas"])
    mem = await _consumer(nc, "S", "MEM", durable_name="MEM", mem_storage=True)
    assert mem["cluster"]["raft_group"].startswith("C-R3M-")
    x = await _consumer(nc, "M", "X", durable_name="X")
    assert x["cluster"]["raft_group"].startswith("C-R3M-")
    for name, cfg in (("E", {"name": "E"}), ("R1", {"durable_name": "R1", "num_replicas": 1})):
        one = await _consumer(nc, "S", name, **cfg)
        assert _shape(one["cluster"]) == _shape(REAL_R1_CLUSTER), name
        assert one["cluster"]["leader"] in ("n1", "n2", "n3")
    listed = await _json(nc, "$JS.API.CONSUMER.LIST.S")
    assert [_shape(c["cluster"]) for c in listed["consumers"]] == [
        _shape(REAL_R3_CLUSTER),
        _shape(REAL_R1_CLUSTER),
        _shape(REAL_R3_CLUSTER),
        _shape(REAL_R1_CLUSTER),
    ]


async def test_leader_stepdown_and_a_leader_going_down(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    await _json(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
    for i in range(3):
        await nc.request(f"s.{i}", f"m{i}".encode(), timeout=2)
    await _consumer(nc, "S", "D", durable_name="D", ack_policy="explicit")
    await _consumer(nc, "S", "R1", durable_name="R1", num_replicas=1)
    js = nc.jetstream()
    sub = await js.pull_subscribe_bind("D", "S")
    first = await sub.fetch(1, timeout=2)
    await first[0].ack_sync()
    before = (await _json(nc, "$JS.API.CONSUMER.INFO.S.D"))["cluster"]
    ok = {"type": "io.nats.jetstream.api.v1.consumer_leader_stepdown_response", "success": True}
    assert await _json(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.D") == ok
    info = await _json(nc, "$JS.API.CONSUMER.INFO.S.D")
    after = info["cluster"]
    assert after["leader"] != before["leader"] and before["leader"] in [r["name"] for r in after["replicas"]]
    assert after["leader_since"] >= before["leader_since"]
    # the state carries on under the new leader
    assert (info["delivered"]["stream_seq"], info["ack_floor"]["stream_seq"], info["num_pending"]) == (1, 1, 2)
    assert [m.data for m in await sub.fetch(1, timeout=2)] == [b"m1"]
    assert await _json(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.R1") == ok  # no raft group: nothing to do
    for stream, consumer, body, key in (
        ("S", "nope", b"", "nope"),
        ("T", "nope", b"", "T"),
        ("S", "D", {"placement": {"preferred": "zz"}}, "zz"),
    ):
        got = await _json(nc, f"$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{consumer}", body)
        assert got["error"] == REAL_STEPDOWN_ERRORS[key]
    leader = after["leader"]
    got = await _json(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.D", {"placement": {"preferred": leader}})
    assert got["error"]["description"] == f'preferred server "{leader}" is already leader'
    other = next(r["name"] for r in after["replicas"])
    assert await _json(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.D", {"placement": {"preferred": other}}) == ok
    assert (await _json(nc, "$JS.API.CONSUMER.INFO.S.D"))["cluster"]["leader"] == other
    # its server goes down: another peer leads, the one down shows offline
    srv.control.peer_down("S", other)
    block = (await _json(nc, "$JS.API.CONSUMER.INFO.S.D"))["cluster"]
    assert block["leader"] not in (other, "")
    down = next(r for r in block["replicas"] if r["name"] == other)
    assert (down["current"], down.get("offline")) == (False, True)
    assert [m.data for m in await sub.fetch(1, timeout=2)] == [b"m2"]
    await nc.close()


async def test_stepdown_needs_a_cluster() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        got = await _json(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.D")
        assert got["error"] == {"code": 503, "err_code": 10010, "description": "JetStream clustering support required"}
        await nc.close()
