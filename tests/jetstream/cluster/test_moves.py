"""jsemu-only: a replica moves to a spare server in the simulated cluster (``cluster_size=5``)
as it moved in a real 5-node nats-server 2.15.1 cluster (five ``nats-server -c`` processes with
routes on localhost; an R3 stream with five messages, an R3 durable ``D`` and an R1 durable
``E``), once the move has settled:

- ``STREAM.PEER.REMOVE`` answers ``{"type":"...stream_remove_peer_response","success":true}``;
  the removed peer leaves the stream's group and one server outside it joins, current;
- a removed leader: the remaining peers elect one (``STREAM.LEADER_ELECTED``), and a
  consumer it led is taken over by the stream's new leader (``CONSUMER.LEADER_ELECTED``);
- the R3 consumer's group swaps the removed peer for the same newcomer; the R1 consumer on
  another server keeps its group; every message stays, and a consumer still delivers them;
- the stream's account gets three ``STREAM.UPDATED`` advisories of action ``modify``;
- ``SERVER.EVACUATE`` of a server moves its replicas the same way and answers success.

nats-server picks the newcomer at random among the spare servers; the tests check it is one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

import jsemu
from jsemu.config.server_config import load_config
from tests.jetstream.cluster.test_system_endpoints import CONF

pytestmark = pytest.mark.fake_only

_T = "io.nats.jetstream.api.v1."
NAMES = {"n1", "n2", "n3", "n4", "n5"}
REMOVED = json.dumps({"type": _T + "stream_remove_peer_response", "success": True}, separators=(",", ":"))


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[dict[str, Client]]:
    conf = tmp_path / "server.conf"
    conf.write_text(CONF)
    options = jsemu.ServerOptions(cluster_size=5, cluster_name="c")
    load_config(conf, options)
    options.host, options.port = "127.0.0.1", 0
    async with jsemu.Server(options) as srv:
        conns = {u: await nats.connect(srv.url, user=u, password=u) for u in ("a", "sys")}
        a = conns["a"]
        cfg = b'{"name":"S","subjects":["s"],"num_replicas":3,"allow_direct":true}'
        await a.request("$JS.API.STREAM.CREATE.S", cfg, timeout=2)
        for i in range(5):
            await a.request("s", b"m%d" % i, timeout=2)
        for name, replicas in (("D", 0), ("E", 1)):
            durable = {"stream_name": "S", "config": {"durable_name": name, "ack_policy": "explicit"}}
            durable["config"]["num_replicas"] = replicas
            await a.request(f"$JS.API.CONSUMER.DURABLE.CREATE.S.{name}", json.dumps(durable).encode(), timeout=2)
        yield conns
        for nc in conns.values():
            await nc.close()


async def _api(nc: Client, subject: str, body: bytes = b"") -> Any:
    return json.loads((await nc.request(f"$JS.API.{subject}", body, timeout=2)).data)


def _members(cluster: dict[str, Any]) -> list[str]:
    return [cluster["leader"], *(r["name"] for r in cluster.get("replicas", []))]


async def _advisories(nc: Client) -> list[tuple[str, dict[str, Any]]]:
    seen: list[tuple[str, dict[str, Any]]] = []

    async def got(msg: Any) -> None:
        if ".API" not in msg.subject:
            seen.append((msg.subject, json.loads(msg.data)))

    await nc.subscribe("$JS.EVENT.ADVISORY.>", cb=got)
    await nc.flush()
    return seen


async def _pulled(nc: Client, count: int) -> list[bytes]:
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.D", json.dumps({"batch": count}).encode(), reply=inbox)
    return [(await sub.next_msg(timeout=2)).data for _ in range(count)]


async def test_a_removed_follower_is_replaced_by_a_spare_server(cluster: dict[str, Client]) -> None:
    a = cluster["a"]
    before = (await _api(a, "STREAM.INFO.S"))["cluster"]
    e_before = (await _api(a, "CONSUMER.INFO.S.E"))["cluster"]
    # The R1 consumer E is placed at random: remove a follower that does not host it.
    leader = before["leader"]
    follower = next(r["name"] for r in before["replicas"] if r["name"] != e_before["leader"])
    # D is led by the follower about to go, as in the capture: the stream's leader takes over.
    await _api(a, "CONSUMER.LEADER.STEPDOWN.S.D", json.dumps({"placement": {"preferred": follower}}).encode())
    seen = await _advisories(a)
    reply = await a.request("$JS.API.STREAM.PEER.REMOVE.S", json.dumps({"peer": follower}).encode(), timeout=2)
    assert reply.data.decode() == REMOVED
    info = await _api(a, "STREAM.INFO.S")
    after = info["cluster"]
    assert after["leader"] == leader and after["raft_group"] == before["raft_group"]
    members = _members(after)
    assert follower not in members and len(members) == 3
    newcomer = (set(members) - set(_members(before))).pop()
    assert newcomer in NAMES - set(_members(before))
    assert all(r["current"] and "lag" not in r for r in after["replicas"])
    assert info["state"]["messages"] == 5 and "desired" not in after
    d = (await _api(a, "CONSUMER.INFO.S.D"))["cluster"]
    assert d["leader"] == leader and sorted(_members(d)) == sorted(members)
    assert (await _api(a, "CONSUMER.INFO.S.E"))["cluster"] == e_before  # not on the removed server
    await a.flush()
    await asyncio.sleep(0.05)
    assert [s for s, _ in seen] == [
        "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.D",
        *["$JS.EVENT.ADVISORY.STREAM.UPDATED.S"] * 3,
    ]
    assert seen[0][1]["leader"] == leader
    assert all(body["action"] == "modify" for _, body in seen[1:])
    assert await _pulled(a, 5) == [b"m%d" % i for i in range(5)]


async def test_a_removed_leader_hands_over_and_every_message_stays(cluster: dict[str, Client]) -> None:
    a = cluster["a"]
    before = (await _api(a, "STREAM.INFO.S"))["cluster"]
    leader = before["leader"]
    seen = await _advisories(a)
    reply = await a.request("$JS.API.STREAM.PEER.REMOVE.S", json.dumps({"peer": leader}).encode(), timeout=2)
    assert reply.data.decode() == REMOVED
    after = (await _api(a, "STREAM.INFO.S"))["cluster"]
    new_leader = after["leader"]
    assert new_leader in _members(before) and new_leader != leader
    assert leader not in _members(after) and len(_members(after)) == 3
    d = (await _api(a, "CONSUMER.INFO.S.D"))["cluster"]
    assert d["leader"] == new_leader and sorted(_members(d)) == sorted(_members(after))
    await a.flush()
    await asyncio.sleep(0.05)
    assert [s for s, _ in seen][:2] == [
        "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.S",
        "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.D",
    ]
    assert seen[0][1]["leader"] == new_leader
    assert {r["name"] for r in seen[0][1]["replicas"]} == set(_members(before))  # the removed one still listed
    assert [s for s, _ in seen][2:] == ["$JS.EVENT.ADVISORY.STREAM.UPDATED.S"] * 3
    # A publish after the move reaches every replica, the newcomer's too.
    await a.request("s", b"m5", timeout=2)
    info = await _api(a, "STREAM.INFO.S")
    assert info["state"]["messages"] == 6
    assert all(r["current"] for r in info["cluster"]["replicas"])
    for _ in range(6):  # Direct Get is answered by any replica: each has every message
        got = await a.request("$JS.API.DIRECT.GET.S", b'{"seq":6}', timeout=2)
        assert got.data == b"m5"
    assert await _pulled(a, 6) == [b"m%d" % i for i in range(6)]


async def test_a_server_evacuation_moves_its_replicas(cluster: dict[str, Client]) -> None:
    a, sys = cluster["a"], cluster["sys"]
    before = (await _api(a, "STREAM.INFO.S"))["cluster"]
    follower = before["replicas"][0]["name"]
    reply = await sys.request("$JS.API.SERVER.EVACUATE", json.dumps({"peer": follower}).encode(), timeout=2)
    assert json.loads(reply.data) == {"type": _T + "meta_server_evacuate_response", "success": True}
    after = (await _api(a, "STREAM.INFO.S"))["cluster"]
    assert after["leader"] == before["leader"]
    assert follower not in _members(after) and len(_members(after)) == 3
    d = (await _api(a, "CONSUMER.INFO.S.D"))["cluster"]
    assert sorted(_members(d)) == sorted(_members(after))
    assert await _pulled(a, 5) == [b"m%d" % i for i in range(5)]


async def test_a_group_on_every_spare_has_nowhere_to_go(cluster: dict[str, Client]) -> None:
    """Two removals fill the cluster's five servers with moves, then one more has a spare
    again (the removed peers are outside the group): moves never run out while a server is free."""
    a = cluster["a"]
    for _ in range(3):
        leader = (await _api(a, "STREAM.INFO.S"))["cluster"]["leader"]
        reply = await a.request("$JS.API.STREAM.PEER.REMOVE.S", json.dumps({"peer": leader}).encode(), timeout=2)
        assert reply.data.decode() == REMOVED
    info = await _api(a, "STREAM.INFO.S")
    assert info["state"]["messages"] == 5 and len(_members(info["cluster"])) == 3


async def test_a_down_server_is_removed_and_stays_out_when_it_is_back() -> None:
    """The usual reason to remove a peer: its server is down. The spare must be up (a down
    server is no spare), and the removed server coming back rejoins no group."""
    async with jsemu.Server(cluster_size=5, cluster_name="c") as srv:
        nc = await nats.connect(srv.url)
        await nc.request("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s"],"num_replicas":3}', timeout=2)
        await nc.request("s", b"m0", timeout=2)
        srv.control.node_down("n4")  # not a spare any more
        srv.control.node_down("n2")
        reply = await nc.request("$JS.API.STREAM.PEER.REMOVE.S", b'{"peer":"n2"}', timeout=2)
        assert reply.data.decode() == REMOVED
        cluster = (await _api(nc, "STREAM.INFO.S"))["cluster"]
        assert _members(cluster) == ["n1", "n3", "n5"] and all(r["current"] for r in cluster["replicas"])
        srv.control.node_up("n2")
        await nc.request("s", b"m1", timeout=2)
        info = await _api(nc, "STREAM.INFO.S")
        assert _members(info["cluster"]) == ["n1", "n3", "n5"] and info["state"]["messages"] == 2
        await nc.close()


async def test_an_r1_consumer_moves_with_its_removed_server(cluster: dict[str, Client]) -> None:
    """The R1 consumer E on the removed server moves to the newcomer and still answers."""
    a = cluster["a"]
    before = (await _api(a, "STREAM.INFO.S"))["cluster"]
    host = (await _api(a, "CONSUMER.INFO.S.E"))["cluster"]["leader"]
    if host == before["leader"]:  # keep the stream's leader: move E to a follower first
        await _api(
            a,
            "STREAM.LEADER.STEPDOWN.S",
            json.dumps({"placement": {"preferred": before["replicas"][0]["name"]}}).encode(),
        )
        before = (await _api(a, "STREAM.INFO.S"))["cluster"]
    reply = await a.request("$JS.API.STREAM.PEER.REMOVE.S", json.dumps({"peer": host}).encode(), timeout=2)
    assert reply.data.decode() == REMOVED
    members = _members((await _api(a, "STREAM.INFO.S"))["cluster"])
    newcomer = (set(members) - set(_members(before))).pop()
    assert (await _api(a, "CONSUMER.INFO.S.E"))["cluster"] == {"name": "c", "leader": newcomer}
