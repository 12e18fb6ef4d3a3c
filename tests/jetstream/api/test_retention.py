"""Interest and work-queue retention, side by side with nats-server: which messages a stream
keeps as its consumers come, ack and go (the stream info after each step), and the
work-queue rules for consumers (errors 10098-10101).

Every ``pair.info`` compares the whole stream info (state: messages, bytes, first and last
sequence and time, deleted count, consumer count) with the real server's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from support.pair import Pair

from .test_consumers import CREATE, NEXT, _req, ack, pull_frames

CINFO = "$JS.API.CONSUMER.INFO.S."


async def _settled_info(pair: Pair) -> Any:
    """The stream info once both servers handled the acks just sent (acks have no reply)."""
    await asyncio.sleep(0.05)
    return await pair.info("S")


async def _pending_counted(pair: Pair, consumer: str) -> None:
    """Until nats-server counts as many pending messages for ``consumer`` as jsemu: it counts
    a stored message for its consumers after the store, in their own goroutines, and under load
    a pull right after the publishes once went out with each ack reply's pending one too low.
    jsemu counts at the store."""
    for _ in range(100):
        emu, real = await pair.each(f"{CINFO}{consumer}")
        if emu["num_pending"] == real["num_pending"]:
            return
        await asyncio.sleep(0.02)


async def _pull(pair: Pair, consumer: str, n: int) -> tuple[list[str], list[str]]:
    await _pending_counted(pair, consumer)
    e, r = await pull_frames(pair, f"{NEXT}.{consumer}", {"batch": n, "no_wait": True}, n)
    assert e.frames == r.frames
    return e.acks, r.acks


async def test_interest_without_consumers_keeps_nothing(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], retention="interest")
    for i in range(3):
        await pair.same(f"s.{i}", f"m{i}")
    await pair.info("S")
    await pair.same(f"{CREATE}.A", _req({"name": "A", "ack_policy": "explicit", "filter_subject": "s.1"}))
    for i in range(3):  # only s.1 has interest
        await pair.same(f"s.{i}", f"n{i}")
    await pair.info("S")


async def test_interest_explicit_two_consumers(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], retention="interest")
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit"}))
    await pair.same(f"{CREATE}.B", _req({"durable_name": "B", "ack_policy": "explicit", "filter_subject": "s.1"}))
    for subject in ["s.1", "s.2", "s.1", "s.2", "s.1"]:
        await pair.same(subject, "x")
    await pair.info("S")
    ea, ra = await _pull(pair, "A", 5)
    eb, rb = await _pull(pair, "B", 3)
    # A acks everything but the last: only s.2 messages (B does not want them) go
    for i in range(4):
        await ack(pair, ea[i], ra[i], "+ACK", reply=True)
    await _settled_info(pair)
    await pair.same(f"{CINFO}A")
    # B acks its second (seq 3, acked by A): it goes; its first stays pending for B
    await ack(pair, eb[1], rb[1], "+ACK", reply=True)
    await _settled_info(pair)
    await ack(pair, eb[0], rb[0], "+TERM", reply=True)
    await _settled_info(pair)
    await pair.same(f"{CINFO}B")
    # seq 5: acked by B first, then A
    await ack(pair, eb[2], rb[2], "+ACK")
    await _settled_info(pair)
    await ack(pair, ea[4], ra[4], "+ACK")
    await _settled_info(pair)
    await pair.same(f"{CINFO}A")


async def test_interest_ack_none_and_ack_all(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], retention="interest")
    await pair.same(f"{CREATE}.N", _req({"durable_name": "N"}))
    await pair.same(f"{CREATE}.L", _req({"durable_name": "L", "ack_policy": "all"}))
    for i in range(5):
        await pair.same(f"s.{i}", "x")
    await _pull(pair, "N", 3)  # delivered counts as acked for N
    await _settled_info(pair)
    el, rl = await _pull(pair, "L", 5)
    await ack(pair, el[3], rl[3], "+ACK", reply=True)  # all up to seq 4
    await _settled_info(pair)
    await pair.same(f"{CINFO}L")
    await _pull(pair, "N", 2)
    await _settled_info(pair)
    await ack(pair, el[4], rl[4], "+ACK")
    await _settled_info(pair)


async def test_interest_consumer_delete_releases(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], retention="interest")
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit"}))
    await pair.same(f"{CREATE}.B", _req({"durable_name": "B", "ack_policy": "explicit", "filter_subject": "s.1"}))
    for subject in ["s.1", "s.2", "s.1", "s.2"]:
        await pair.same(subject, "x")
    ea, ra = await _pull(pair, "A", 4)
    await ack(pair, ea[0], ra[0], "+ACK", reply=True)
    await ack(pair, ea[1], ra[1], "+ACK", reply=True)
    await _settled_info(pair)
    # B goes: seq 1 (acked by A) goes with it, seq 3 and 4 stay for A
    await pair.same("$JS.API.CONSUMER.DELETE.S.B")
    await _settled_info(pair)
    # a new consumer that starts now, then the last one goes: the stream is emptied
    await pair.same(f"{CREATE}.C", _req({"durable_name": "C", "ack_policy": "explicit", "deliver_policy": "new"}))
    await pair.same("$JS.API.CONSUMER.DELETE.S.A")
    await _settled_info(pair)
    await pair.same("s.1", "y")
    await pair.same("$JS.API.CONSUMER.DELETE.S.C")
    await _settled_info(pair)


async def test_interest_purge_and_delete(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], retention="interest")
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit"}))
    await pair.same(f"{CREATE}.B", _req({"durable_name": "B", "ack_policy": "explicit"}))
    for i in range(6):
        await pair.same(f"s.{i % 2}", "x")
    ea, ra = await _pull(pair, "A", 6)
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 2})
    await pair.same("$JS.API.STREAM.PURGE.S", {"filter": "s.0", "seq": 5})
    await _settled_info(pair)
    await pair.same(f"{CINFO}A")
    for i in (3, 5):
        await ack(pair, ea[i], ra[i], "+ACK", reply=True)
    await _settled_info(pair)
    eb, rb = await _pull(pair, "B", 6)
    assert len(eb) == 3
    for i in range(3):
        await ack(pair, eb[i], rb[i], "+ACK", reply=True)
    await _settled_info(pair)
    await pair.same(f"{CINFO}B")


async def test_work_queue_acks_remove(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], retention="workqueue")
    for i in range(4):  # kept without consumers
        await pair.same(f"s.{i % 2}", "x")
    await pair.info("S")
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit", "filter_subject": "s.0"}))
    await pair.same(f"{CREATE}.B", _req({"durable_name": "B", "ack_policy": "explicit", "filter_subject": "s.1"}))
    ea, ra = await _pull(pair, "A", 2)
    eb, rb = await _pull(pair, "B", 1)
    await ack(pair, ea[1], ra[1], "+ACK", reply=True)
    await ack(pair, eb[0], rb[0], "+TERM", reply=True)
    await ack(pair, ea[0], ra[0], "-NAK")
    await _settled_info(pair)
    await pair.same(f"{CINFO}A")
    await pair.same("$JS.API.CONSUMER.DELETE.S.B")  # nothing goes with a work-queue consumer
    await _settled_info(pair)


WQ_CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("N1", {"ack_policy": "none"}),
    ("N2", {"ack_policy": "all"}),
    ("N3", {"ack_policy": "explicit", "deliver_policy": "new"}),
    ("N4", {"ack_policy": "explicit", "deliver_policy": "last", "filter_subject": "s.9"}),
    ("A", {"ack_policy": "explicit", "filter_subject": "s.a.*"}),
    ("U", {"ack_policy": "explicit"}),  # a second, unfiltered
    ("O1", {"ack_policy": "explicit", "filter_subject": "s.a.b"}),  # subset of s.a.*
    ("O2", {"ack_policy": "explicit", "filter_subject": "s.>"}),  # superset
    ("O3", {"ack_policy": "explicit", "filter_subjects": ["s.c", "s.a.x"]}),
    ("O4", {"ack_policy": "explicit", "filter_subject": "s.*.b"}),  # overlaps, neither a subset
    ("P1", {"ack_policy": "explicit", "filter_subject": "s.*.c.*"}),
    ("P2", {"ack_policy": "explicit", "filter_subjects": ["s.c", "s.d"]}),
    ("P3", {"ack_policy": "explicit", "filter_subject": "s.c", "deliver_policy": "new"}),
    ("A", {"ack_policy": "explicit", "filter_subject": "s.a.*", "max_deliver": 3}),  # update of itself
    ("P4", {"ack_policy": "explicit", "filter_subject": "s.e", "deliver_subject": "dl"}),  # push is fine
]


async def test_work_queue_consumer_rules(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], retention="workqueue")
    for name, cfg in WQ_CONFIGS:
        await pair.same(f"{CREATE}.{name}", _req({"durable_name": name, **cfg}))
    await pair.same("$JS.API.CONSUMER.NAMES.S")
    # a lone unfiltered consumer is fine, a second one (filtered or not) is not
    await pair.create("W", subjects=["w.>"], retention="workqueue")
    for name, cfg in [("U", {}), ("V", {}), ("F", {"filter_subject": "w.1"})]:
        body = {"stream_name": "W", "config": {"durable_name": name, "ack_policy": "explicit", **cfg}}
        await pair.same(f"$JS.API.CONSUMER.CREATE.W.{name}", body)


async def test_update_to_interest_with_consumers(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit", "filter_subject": "s.1"}))
    await pair.same(f"{CREATE}.B", _req({"durable_name": "B", "ack_policy": "explicit"}))
    for i in range(6):
        await pair.same(f"s.{i % 3}", "x")
    ea, ra = await _pull(pair, "A", 2)
    await ack(pair, ea[0], ra[0], "+ACK", reply=True)
    eb, rb = await _pull(pair, "B", 3)
    for i in range(3):
        await ack(pair, eb[i], rb[i], "+ACK", reply=True)
    await pair.same("$JS.API.STREAM.UPDATE.S", {"name": "S", "subjects": ["s.>"], "retention": "interest"})
    await _settled_info(pair)
    await ack(pair, ea[1], ra[1], "+ACK", reply=True)
    await _settled_info(pair)


async def test_interest_keeps_what_reached_max_deliver(pair: Pair) -> None:
    """A message D dropped at ``max_deliver`` stays while D tracks its redelivery count
    (``needAck`` looks at ``rdc``), even once the other consumer acked it."""
    await pair.create("S", subjects=["s.>"], retention="interest")
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit", "max_deliver": 2}))
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit"}))
    for i in range(3):
        await pair.same(f"s.{i}", "x")
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 2, "no_wait": True}, 2)
    await ack(pair, e.acks[0], r.acks[0], "-NAK", reply=True)
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    await ack(pair, e.acks[0], r.acks[0], "-NAK", reply=True)
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 2, "no_wait": True}, 2)
    assert e.frames == r.frames
    for i in range(len(e.acks)):
        await ack(pair, e.acks[i], r.acks[i], "+ACK", reply=True)
    ea, ra = await _pull(pair, "A", 3)
    for i in range(3):
        await ack(pair, ea[i], ra[i], "+ACK", reply=True)
    await _settled_info(pair)
    await pair.same(f"{CINFO}D")


async def test_interest_purge_keeps_the_consumers_own_floor(pair: Pair) -> None:
    """A filtered purge moves an ack-all consumer's stored ack floor (the info) past a message
    it still has pending; its own floor stays, so that message stays in the stream."""
    await pair.create("S", subjects=["s.>"], retention="interest")
    await pair.same(f"{CREATE}.C1", _req({"durable_name": "C1", "ack_policy": "explicit"}))
    await pair.same(f"{CREATE}.C2", _req({"durable_name": "C2", "ack_policy": "all"}))
    await pair.same("s.b", "x")
    await pair.same("s.a", "x")
    e, r = await _pull(pair, "C2", 2)
    await pair.same("$JS.API.STREAM.PURGE.S", {"filter": "s.a"})
    await pair.same("$JS.API.CONSUMER.INFO.S.C2")
    await pair.same("$JS.API.CONSUMER.DELETE.S.C1")
    await _settled_info(pair)
    await ack(pair, e[0], r[0], "+ACK", reply=True)  # below the stored floor, above its own
    await _settled_info(pair)
    await pair.same("$JS.API.CONSUMER.INFO.S.C2")
