"""jsemu-only: simulated stream peers and mirrors as Direct Get responders, driven by the
control plane. A real server can't pause a replica on demand, so these pin jsemu's own
contract: read-after-write incoherency appears exactly when a test asks for it.

The JSON shapes (``cluster``, ``replicas``, ``mirror``) follow a real 3-node cluster and a
real standalone server (see tests/jetstream/api/test_mirror.py for the differential part).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.errors import NoRespondersError

import jsemu
from jsemu.control import ControlError
from jsemu.ids import get_hash

SECOND = 1_000_000_000


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[jsemu.Server, Client]]:
    async with jsemu.Server(cluster_size=3) as srv:
        nc = await nats.connect(srv.url)
        yield srv, nc
        await nc.close()


async def _request(nc: Client, subject: str, body: Any = b"") -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await nc.request(subject, data, timeout=2)


async def _json(nc: Client, subject: str, body: Any = b"") -> dict[str, Any]:
    return json.loads((await _request(nc, subject, body)).data)


async def _create(nc: Client, **config: Any) -> dict[str, Any]:
    config.setdefault("storage", "memory")
    return await _json(nc, f"$JS.API.STREAM.CREATE.{config['name']}", config)


async def _last(nc: Client, stream: str, subject: str) -> tuple[str, str, bytes]:
    """Direct Get of the last message on ``subject``: (Nats-Stream, Nats-Sequence, data)."""
    msg = await _request(nc, f"$JS.API.DIRECT.GET.{stream}", {"last_by_subj": subject})
    assert msg.headers is not None, msg
    return msg.headers["Nats-Stream"], msg.headers["Nats-Sequence"], msg.data


async def _msg_get(nc: Client, stream: str, subject: str) -> dict[str, Any]:
    return (await _json(nc, f"$JS.API.STREAM.MSG.GET.{stream}", {"last_by_subj": subject}))["message"]


async def _publish(nc: Client, subject: str, data: bytes) -> dict[str, Any]:
    return json.loads((await nc.request(subject, data, timeout=2)).data)


# --- peers --------------------------------------------------------------------------------


async def test_r3_stream_has_three_responders_and_the_cluster_shape(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    created = await _create(nc, name="S", subjects=["s.>"], num_replicas=3, allow_direct=True)
    cl = created["cluster"]
    assert list(cl) == [
        "name",
        "raft_group",
        "leader",
        "leader_since",
        "system_account",
        "traffic_account",
        "replicas",
    ]
    assert (cl["name"], cl["leader"], cl["system_account"], cl["traffic_account"]) == ("jsemu", "n1", True, "$SYS")
    assert cl["raft_group"].startswith("S-R3M-")
    # Followers only, by name; peer ids are nats-server's hash of the server name.
    assert [(r["name"], r["current"], r["peer"]) for r in cl["replicas"]] == [
        ("n2", True, "44jzkV9D"),
        ("n3", True, "BXScrY9i"),
    ]
    await _publish(nc, "s.a", b"1")
    # The default: a random member of the _sys_ queue group answers, as in nats-server; 40
    # gets miss one of three peers with a probability below 1e-6.
    for _ in range(40):
        await _last(nc, "S", "s.a")
    assert sorted({a.peer for a in srv.control.answers()}) == ["n1", "n2", "n3"]
    srv.control.responder_policy("round_robin")
    for _ in range(3):
        await _last(nc, "S", "s.a")
    assert sorted(a.peer for a in srv.control.answers()[-3:]) == ["n1", "n2", "n3"]


async def test_paused_peer_serves_the_previous_value_until_resumed(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    ctl = srv.control
    await _create(nc, name="S", subjects=["s.>"], num_replicas=3, allow_direct=True)
    await _publish(nc, "s.a", b"v1")
    ctl.pause("S", peer="n2")
    ack = await _publish(nc, "s.a", b"v2")
    assert ack == {"stream": "S", "seq": 2}

    ctl.responder_policy("prefer", "n2")
    assert await _last(nc, "S", "s.a") == ("S", "1", b"v1")  # stale read through the paused peer
    assert ctl.answers()[-1].peer == "n2"
    # The regular get goes to the leader: coherent.
    assert (await _msg_get(nc, "S", "s.a"))["seq"] == 2
    ctl.responder_policy("prefer", "n3")
    assert await _last(nc, "S", "s.a") == ("S", "2", b"v2")

    info = await _json(nc, "$JS.API.STREAM.INFO.S")
    n2 = next(r for r in info["cluster"]["replicas"] if r["name"] == "n2")
    assert (n2["current"], n2["lag"]) == (False, 1)

    ctl.resume("S", peer="n2")
    ctl.responder_policy("prefer", "n2")
    assert await _last(nc, "S", "s.a") == ("S", "2", b"v2")
    info = await _json(nc, "$JS.API.STREAM.INFO.S")
    assert all(r["current"] and "lag" not in r for r in info["cluster"]["replicas"])


async def test_held_lag_keeps_a_peer_exactly_n_behind(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    ctl = srv.control
    await _create(nc, name="S", subjects=["s.>"], num_replicas=3, allow_direct=True)
    ctl.set_lag("S", 2, peer="n3")
    ctl.responder_policy("prefer", "n3")
    for i in range(1, 6):
        await _publish(nc, "s.k", b"%d" % i)
        expected = i - 2
        if expected < 1:
            reply = await _request(nc, "$JS.API.DIRECT.GET.S", {"last_by_subj": "s.k"})
            assert reply.headers == {"Status": "404", "Description": "Message Not Found"}
        else:
            assert await _last(nc, "S", "s.k") == ("S", str(expected), b"%d" % expected)
    assert [p["lag"] for p in ctl.peers("S")] == [0, 0, 2]
    ctl.catch_up("S", peer="n3")
    assert await _last(nc, "S", "s.k") == ("S", "5", b"5")


async def test_deletes_and_purges_replicate_in_order(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    ctl = srv.control
    await _create(nc, name="S", subjects=["s.>"], num_replicas=3, allow_direct=True, max_msgs_per_subject=2)
    ctl.pause("S", peer="n2")
    for i in range(5):
        await _publish(nc, "s.a", b"%d" % i)
    await _json(nc, "$JS.API.STREAM.MSG.DELETE.S", {"seq": 5})
    await _json(nc, "$JS.API.STREAM.PURGE.S", {"filter": "s.b"})
    ctl.responder_policy("prefer", "n2")
    reply = await _request(nc, "$JS.API.DIRECT.GET.S", {"last_by_subj": "s.a"})
    assert reply.headers == {"Status": "404", "Description": "Message Not Found"}
    ctl.resume("S", peer="n2")
    leader_state = (await _json(nc, "$JS.API.STREAM.INFO.S"))["state"]
    peer_store = srv.jetstream.streams["S"].replicas.peer("n2").store
    assert peer_store.state().msgs == leader_state["messages"] == 1
    assert await _last(nc, "S", "s.a") == ("S", "4", b"3")
    assert peer_store.state() == srv.jetstream.streams["S"].store.state()


async def test_peer_down_leaves_the_group_and_all_down_is_no_responders(
    cluster: tuple[jsemu.Server, Client],
) -> None:
    srv, nc = cluster
    ctl = srv.control
    await _create(nc, name="S", subjects=["s.>"], num_replicas=3, allow_direct=True)
    await _publish(nc, "s.a", b"v")
    ctl.peer_down("S", "n2")
    ctl.responder_policy("prefer", "n2")  # n2 is gone: the others answer
    for _ in range(5):
        assert await _last(nc, "S", "s.a") == ("S", "1", b"v")
    assert "n2" not in {a.peer for a in ctl.answers()}
    info = await _json(nc, "$JS.API.STREAM.INFO.S")
    n2 = next(r for r in info["cluster"]["replicas"] if r["name"] == "n2")
    assert n2["offline"] is True

    ctl.peer_down("S", "n1")  # the leader: n3 takes over
    info = await _json(nc, "$JS.API.STREAM.INFO.S")
    assert info["cluster"]["leader"] == "n3"
    assert await _publish(nc, "s.a", b"w") == {"stream": "S", "seq": 2}
    ctl.peer_down("S", "n3")
    with pytest.raises(NoRespondersError):
        await _request(nc, "$JS.API.DIRECT.GET.S", {"last_by_subj": "s.a"})
    with pytest.raises(NoRespondersError):
        await nc.request("s.a", b"x", timeout=1)  # no leader, no publishes
    ctl.peer_up("S", "n2")  # comes back, catches up and leads
    assert await _last(nc, "S", "s.a") == ("S", "2", b"w")
    assert (await _json(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] == "n2"


async def test_leader_step_down_api_and_control(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    await _create(nc, name="S", subjects=["s.>"], num_replicas=3)
    await _create(nc, name="R1", subjects=["r1"])
    reply = await _json(nc, "$JS.API.STREAM.LEADER.STEPDOWN.S")
    assert reply == {"type": "io.nats.jetstream.api.v1.stream_leader_stepdown_response", "success": True}
    info = await _json(nc, "$JS.API.STREAM.INFO.S")
    assert info["cluster"]["leader"] == "n2"
    assert [r["name"] for r in info["cluster"]["replicas"]] == ["n1", "n3"]
    reply = await _json(nc, "$JS.API.STREAM.LEADER.STEPDOWN.S", {"placement": {"preferred": "n2"}})
    assert reply["error"] == {"code": 400, "err_code": 10005, "description": 'preferred server "n2" is already leader'}
    assert srv.control.step_down("S", to="n3") == "n3"
    r1 = await _json(nc, "$JS.API.STREAM.LEADER.STEPDOWN.R1")
    assert r1["success"] is True
    assert (await _json(nc, "$JS.API.STREAM.INFO.R1"))["cluster"] == {"name": "jsemu", "leader": "n1"}
    missing = await _json(nc, "$JS.API.STREAM.LEADER.STEPDOWN.X")
    assert missing["error"]["err_code"] == 10059


async def test_replica_limits_follow_the_real_cluster() -> None:
    async with jsemu.Server(cluster_size=3) as srv:
        nc = await nats.connect(srv.url)
        r5 = await _create(nc, name="S", num_replicas=5)
        assert r5["error"] == {"code": 400, "err_code": 10005, "description": "no suitable peers for placement"}
        r6 = await _create(nc, name="S", num_replicas=6)
        assert r6["error"] == {"code": 500, "err_code": 10052, "description": "maximum replicas is 5"}
        await nc.close()
    async with jsemu.Server() as srv:  # standalone, like nats-server without a cluster
        nc = await nats.connect(srv.url)
        r3 = await _create(nc, name="S", num_replicas=3)
        assert r3["error"]["err_code"] == 10074
        step = await _json(nc, "$JS.API.STREAM.LEADER.STEPDOWN.S")
        assert step["error"] == {"code": 503, "err_code": 10010, "description": "JetStream clustering support required"}
        await nc.close()


# --- mirrors ------------------------------------------------------------------------------


async def test_paused_mirror_answers_for_the_upstream_with_its_own_name() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        ctl = srv.control
        await _create(nc, name="S", subjects=["s.>"], allow_direct=True)
        created = await _create(nc, name="M", mirror={"name": "S"})
        assert created["config"]["mirror_direct"] is True  # forced to the upstream's allow_direct
        await _publish(nc, "s.a", b"v1")  # something flows: M joins S's group
        ctl.pause("M")
        await _publish(nc, "s.a", b"v2")

        ctl.responder_policy("prefer", "M")
        assert await _last(nc, "S", "s.a") == ("M", "1", b"v1")
        assert (await _msg_get(nc, "S", "s.a"))["seq"] == 2
        ctl.responder_policy("prefer", "S")
        assert await _last(nc, "S", "s.a") == ("S", "2", b"v2")
        mirror = (await _json(nc, "$JS.API.STREAM.INFO.M"))["mirror"]
        assert (mirror["name"], mirror["lag"]) == ("S", 1)

        ctl.resume("M")
        ctl.responder_policy("prefer", "M")
        assert await _last(nc, "S", "s.a") == ("M", "2", b"v2")
        assert (await _json(nc, "$JS.API.STREAM.INFO.M"))["mirror"]["lag"] == 0
        answered = [(a.stream, a.answers_for) for a in ctl.answers()]
        assert answered == [("M", "S"), ("S", "S"), ("M", "S")]
        await nc.close()


async def test_mirror_of_an_empty_stream_joins_only_when_something_flows() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        ctl = srv.control
        await _create(nc, name="S", subjects=["s.>"], allow_direct=True)
        await _create(nc, name="M", mirror={"name": "S"})
        ctl.responder_policy("prefer", "M")
        await _request(nc, "$JS.API.DIRECT.GET.S", {"seq": 1})
        assert ctl.answers()[-1].stream == "S"
        assert ctl.mirror_state("M")["direct"] is False
        await _publish(nc, "s.a", b"x")
        assert await _last(nc, "S", "s.a") == ("M", "1", b"x")
        await nc.close()


async def test_mirror_held_behind_and_upstream_deleted() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        ctl = srv.control
        await _create(nc, name="S", subjects=["s.>"], allow_direct=True)
        await _create(nc, name="M", mirror={"name": "S"}, allow_direct=True)
        ctl.set_lag("M", 3)
        for i in range(1, 11):
            await _publish(nc, "s.k", b"%d" % i)
        assert await _last(nc, "M", "s.k") == ("M", "7", b"7")
        assert (await _json(nc, "$JS.API.STREAM.INFO.M"))["mirror"]["lag"] == 3
        ctl.catch_up("M")
        await _json(nc, "$JS.API.STREAM.DELETE.S")
        # The mirror keeps what it has and keeps answering for the deleted upstream.
        assert await _last(nc, "S", "s.k") == ("M", "10", b"10")
        assert await _last(nc, "M", "s.k") == ("M", "10", b"10")
        await nc.close()


async def test_mirror_on_r3_cluster_peers() -> None:
    async with jsemu.Server(cluster_size=3) as srv:
        nc = await nats.connect(srv.url)
        ctl = srv.control
        await _create(nc, name="S", subjects=["s.>"], allow_direct=True, num_replicas=3)
        await _create(nc, name="M", mirror={"name": "S"}, num_replicas=3)
        await _publish(nc, "s.a", b"1")
        ctl.pause("M", peer="n3")
        await _publish(nc, "s.a", b"2")
        ctl.responder_policy("prefer", "M/n3")
        assert await _last(nc, "S", "s.a") == ("M", "1", b"1")
        ctl.responder_policy("prefer", "M/n2")
        assert await _last(nc, "S", "s.a") == ("M", "2", b"2")
        info = await _json(nc, "$JS.API.STREAM.INFO.S")
        assert info["alternates"] == [{"name": "S", "cluster": "jsemu"}, {"name": "M", "cluster": "jsemu"}]
        await nc.close()


# --- control plane errors and reset -------------------------------------------------------


async def test_control_errors_and_reset(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    ctl = srv.control
    await _create(nc, name="S", subjects=["s.>"], num_replicas=3, allow_direct=True)
    with pytest.raises(ControlError, match="no stream"):
        ctl.pause("X", peer="n1")
    with pytest.raises(ControlError, match="is the leader"):
        ctl.pause("S", peer="n1")
    with pytest.raises(ControlError, match="not a mirror"):
        ctl.pause("S")
    with pytest.raises(ControlError, match="no peer"):
        ctl.peer_down("S", "n9")
    with pytest.raises(ControlError, match="unknown policy"):
        ctl.responder_policy("fastest")
    ctl.pause("S", peer="n2")
    ctl.peer_down("S", "n3")
    ctl.drop("s.>", count=0)
    ctl.freeze_clock()
    ctl.reset()
    assert all(not p["paused"] and not p["offline"] and p["lag"] == 0 for p in ctl.peers("S"))
    assert ctl.faults() == [] and not srv.jetstream.clock.frozen
    assert await _publish(nc, "s.a", b"x") == {"stream": "S", "seq": 1}
    ctl.reset(streams=True)
    assert srv.jetstream.streams == {}


# --- sources ------------------------------------------------------------------------------


async def test_paused_source_holds_back_one_upstream() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        ctl = srv.control
        await _create(nc, name="A", subjects=["a.>"])
        await _create(nc, name="B", subjects=["b.>"])
        await _create(nc, name="X", sources=[{"name": "A"}, {"name": "B"}], allow_direct=True)
        ctl.pause("X", source="B")
        await _publish(nc, "b.1", b"b1")
        await _publish(nc, "a.1", b"a1")
        assert await _last(nc, "X", "a.1") == ("X", "1", b"a1")
        info = await _json(nc, "$JS.API.STREAM.INFO.X")
        assert [(s["name"], s["lag"]) for s in info["sources"]] == [("A", 0), ("B", 1)]
        ctl.resume("X", source="B")
        msg = await _request(nc, "$JS.API.DIRECT.GET.X", {"last_by_subj": "b.1"})
        assert msg.headers is not None
        # The last field identifies the origin stream: getHash of its creation time.
        ident = get_hash((await _json(nc, "$JS.API.STREAM.INFO.B"))["created"])
        assert (msg.headers["Nats-Sequence"], msg.headers["Nats-Stream-Source"]) == ("2", f"B 1 > > b.1 {ident}")
        with pytest.raises(ControlError, match="has no source 'C'"):
            ctl.pause("X", source="C")
        await nc.close()
