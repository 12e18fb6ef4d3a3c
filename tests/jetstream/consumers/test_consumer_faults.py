"""jsemu-only: faults the control plane stages on one consumer, deterministically,
seen through nats-py: an ordered consumer (a KV watch) recreates itself after a gap or lost
heartbeats and still yields every value exactly once; a dropped ack means a redelivery; held
acks, expired pull requests, the state report, a consumer on a paused mirror; and the same
calls over ``$JSEMU.API``. The servers come from the pytest plugin's fixtures."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from jsemu.control import ControlError

pytestmark = pytest.mark.fake_only


async def _values(watcher: Any, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        e = await watcher.updates(timeout=3)
        assert e is not None
        out.append(e.value)
    return out


def _names(srv: Any, stream: str) -> list[str]:
    return list(srv.jetstream.streams[stream].consumer_set.by_name)


async def test_a_gap_makes_a_kv_watch_recreate_and_yield_every_value_once(jsemu_server: Any) -> None:
    ctl = jsemu_server.control
    nc = await nats.connect(jsemu_server.url)
    kv = await nc.jetstream().create_key_value(bucket="cfg")
    await kv.put("k", b"0")
    watcher = await kv.watchall()
    assert await _values(watcher, 1) == [b"0"]
    assert await watcher.updates(timeout=2) is None  # initial values done
    [first] = _names(jsemu_server, "KV_cfg")
    state = ctl.skip_messages("KV_cfg", count=1)  # the only consumer: the watch's
    assert state["skip_messages"] == 1
    for i in range(1, 6):
        await kv.put(f"k{i}", b"%d" % i)  # a key each: history 1 keeps every value
    # The watch saw consumer sequence 3 after 1: it recreated its consumer from the last
    # stream sequence it had, so the skipped value comes too, and nothing twice.
    assert await _values(watcher, 5) == [b"1", b"2", b"3", b"4", b"5"]
    with pytest.raises(asyncio.TimeoutError):
        await watcher.updates(timeout=0.3)
    assert ctl.consumer_state("KV_cfg", first)["faults"]["skipped"] == 1
    assert len(_names(jsemu_server, "KV_cfg")) == 2  # the recreated one beside the old
    await nc.close()


async def test_lost_heartbeats_make_an_ordered_consumer_recreate(jsemu_server: Any) -> None:
    ctl = jsemu_server.control
    nc = await nats.connect(jsemu_server.url)
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"])
    await js.publish("s.a", b"1")
    sub = await js.subscribe("s.>", ordered_consumer=True, idle_heartbeat=0.2)
    assert (await sub.next_msg(timeout=2)).data == b"1"
    [first] = _names(jsemu_server, "S")
    ctl.lose_heartbeats("S", count=10)  # 2 s without a heartbeat: nats-py gives up after 2 missed
    deadline = time.monotonic() + 5
    while len(_names(jsemu_server, "S")) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    names = _names(jsemu_server, "S")
    assert len(names) == 2 and names[0] == first
    assert ctl.consumer_state("S", first)["faults"]["lost_heartbeats"] >= 2
    await js.publish("s.b", b"2")
    assert (await sub.next_msg(timeout=2)).data == b"2"  # from the new consumer, once
    with pytest.raises(nats.errors.TimeoutError):
        await sub.next_msg(timeout=0.3)
    await nc.close()


async def test_a_dropped_ack_means_a_redelivery_and_held_acks_land_later(jsemu_factory: Any) -> None:
    srv = await jsemu_factory(frozen_clock=True, streams=[{"name": "J", "subjects": ["j.>"]}])
    ctl = srv.control
    nc = await nats.connect(srv.url)
    js = nc.jetstream()
    await js.publish("j.1", b"job")
    await js.add_consumer("J", ConsumerConfig(durable_name="W", ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0))
    sub = await js.pull_subscribe_bind("W", "J")
    [msg] = await sub.fetch(1, timeout=2)
    ctl.drop_acks("J", "W")
    await msg.ack()
    await nc.flush()
    state = ctl.consumer_state("J", "W")
    assert (state["info"]["num_ack_pending"], state["faults"]["dropped_acks"]) == (1, 1)
    ctl.advance_clock(seconds=30)
    [again] = await sub.fetch(1, timeout=2)
    assert (again.data, again.metadata.num_delivered) == (b"job", 2)
    ctl.delay_acks("J", seconds=5, consumer="W")
    await again.ack()
    await nc.flush()
    assert ctl.consumer_state("J", "W")["info"]["num_ack_pending"] == 1  # held
    ctl.advance_clock(seconds=5)
    state = ctl.consumer_state("J", "W")
    assert (state["info"]["num_ack_pending"], state["pending"], state["faults"]["delayed_acks"]) == (0, [], 1)
    await nc.close()


async def test_expire_requests_ends_the_waiting_pull_requests(jsemu_server: Any) -> None:
    ctl = jsemu_server.control
    nc = await nats.connect(jsemu_server.url)
    js = nc.jetstream()
    await js.add_stream(name="Q", subjects=["q"])
    await js.add_consumer("Q", ConsumerConfig(durable_name="D", ack_policy=AckPolicy.EXPLICIT))
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.Q.D", b'{"batch":3,"expires":60000000000}', reply=inbox)
    await nc.flush()
    [waiting] = ctl.consumer_state("Q", "D")["waiting"]
    assert (waiting["reply"], waiting["batch"]) == (inbox, 3)
    assert ctl.expire_requests("Q", "D") == 1
    status = await sub.next_msg(timeout=1)  # at once, not after a minute
    assert status.headers == {
        "Status": "408",
        "Description": "Request Timeout",
        "Nats-Pending-Messages": "3",
        "Nats-Pending-Bytes": "0",
    }
    assert ctl.consumer_state("Q", "D")["waiting"] == []
    await nc.close()


async def test_a_consumer_on_a_paused_mirror_sees_nothing_new(jsemu_server: Any) -> None:
    ctl = jsemu_server.control
    nc = await nats.connect(jsemu_server.url)
    js = nc.jetstream()
    await js.add_stream(name="O", subjects=["o"])
    await js.add_stream(name="M", mirror={"name": "O"})
    await js.publish("o", b"1")
    sub = await js.pull_subscribe("", durable="R", stream="M")
    assert [m.data for m in await sub.fetch(1, timeout=2)] == [b"1"]
    ctl.pause("M")
    await js.publish("o", b"2")
    with pytest.raises(nats.errors.TimeoutError):
        await sub.fetch(1, timeout=0.3)
    assert ctl.consumer_state("M", "R")["info"]["num_pending"] == 0
    ctl.resume("M")
    assert [m.data for m in await sub.fetch(1, timeout=2)] == [b"2"]
    await nc.close()


async def test_the_consumer_controls_over_jsemu_api(jsemu_server: Any) -> None:
    nc = await nats.connect(jsemu_server.url)
    js = nc.jetstream()
    await js.add_stream(name="A", subjects=["a"])
    await js.add_consumer("A", ConsumerConfig(durable_name="C1", ack_policy=AckPolicy.EXPLICIT))
    await js.add_consumer("A", ConsumerConfig(durable_name="C2", ack_policy=AckPolicy.EXPLICIT))

    async def call(method: str, **args: Any) -> dict[str, Any]:
        reply = await nc.request(f"$JSEMU.API.{method}", json.dumps(args).encode(), timeout=2)
        return dict(json.loads(reply.data))

    assert (await call("DROP_ACKS", stream="A", consumer="C1", count=2))["result"]["drop_acks"] == 2
    state = (await call("CONSUMER_STATE", stream="A", consumer="C1"))["result"]
    assert (state["info"]["name"], state["faults"]["drop_acks"]) == ("C1", 2)
    assert await call("SKIP_MESSAGES", stream="A") == {
        "ok": False,
        "error": "stream 'A' has consumers ['C1', 'C2']: name one",
    }
    assert (await call("LOSE_HEARTBEATS", stream="A", consumer="nope"))["error"] == "stream 'A' has no consumer 'nope'"
    assert (await call("DELAY_ACKS", stream="A", consumer="C2", seconds=-1))["ok"] is False
    assert (await call("SKIP_MESSAGES", stream="A", consumer="C2", count=0))["ok"] is False
    assert (await call("CLEAR_CONSUMER_FAULTS"))["ok"] is True
    assert (await call("CONSUMER_STATE", stream="A", consumer="C1"))["result"]["faults"] is None
    with pytest.raises(ControlError):
        jsemu_server.control.expire_requests("nope")
    await nc.close()
