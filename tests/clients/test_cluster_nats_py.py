"""Clusters of server processes seen by nats-py: the same tests on three nats-server processes
and on three ``jsemu serve`` processes, started as client harnesses start them (``-p -1
--cluster nats://127.0.0.1:-1 --cluster_name c --routes ...``), and on a mixed pair.

The module's clusters are shared by the tests that do not kill a node; failover starts its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from support.cluster import Node, start_cluster, stop_cluster
from support.servers import KINDS


@pytest.fixture(scope="module", params=KINDS)
def cluster(request: pytest.FixtureRequest) -> Iterator[list[Node]]:
    kind = "jsemu" if request.param == "jsemu" else "real"
    nodes = start_cluster([kind] * 3)
    yield nodes
    stop_cluster(nodes)


async def _connect(node: Node, **kwargs: object) -> NATS:
    return await nats.connect(node.url, **kwargs)  # type: ignore[arg-type]


async def _settle(*conns: NATS) -> None:
    """Interest crosses a route asynchronously: flush, then give the RS+ a moment."""
    for nc in conns:
        await nc.flush()
    await asyncio.sleep(0.15)


async def test_discovery_connect_urls(cluster: list[Node]) -> None:
    nc = await _connect(cluster[0])
    try:
        await nc.flush()
        await asyncio.sleep(0.1)
        info = nc._server_info
        assert info.get("cluster") == "c"
        urls = set(info.get("connect_urls") or [])
        assert urls == {f"127.0.0.1:{n.port}" for n in cluster}
        assert nc.servers and len(nc.discovered_servers) == 2
    finally:
        await nc.close()


async def test_pub_sub_across_nodes_with_headers(cluster: list[Node]) -> None:
    pub, sub = await _connect(cluster[0]), await _connect(cluster[2])
    try:
        got: list[Msg] = []
        done = asyncio.Event()

        async def cb(msg: Msg) -> None:
            got.append(msg)
            if len(got) == 3:
                done.set()

        await sub.subscribe("orders.*", cb=cb)
        await sub.subscribe("orders.>", cb=cb)  # two matching subscriptions: one message over the route
        await _settle(sub)
        await pub.publish("orders.1", b"one")
        await pub.publish("orders.2", b"", headers={"K": "v"})
        await asyncio.wait_for(done.wait(), 3)
        await asyncio.sleep(0.1)
        assert sorted((m.subject, m.data) for m in got) == [
            ("orders.1", b"one"),
            ("orders.1", b"one"),
            ("orders.2", b""),
            ("orders.2", b""),
        ]
        assert all(m.headers == {"K": "v"} for m in got if m.subject == "orders.2")
    finally:
        await pub.close()
        await sub.close()


async def test_queue_group_across_nodes_delivers_once(cluster: list[Node]) -> None:
    pub = await _connect(cluster[0])
    members = [await _connect(cluster[1]), await _connect(cluster[1]), await _connect(cluster[2])]
    try:
        counts = [0, 0, 0]

        def counter(i: int):  # type: ignore[no-untyped-def]
            async def cb(msg: Msg) -> None:
                counts[i] += 1

            return cb

        for i, nc in enumerate(members):
            await nc.subscribe("work", queue="q", cb=counter(i))
        await _settle(*members)
        for i in range(200):
            await pub.publish("work", str(i).encode())
        await pub.flush()
        for _ in range(50):
            if sum(counts) >= 200:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)
        assert sum(counts) == 200
        assert all(c > 0 for c in counts), counts  # weighted pick spreads over both nodes' members
    finally:
        await pub.close()
        for nc in members:
            await nc.close()


async def test_request_reply_and_no_responders_across_nodes(cluster: list[Node]) -> None:
    requester, responder = await _connect(cluster[1]), await _connect(cluster[2])
    try:

        async def echo(msg: Msg) -> None:
            await msg.respond(b"re:" + msg.data)

        await responder.subscribe("svc.echo", cb=echo)
        await _settle(responder)
        reply = await requester.request("svc.echo", b"ping", timeout=2)
        assert reply.data == b"re:ping"
        with pytest.raises(nats.errors.NoRespondersError):
            await requester.request("svc.nobody", b"x", timeout=2)
    finally:
        await requester.close()
        await responder.close()


async def test_auto_unsubscribe_across_nodes(cluster: list[Node]) -> None:
    pub, sub = await _connect(cluster[0]), await _connect(cluster[1])
    try:
        s = await sub.subscribe("limited")
        await s.unsubscribe(limit=2)
        await _settle(sub)
        for i in range(5):
            await pub.publish("limited", str(i).encode())
        await pub.flush()
        first = await s.next_msg(timeout=2)
        second = await s.next_msg(timeout=2)
        assert (first.data, second.data) == (b"0", b"1")
        await asyncio.sleep(0.2)
        # once the limit is reached the interest is gone everywhere: a request now finds nobody
        with pytest.raises(nats.errors.NoRespondersError):
            await pub.request("limited", b"x", timeout=2)
    finally:
        await pub.close()
        await sub.close()


@pytest.mark.parametrize("kind", KINDS)
async def test_failover_to_another_node(kind: str) -> None:
    """A client whose node dies reconnects to a node it learned from ``connect_urls``, and its
    subscription works there; what it published while away is sent from its reconnect buffer."""
    nodes = start_cluster(["jsemu" if kind == "jsemu" else "real"] * 2)
    try:
        reconnected, disconnected = asyncio.Event(), asyncio.Event()

        async def on_reconnect() -> None:
            reconnected.set()

        async def on_disconnect() -> None:
            disconnected.set()

        client = await nats.connect(
            nodes[1].url,
            reconnected_cb=on_reconnect,
            disconnected_cb=on_disconnect,
            reconnect_time_wait=0.5,
            max_reconnect_attempts=20,
        )
        other = await nats.connect(nodes[0].url)
        try:
            await client.flush()
            await asyncio.sleep(0.1)
            assert len(client.discovered_servers) == 1
            sub = await client.subscribe("after")
            nodes[1].stop(kill=True)
            await asyncio.wait_for(disconnected.wait(), 10)
            await client.publish("after", b"buffered")  # kept in the reconnect buffer
            await asyncio.wait_for(reconnected.wait(), 10)
            assert client.connected_url is not None and client.connected_url.port == nodes[0].port
            assert (await sub.next_msg(timeout=2)).data == b"buffered"
            await _settle(client)
            await other.publish("after", b"from-node-0")
            assert (await sub.next_msg(timeout=2)).data == b"from-node-0"
        finally:
            await client.close()
            await other.close()
    finally:
        stop_cluster(nodes)


async def test_mixed_cluster_jsemu_and_nats_server() -> None:
    """One nats-server and one jsemu process in one cluster: messages, requests and queue
    groups both ways (jsemu announces no route pool, so nats-server speaks to it as to a
    server without pooling)."""
    nodes = start_cluster(["real", "jsemu"])
    try:
        real, emu = await _connect(nodes[0]), await _connect(nodes[1])
        try:
            assert {u for u in emu._server_info.get("connect_urls") or []} >= {f"127.0.0.1:{nodes[0].port}"}
            s_emu = await emu.subscribe("to.emu")
            s_real = await real.subscribe("to.real")

            async def echo(msg: Msg) -> None:
                await msg.respond(msg.data.upper())

            await emu.subscribe("svc", cb=echo)
            await _settle(emu, real)
            await real.publish("to.emu", b"a", headers={"H": "1"})
            await emu.publish("to.real", b"b")
            m1 = await s_emu.next_msg(timeout=2)
            m2 = await s_real.next_msg(timeout=2)
            assert (m1.data, m1.headers, m2.data) == (b"a", {"H": "1"}, b"b")
            assert (await real.request("svc", b"hi", timeout=2)).data == b"HI"
            with pytest.raises(nats.errors.NoRespondersError):
                await emu.request("nobody", b"x", timeout=2)
        finally:
            await real.close()
            await emu.close()
    finally:
        stop_cluster(nodes)


async def test_stream_on_one_jsemu_node_stores_what_another_node_publishes() -> None:
    """jsemu only (nats-server needs a JetStream cluster for this): a stream's subjects are
    interest like any other, so a publish on node B is stored by node A's stream and its
    PubAck comes back over the route; node A, the metadata leader, answers B's API requests
    too (``test_cluster_jetstream_nats_py.py`` has the rest)."""
    nodes = start_cluster(["jsemu", "jsemu"], jetstream=True)
    try:
        a, b = await _connect(nodes[0]), await _connect(nodes[1])
        try:
            await a.jetstream().add_stream(name="ORDERS", subjects=["orders.>"])
            await _settle(a)
            ack = await b.jetstream().publish("orders.1", b"from-b")
            assert (ack.stream, ack.seq) == ("ORDERS", 1)
            await b.publish("orders.2", b"plain")
            await b.flush()
            await asyncio.sleep(0.2)
            info = await a.jetstream().stream_info("ORDERS")
            assert info.state.messages == 2
            assert [s.config.name for s in await b.jetstream().streams_info()] == ["ORDERS"]  # A's
        finally:
            await a.close()
            await b.close()
    finally:
        stop_cluster(nodes)


@pytest.mark.parametrize("kinds", [["real", "jsemu", "jsemu"], ["jsemu", "real", "jsemu"], ["jsemu", "jsemu", "real"]])
async def test_mixed_three_nodes_meet_by_gossip(kinds: list[str]) -> None:
    """Nodes 1 and 2 are given only node 0's route URL: they find each other through the
    INFO node 0 forwards (nats-server's and jsemu's, each way), and a message crosses that
    gossiped route."""
    nodes = start_cluster(kinds)
    try:
        one, two = await _connect(nodes[1]), await _connect(nodes[2])
        try:
            sub = await two.subscribe("gossip")
            await _settle(two)
            await one.publish("gossip", b"hi")
            assert (await sub.next_msg(timeout=2)).data == b"hi"
            assert set(two._server_info.get("connect_urls") or []) == {f"127.0.0.1:{n.port}" for n in nodes}
        finally:
            await one.close()
            await two.close()
    finally:
        stop_cluster(nodes)


@pytest.mark.parametrize("kind", KINDS)
async def test_accounts_stay_apart_across_nodes(kind: str, tmp_path: Path) -> None:
    """Interest and messages cross routes per account: a subscriber of account B on the other
    node never sees what account A publishes."""
    conf = tmp_path / "accounts.conf"
    conf.write_text(
        "accounts {\n  A: { users: [ {user: a, password: a} ] }\n  B: { users: [ {user: b, password: b} ] }\n}\n"
    )
    nodes = start_cluster(["jsemu" if kind == "jsemu" else "real"] * 2, extra=["-c", str(conf)])
    try:
        url = lambda user, node: f"nats://{user}:{user}@127.0.0.1:{node.port}"
        pub = await nats.connect(url("a", nodes[0]))
        sub_a, sub_b = await nats.connect(url("a", nodes[1])), await nats.connect(url("b", nodes[1]))
        try:
            in_a, in_b = await sub_a.subscribe("acct"), await sub_b.subscribe("acct")
            await _settle(sub_a, sub_b)
            await pub.publish("acct", b"for-a")
            assert (await in_a.next_msg(timeout=2)).data == b"for-a"
            with pytest.raises(nats.errors.TimeoutError):
                await in_b.next_msg(timeout=0.3)
        finally:
            for nc in (pub, sub_a, sub_b):
                await nc.close()
    finally:
        stop_cluster(nodes)
