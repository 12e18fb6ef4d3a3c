"""jsemu-only: a clustered consumer's state is replicated by records, and a
follower can lag behind.

Every replica applies the leader's records to a state of its own; after a step-down the
engine restarts from the new leader's replica state alone. Checked against a plain model
of what a client must see after a failover (nats-server's ``readStoredState``): acked
messages never come back, pending ones come back once ``ack_wait`` has passed since their
delivery, and delivery of new messages goes on where the old leader was.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.js.api import AckPolicy, ConsumerConfig

import jsemu
from jsemu.control.remote import ControlError
from jsemu.jetstream.cluster.consumer_replication import ConsumerReplicas, ReplicaState
from jsemu.jetstream.consumers.consumer import Consumer

pytestmark = pytest.mark.fake_only

ACK_WAIT = 10.0


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[jsemu.Server, Client]]:
    async with jsemu.Server(cluster_size=3, cluster_name="C") as srv:
        srv.control.freeze_clock()
        nc = await nats.connect(srv.url)
        yield srv, nc
        await nc.close()


def _consumer(srv: jsemu.Server, stream: str, name: str) -> Consumer:
    assert srv.jetstream is not None
    return srv.jetstream.consumer_set(srv.jetstream.streams[stream]).by_name[name]


def _engine_view(c: Consumer) -> tuple[Any, ...]:
    return c.delivered, c.ack_floor, {s: p[0] for s, p in c.pending.items()}, dict(c.redelivery_counts)


async def _stepdown(nc: Client, stream: str, consumer: str, to: str = "") -> None:
    body = json.dumps({"placement": {"preferred": to}}).encode() if to else b""
    reply = json.loads((await nc.request(f"$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{consumer}", body, 2)).data)
    assert reply.get("success") is True, reply


async def _setup(nc: Client, n: int, **cfg: Any) -> Any:
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"], num_replicas=3)
    for i in range(1, n + 1):
        await js.publish(f"s.{i}", f"m{i}".encode())
    config = ConsumerConfig(durable_name="D", ack_policy=AckPolicy.EXPLICIT, ack_wait=ACK_WAIT, **cfg)
    await js.add_consumer("S", config)
    return js, await js.pull_subscribe_bind("D", "S")


async def _drain(sub: Any) -> list[tuple[int, int]]:
    """Everything a fetch gets now: (stream seq, delivery count)."""
    out: list[tuple[int, int]] = []
    while True:
        try:
            msgs = await sub.fetch(10, timeout=0.3)
        except nats.errors.TimeoutError:
            return out
        out += [(m.metadata.sequence.stream, m.metadata.num_delivered) for m in msgs]
        for m in msgs:
            await m.ack_sync()


async def test_failover_continues_from_the_replicated_state(cluster: tuple[jsemu.Server, Client]) -> None:
    """The plain model: after a step-down, new messages continue after the last delivered one,
    acked and terminated ones never come back, pending ones come back after ack_wait."""
    srv, nc = cluster
    _js, sub = await _setup(nc, 10)
    msgs = await sub.fetch(6, timeout=2)
    acked = {1, 2, 4}
    for m in msgs:
        seq = m.metadata.sequence.stream
        if seq in acked:
            await m.ack_sync()
        elif seq == 5:
            await m.term()
    await nc.flush()
    c = _consumer(srv, "S", "D")
    replicas = c.replicas
    assert isinstance(replicas, ConsumerReplicas)
    for state in replicas.states.values():  # every replica applied every record
        assert state.view() == _engine_view(c)
    old = replicas.leader
    await _stepdown(nc, "S", "D")
    assert replicas.leader != old
    # new messages go on from the old leader's position, no redelivery before ack_wait
    assert await _drain(sub) == [(7, 1), (8, 1), (9, 1), (10, 1)]
    srv.control.advance_clock(seconds=ACK_WAIT)
    pending = {1, 2, 3, 4, 5, 6} - acked - {5}
    assert await _drain(sub) == [(seq, 2) for seq in sorted(pending)]
    info = await nc.jetstream().consumer_info("S", "D")
    assert (info.num_ack_pending, info.ack_floor.stream_seq, info.delivered.stream_seq) == (0, 10, 10)


async def test_a_new_leader_knows_only_what_records_told_it(cluster: tuple[jsemu.Server, Client]) -> None:
    """The engine takes over the new leader's replica state: a state changed behind the
    records' back (planted here) is what the consumer continues from."""
    srv, nc = cluster
    _js, sub = await _setup(nc, 4)
    await sub.fetch(2, timeout=2)
    c = _consumer(srv, "S", "D")
    assert c.replicas is not None
    target = next(n for n in sorted(c.replicas.states) if n != c.replicas.leader)
    c.replicas.states[target] = ReplicaState("explicit")  # as if it had never heard of deliveries
    await _stepdown(nc, "S", "D", target)
    assert await _drain(sub) == [(1, 1), (2, 1), (3, 1), (4, 1)]


async def test_replicas_follow_random_work(cluster: tuple[jsemu.Server, Client]) -> None:
    """Random fetches, acks, naks, terms, progress, ack-wait expiries and step-downs: after
    each step every replica's state is the engine's consumer-store view."""
    srv, nc = cluster
    js, sub = await _setup(nc, 40, max_deliver=3)
    c = _consumer(srv, "S", "D")
    assert c.replicas is not None
    rng = random.Random(16)
    held: list[Any] = []
    for step in range(60):
        action = rng.choice(["fetch", "ack", "ack", "nak", "term", "wpi", "clock", "stepdown", "publish"])
        if action == "fetch":
            try:
                held += await sub.fetch(rng.randint(1, 4), timeout=0.2)
            except nats.errors.TimeoutError:
                pass
        elif action in ("ack", "nak", "term", "wpi") and held:
            m = held.pop(rng.randrange(len(held)))
            if action == "ack":
                await m.ack_sync()
            elif action == "nak":
                await m.nak()
            elif action == "term":
                await m.term()
            else:
                await m.in_progress()
        elif action == "clock":
            srv.control.advance_clock(seconds=ACK_WAIT)
        elif action == "stepdown":
            await _stepdown(nc, "S", "D")
        elif action == "publish":
            await js.publish(f"s.{step}", b"x")
        await nc.flush()
        for name, state in c.replicas.states.items():
            assert state.view() == _engine_view(c), (step, action, name)


async def test_a_lagging_follower_brings_redeliveries_after_failover(cluster: tuple[jsemu.Server, Client]) -> None:
    """Acks the held-back follower never applied are lost when it leads: those
    messages come back after ack_wait, as after a real failover to a lagging follower."""
    srv, nc = cluster
    _js, sub = await _setup(nc, 4)
    first = await sub.fetch(2, timeout=2)
    for m in first:
        await m.ack_sync()
    peer = srv.control.lag_consumer_replica("S", "D")
    for m in await sub.fetch(2, timeout=2):  # 3 and 4: delivered and acked, on the leader only
        await m.ack_sync()
    rows = {r["name"]: r for r in srv.control.consumer_replicas("S", "D")}
    assert (rows[peer]["held"], rows[peer]["lag"], rows[peer]["ack_floor"]) == (True, 4, 2)
    await _stepdown(nc, "S", "D", peer)
    rows = {r["name"]: r for r in srv.control.consumer_replicas("S", "D")}
    assert rows[peer]["leader"] and not rows[peer]["held"]
    assert all(r["ack_floor"] == 2 and r["lag"] == 0 for r in rows.values())  # the others follow its state
    assert await _drain(sub) == [(3, 1), (4, 1)]  # it never knew they went out: sent again
    srv.control.advance_clock(seconds=ACK_WAIT)
    assert await _drain(sub) == []  # 1 and 2 stay acked


async def test_lag_consumer_replica_refusals(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    js, _sub = await _setup(nc, 1)
    await js.add_consumer("S", ConsumerConfig(durable_name="ONE", num_replicas=1))
    with pytest.raises(ControlError, match="has no replicas"):
        srv.control.lag_consumer_replica("S", "ONE")
    leader = srv.control.consumer_replicas("S", "D")
    name = next(r["name"] for r in leader if r["leader"])
    with pytest.raises(ControlError, match="can not lag"):
        srv.control.lag_consumer_replica("S", "D", name)
    with pytest.raises(ControlError, match="no peer"):
        srv.control.lag_consumer_replica("S", "D", "zz")


async def test_a_run_of_acks_and_a_batch_of_deliveries_are_records_too(cluster: tuple[jsemu.Server, Client]) -> None:
    """Many deliveries in one run and many acks in one read (the consumer's fast loops) reach
    the replicas as well: a replica's state is the engine's."""
    srv, nc = cluster
    _js, sub = await _setup(nc, 300)
    msgs = await sub.fetch(200, timeout=2)
    c = _consumer(srv, "S", "D")
    assert c.replicas is not None
    for m in msgs[:150]:
        await nc.publish(m.reply, b"")  # one write: the server gets a run of plain acks
    await nc.flush()
    for name, state in c.replicas.states.items():
        assert state.view() == _engine_view(c), name
    assert c.replicas.states[name].ack_floor == (150, 150)
