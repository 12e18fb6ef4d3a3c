"""JetStream through every node of a cluster of processes, seen by nats-py: the same tests on
three nats-server processes (a real JetStream cluster) and on three ``jsemu serve`` processes
(whose metadata leader runs JetStream for all, ``jsemu/server/meta_leader.py``).

Each test creates through one node, publishes through another and reads through the third;
the module's cluster is shared (every test has its own stream).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import nats
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js.api import StreamConfig
from support.cluster import Node, first_fetch, first_publish, start_js_cluster, stop_cluster
from support.servers import KINDS

NAMES = ("n1", "n2", "n3")


@pytest.fixture(scope="module", params=KINDS)
def cluster(request: pytest.FixtureRequest) -> Iterator[list[Node]]:
    nodes = start_js_cluster("jsemu" if request.param == "jsemu" else "real", NAMES)
    yield nodes
    stop_cluster(nodes)


@pytest.fixture
async def conns(cluster: list[Node]) -> AsyncIterator[list[NATS]]:
    ncs = [await nats.connect(node.url) for node in cluster]
    yield ncs
    for nc in ncs:
        await nc.close()


async def _request(nc: NATS, subject: str, body: dict[str, object] | None = None) -> dict[str, object]:
    msg = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=5)
    out: dict[str, object] = json.loads(msg.data)
    return out


async def test_stream_created_on_one_node_used_on_the_others(conns: list[NATS]) -> None:
    n1, n2, n3 = conns
    await n1.jetstream().add_stream(StreamConfig(name="ACROSS", subjects=["across.>"], allow_direct=True))
    ack = await first_publish(n2.jetstream(), "across.a", b"one", headers={"K": "v"})
    assert (ack.stream, ack.seq) == ("ACROSS", 1)
    info = await _request(n3, "$JS.API.STREAM.INFO.ACROSS")
    assert info["state"]["messages"] == 1  # type: ignore[index]
    cluster = info["cluster"]
    assert isinstance(cluster, dict) and set(cluster) == {"name", "leader"}
    assert cluster["name"] == "c" and cluster["leader"] in NAMES
    got = await n3.jetstream().get_msg("ACROSS", 1, direct=True)
    assert (got.subject, got.data, got.headers and got.headers.get("K")) == ("across.a", b"one", "v")


async def test_pull_fetch_and_acks_across_nodes(conns: list[NATS]) -> None:
    n1, n2, n3 = conns
    await n1.jetstream().add_stream(StreamConfig(name="PULL", subjects=["pull.>"]))
    await first_publish(n2.jetstream(), "pull.0", b"m0")
    for i in range(1, 3):
        await n2.jetstream().publish(f"pull.{i}", b"m%d" % i)
    sub = await n3.jetstream().pull_subscribe("pull.>", "worker", stream="PULL")
    msgs = await first_fetch(sub, 3)
    assert [(m.subject, m.data) for m in msgs] == [("pull.0", b"m0"), ("pull.1", b"m1"), ("pull.2", b"m2")]
    for m in msgs:
        await m.ack_sync()
    info = await _request(n1, "$JS.API.CONSUMER.INFO.PULL.worker")
    assert info["ack_floor"]["stream_seq"] == 3 and info["num_ack_pending"] == 0  # type: ignore[index]
    assert info["cluster"]["name"] == "c" and info["cluster"]["leader"] in NAMES  # type: ignore[index]


async def _two_pushed(nc: NATS, ordered: bool) -> list[Msg]:
    """The first two messages of a push consumer (durable and acked, or ordered) on ``nc``."""
    got: list[Msg] = []
    done = asyncio.Event()

    async def cb(msg: Msg) -> None:
        got.append(msg)
        if not ordered:
            await msg.ack()
        if len(got) == 2:
            done.set()

    if ordered:
        sub = await nc.jetstream().subscribe("push.>", cb=cb, ordered_consumer=True)
    else:
        sub = await nc.jetstream().subscribe("push.>", durable="pusher", cb=cb, manual_ack=True)
    await asyncio.wait_for(done.wait(), 5)
    await sub.unsubscribe()
    return got


async def test_push_and_ordered_consumers_deliver_to_another_node(conns: list[NATS]) -> None:
    n1, n2, n3 = conns
    await n1.jetstream().add_stream(StreamConfig(name="PUSH", subjects=["push.>"]))
    await first_publish(n2.jetstream(), "push.a", b"a", headers={"H": "1"})
    await n2.jetstream().publish("push.b", b"b")
    for ordered in (False, True):
        got = await _two_pushed(n3, ordered)
        assert [(m.subject, m.data) for m in got] == [("push.a", b"a"), ("push.b", b"b")]
        assert got[0].headers == {"H": "1"}
        assert got[0].metadata.sequence.stream == 1
    await asyncio.sleep(0.2)
    info = await _request(n1, "$JS.API.CONSUMER.INFO.PUSH.pusher")
    assert info["ack_floor"]["stream_seq"] == 2  # type: ignore[index]


async def test_kv_put_on_one_node_get_and_watch_on_another(conns: list[NATS]) -> None:
    n1, _, n3 = conns
    kv1 = await n1.jetstream().create_key_value(bucket="across")
    await kv1.put("k", b"v1")
    kv3 = await n3.jetstream().key_value("across")
    assert (await kv3.get("k")).value == b"v1"
    watcher = await kv3.watch("k")
    first = await watcher.updates(timeout=5)
    while first is None:  # nats-server under load: the end-of-initial-values marker before the value
        first = await watcher.updates(timeout=5)
    assert first.value == b"v1"
    await kv1.put("k", b"v2")
    nxt = await watcher.updates(timeout=5)
    while nxt is None:  # the end of the initial values
        nxt = await watcher.updates(timeout=5)
    assert nxt.value == b"v2"
    await watcher.stop()


async def _answers(nc: NATS, subject: str) -> list[Msg]:
    """Every message a plain subscriber on the reply subject of one request sees."""
    inbox = nc.new_inbox()
    got: list[Msg] = []

    async def cb(msg: Msg) -> None:
        got.append(msg)

    await nc.subscribe(inbox, cb=cb)
    await nc.flush()
    await asyncio.sleep(0.1)  # the inbox's interest reaches the other nodes
    await nc.publish(subject, b"", reply=inbox)
    await nc.flush()
    await asyncio.sleep(0.4)
    return got


async def test_one_answer_per_api_request_on_every_node(conns: list[NATS]) -> None:
    """A request reaches exactly one JetStream: a plain subscriber on the reply subject sees
    one answer, whichever node the requester is on."""
    for nc in conns:
        got = await _answers(nc, "$JS.API.INFO")
        assert len(got) == 1
        assert json.loads(got[0].data)["type"] == "io.nats.jetstream.api.v1.account_info_response"


async def test_replicas_refused_with_a_clear_error(cluster: list[Node], conns: list[NATS]) -> None:
    """jsemu cannot replicate across processes: R>1 is refused at create (a real cluster of
    three creates it), for streams, consumers and so KV buckets; R1 works."""
    if cluster[0].kind != "jsemu":
        pytest.skip("a real cluster replicates")
    n1, n2, _ = conns
    err = await _request(n1, "$JS.API.STREAM.CREATE.R3", {"name": "R3", "num_replicas": 3})
    assert err["error"] == {
        "code": 400,
        "err_code": 10005,
        "description": "jsemu cannot replicate a stream across processes: use 1 replica in a cluster of jsemu"
        " processes, or an in-process cluster (cluster_size) for replicas",
    }
    await _request(n1, "$JS.API.STREAM.CREATE.R1", {"name": "R1", "num_replicas": 1})
    err = await _request(
        n2, "$JS.API.CONSUMER.CREATE.R1.C", {"stream_name": "R1", "config": {"durable_name": "C", "num_replicas": 3}}
    )
    assert err["error"]["code"] == 400 and err["error"]["err_code"] == 10126  # type: ignore[index]
    assert "cannot replicate a consumer across processes" in err["error"]["description"]  # type: ignore[index]
    with pytest.raises(nats.js.errors.BadRequestError, match="cannot replicate a stream"):
        await n2.jetstream().create_key_value(bucket="r3", replicas=3)
