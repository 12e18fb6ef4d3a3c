"""nats-py against a simulated 3-node cluster (jsemu-only: a real cluster's node can't be taken
down on demand): a client given one node's URL learns the others from INFO ``connect_urls``;
when the control plane takes its node down it reconnects to another, with its subscriptions
resent, and its R3 stream and KV bucket keep working through the nodes still up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from urllib.parse import urlparse

import nats
from nats.aio.client import Client

import jsemu

Factory = Callable[..., Awaitable[jsemu.Server]]


async def _client(url: str, events: dict[str, asyncio.Event]) -> Client:
    async def disconnected() -> None:
        events["disconnected"].set()

    async def reconnected() -> None:
        events["reconnected"].set()

    return await nats.connect(
        url,
        reconnect_time_wait=0.05,
        max_reconnect_attempts=-1,
        disconnected_cb=disconnected,
        reconnected_cb=reconnected,
    )


def _port(nc: Client) -> int | None:
    url = nc.connected_url
    return None if url is None else url.port


async def test_a_client_of_a_node_taken_down_reconnects_to_another(jsemu_factory: Factory) -> None:
    srv = await jsemu_factory(cluster_size=3)
    ports = [urlparse(url).port for url in srv.urls]
    events = {"disconnected": asyncio.Event(), "reconnected": asyncio.Event()}
    nc = await _client(srv.urls[0], events)
    assert _port(nc) == ports[0]
    assert sorted(urlparse(str(u.geturl())).port for u in nc.discovered_servers) == sorted(ports[1:])
    js = nc.jetstream(timeout=2)
    kv = await js.create_key_value(bucket="B", replicas=3)
    await js.add_stream(name="S", subjects=["s.>"], num_replicas=3, storage="memory")
    await kv.put("k", b"before")
    sub = await nc.subscribe("greet")
    other = await nats.connect(srv.urls[2])
    await nc.flush()

    srv.control.node_down("n1")
    await asyncio.wait_for(events["disconnected"].wait(), 5)
    await asyncio.wait_for(events["reconnected"].wait(), 5)
    assert _port(nc) in ports[1:]
    await nc.flush()  # the subscription is resent before this PING

    await other.publish("greet", b"after failover")
    assert (await sub.next_msg(2)).data == b"after failover"
    entry = await kv.get("k")
    assert entry.value == b"before"
    assert await kv.put("k", b"after") == 2
    ack = await js.publish("s.1", b"x")
    assert (ack.stream, ack.seq) == ("S", 1)
    info = await js.stream_info("S")
    assert info.cluster is not None and info.cluster.leader in ("n2", "n3")

    srv.control.node_up("n1")  # it catches up, and takes clients again
    back = await nats.connect(srv.urls[0])
    assert back._server_info["server_name"] == "n1"
    assert (await back.jetstream(timeout=2).stream_info("S")).state.messages == 1
    for conn in (back, other, nc):
        await conn.close()


async def test_clients_of_the_other_nodes_stay_connected(jsemu_factory: Factory) -> None:
    srv = await jsemu_factory(cluster_size=3)
    events = {"disconnected": asyncio.Event(), "reconnected": asyncio.Event()}
    nc = await _client(srv.urls[1], events)
    sub = await nc.subscribe("x")
    srv.control.node_down("n3")
    await nc.publish("x", b"still here")
    assert (await sub.next_msg(2)).data == b"still here"
    assert not events["disconnected"].is_set()
    await nc.close()
