"""jsemu-only: the peer endpoints in the simulated cluster (``cluster_size=3``) answer as a real
3-node nats-server 2.15.1 cluster answered (three ``nats-server -c`` processes with routes on
localhost, accounts with JetStream; the replies below are its bytes): the request checks in
``jsStreamRemapPeerRequest``'s order, a member of an R3 group with no server left to take its
place fails the remap (503/10075), and nothing is ever being reconfigured (10129). Removing
the only peer of an R1 stream answers ``success`` and starts the stream anew on a spare server,
empty, its consumers with it (captured from a real 5-node cluster: the messages are lost);
moves of an R3 stream's replica are in ``test_moves.py``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client

import jsemu
from jsemu.ids import get_hash

pytestmark = pytest.mark.fake_only

_T = "io.nats.jetstream.api.v1."


def _err(kind: str, code: int, err_code: int, description: str) -> str:
    body = {"type": _T + kind, "error": {"code": code, "err_code": err_code, "description": description}}
    return json.dumps(body, separators=(",", ":"))


BAD_JSON = "invalid JSON: invalid character 'b' looking for beginning of object key string at offset 2"
#: (subject after $JS.API., request, the real cluster's reply).
REAL_REPLIES = [
    ("STREAM.PEER.REMOVE.S", b"", _err("stream_remove_peer_response", 400, 10003, "bad request")),
    ("STREAM.PEER.REMOVE.S", b"{}", _err("stream_remove_peer_response", 400, 10003, "bad request")),
    ("STREAM.PEER.REMOVE.S", b'{"peer":""}', _err("stream_remove_peer_response", 400, 10003, "bad request")),
    ("STREAM.PEER.REMOVE.S", b"{bad", _err("stream_remove_peer_response", 400, 10025, BAD_JSON)),
    ("STREAM.PEER.REMOVE.S", b'{"peer":"zz"}', _err("stream_remove_peer_response", 400, 10040, "peer not a member")),
    ("STREAM.PEER.REMOVE.X", b'{"peer":"n2"}', _err("stream_remove_peer_response", 404, 10059, "stream not found")),
    (
        "STREAM.PEER.EVACUATE.S",
        b'{"peer":"zz"}',
        _err("stream_evacuate_peer_response", 400, 10040, "peer not a member"),
    ),
    ("STREAM.PEER.REMOVE.S", b'{"peer":"n1"}', _err("stream_remove_peer_response", 503, 10075, "peer remap failed")),
    (
        "STREAM.PEER.EVACUATE.S",
        b'{"peer":"n2"}',
        _err("stream_evacuate_peer_response", 503, 10075, "peer remap failed"),
    ),
    (
        "STREAM.CANCEL_MOVE.S",
        b"",
        _err("stream_cancel_move_response", 400, 10129, "stream reconfiguration not in progress"),
    ),
    ("STREAM.CANCEL_MOVE.X", b"", _err("stream_cancel_move_response", 404, 10059, "stream not found")),
    ("CONSUMER.PEER.REMOVE.S.X", b"", _err("consumer_remove_peer_response", 400, 10003, "bad request")),
    (
        "CONSUMER.PEER.REMOVE.S.D",
        b'{"peer":"zz"}',
        _err("consumer_remove_peer_response", 400, 10040, "peer not a member"),
    ),
    ("CONSUMER.PEER.REMOVE.S.D", b"{bad", _err("consumer_remove_peer_response", 400, 10025, BAD_JSON)),
    (
        "CONSUMER.PEER.REMOVE.S.X",
        b'{"peer":"n1"}',
        _err("consumer_remove_peer_response", 404, 10014, "consumer not found"),
    ),
    (
        "CONSUMER.PEER.REMOVE.X.D",
        b'{"peer":"n1"}',
        _err("consumer_remove_peer_response", 404, 10059, "stream not found"),
    ),
    (
        "CONSUMER.PEER.REMOVE.S.D",
        b'{"peer":"n1"}',
        _err("consumer_remove_peer_response", 503, 10075, "peer remap failed"),
    ),
    (
        "CONSUMER.PEER.EVACUATE.S.D",
        b'{"peer":"zz"}',
        _err("consumer_evacuate_peer_response", 400, 10040, "peer not a member"),
    ),
]


@pytest.fixture
async def cluster() -> AsyncIterator[Client]:
    async with jsemu.Server(cluster_size=3, cluster_name="c") as srv:
        nc = await nats.connect(srv.url)
        for name, replicas in (("S", 3), ("R1", 1)):
            cfg = {"name": name, "subjects": [name.lower()], "num_replicas": replicas}
            await nc.request(f"$JS.API.STREAM.CREATE.{name}", json.dumps(cfg).encode(), timeout=2)
        durable = {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}
        await nc.request("$JS.API.CONSUMER.DURABLE.CREATE.S.D", json.dumps(durable).encode(), timeout=2)
        yield nc
        await nc.close()


async def _reply(nc: Client, subject: str, data: bytes) -> str:
    return (await nc.request(f"$JS.API.{subject}", data, timeout=2)).data.decode()


async def test_replies_are_the_real_clusters(cluster: Client) -> None:
    for subject, data, real in REAL_REPLIES:
        assert await _reply(cluster, subject, data) == real, (subject, data)


async def test_a_member_is_named_by_server_name_or_peer_id(cluster: Client) -> None:
    by_id = json.dumps({"peer": get_hash("n3")}).encode()
    expected = _err("stream_remove_peer_response", 503, 10075, "peer remap failed")
    assert await _reply(cluster, "STREAM.PEER.REMOVE.S", by_id) == expected


async def test_an_r1_streams_only_peer_restarts_empty_on_a_spare(cluster: Client) -> None:
    nc = cluster
    for i in range(3):
        await nc.request("r1", b"m%d" % i, timeout=2)
    durable = {"stream_name": "R1", "config": {"durable_name": "E", "ack_policy": "explicit"}}
    await nc.request("$JS.API.CONSUMER.DURABLE.CREATE.R1.E", json.dumps(durable).encode(), timeout=2)
    inbox = await nc.subscribe("pull.in")
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.R1.E", b'{"batch":1}', reply="pull.in")
    await inbox.next_msg(timeout=2)  # one delivered, unacked
    events: list[str] = []

    async def seen(msg: Any) -> None:
        events.append(msg.subject)

    await nc.subscribe("$JS.EVENT.ADVISORY.>", cb=seen)
    info: dict[str, Any] = json.loads(await _reply(nc, "STREAM.INFO.R1", b""))
    leader = info["cluster"]["leader"]
    other = next(n for n in ("n1", "n2", "n3") if n != leader)
    assert await _reply(nc, "STREAM.PEER.REMOVE.R1", json.dumps({"peer": other}).encode()) == _err(
        "stream_remove_peer_response", 400, 10040, "peer not a member"
    )
    reply = await _reply(nc, "STREAM.PEER.REMOVE.R1", json.dumps({"peer": leader}).encode())
    assert reply == json.dumps({"type": _T + "stream_remove_peer_response", "success": True}, separators=(",", ":"))
    after: dict[str, Any] = json.loads(await _reply(nc, "STREAM.INFO.R1", b""))
    assert after["cluster"] == {"name": "c", "leader": after["cluster"]["leader"]}
    assert after["cluster"]["leader"] != leader
    assert after["state"]["messages"] == 0 and after["state"]["consumer_count"] == 1
    consumer: dict[str, Any] = json.loads(await _reply(nc, "CONSUMER.INFO.R1.E", b""))
    assert consumer["cluster"] == after["cluster"]
    assert consumer["delivered"] == {"consumer_seq": 0, "stream_seq": 0} and consumer["num_ack_pending"] == 0
    ack = json.loads((await nc.request("r1", b"after", timeout=2)).data)
    assert ack == {"stream": "R1", "seq": 1}  # the stream starts over
    assert json.loads(await _reply(nc, "CONSUMER.INFO.R1.E", b""))["num_pending"] == 1
    await nc.flush()
    await asyncio.sleep(0.05)
    prefix = "$JS.EVENT.ADVISORY."
    assert [e.removeprefix(prefix) for e in events if not e.startswith(prefix + "API")] == [
        "STREAM.LEADER_ELECTED.R1",
        "STREAM.CREATED.R1",
        "STREAM.UPDATED.R1",
        "CONSUMER.LEADER_ELECTED.R1.E",
        "CONSUMER.CREATED.R1.E",
        "STREAM.UPDATED.R1",
    ]
