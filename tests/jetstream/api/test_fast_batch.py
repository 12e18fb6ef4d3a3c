"""Fast batch publish (``allow_batched``, ADR-50; the batch in the reply subject
``<prefix>.<id>.<flow>.<gap>.<seq>.<op>.$FI``), jsemu against nats-server 2.15.1: every frame
each server sends to the batch's replies (flow acks, gaps, errors, the commit's PubAck),
byte for byte and in order, then the stored messages.

A run of publishes is sent without waiting, then a barrier (a publish the stream refuses,
answered after all earlier ones); the frames before its answer are compared. Batches left
open by one step stay open for the next (as on the binary they change the ack pace of later
batches), so the cases are order-sensitive on purpose.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.pair import Headers, Pair, Payload, encode_headers, encode_payload

from jetstream.api.test_atomic_batch import stored

Step = tuple[str, str, Payload, Headers]


def fb(batch: str, seq: int | str, op: int | str, flow: int | str = 10, gap: str = "fail") -> str:
    """A fast batch reply subject under the harness's inbox."""
    return f"_PAIR.fb.{batch}.{flow}.{gap}.{seq}.{op}.$FI"


def batch(name: str, count: int, op: int = 2, subject: str = "a.1", **reply: Any) -> list[Step]:
    """Messages 1..count of one batch, the last with ``op`` (2 commit, 3 eob, 1 none)."""
    steps: list[Step] = []
    for seq in range(1, count + 1):
        this = 0 if seq == 1 else 1
        if seq == count:
            this = op if count > 1 or op != 1 else 0
        steps.append((subject, fb(name, seq, this, **reply), f"{name}-{seq}", None))
    return steps


async def frames(pair: Pair, steps: list[Step], barrier: str = "a.1") -> list[str]:
    """Send ``steps`` on both servers, then a barrier; both servers' frames must agree."""

    async def run(side: Any) -> list[str]:
        for subject, reply, payload, headers in steps:
            side._send(subject, reply.encode(), encode_payload(payload), encode_headers(headers))
        got: list[str] = await side.barrier(barrier)
        return got

    emu, real = await asyncio.gather(run(pair.emu), run(pair.real))
    assert emu == real, "\n".join(itertools.chain(["jsemu:"], emu, ["real:"], real))
    return real


def h(**kv: str) -> dict[str, str]:
    return {k.replace("_", "-"): v for k, v in kv.items()}


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_a_committed_batch(pair: Pair, storage: str) -> None:
    info = await pair.create("S", subjects=["a.>"], storage=storage, allow_batched=True)
    assert info["config"]["allow_batched"] is True
    got = await frames(pair, batch("b1", 3))
    assert got == [
        'on _PAIR.fb.b1.10.fail.1.0.$FI: {"type":"ack","seq":0,"msgs":10}',
        'on _PAIR.fb.b1.10.fail.3.2.$FI: {"stream":"S","seq":3,"batch":"b1","count":3}',
    ]
    await frames(pair, batch("b2", 3, op=3))  # eob: the last message is not stored
    await frames(pair, batch("b3", 1))  # a commit as the first message: only the PubAck
    await stored(pair)


async def test_flow_acks_and_their_pace(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    await frames(pair, batch("f", 12, flow=2))
    await frames(pair, batch("g", 25, flow=600))  # alone: min(500, flow)
    # Two batches at once: the second starts at one ack per message and ramps up.
    steps = [("a.1", fb("c1", 1, 0), "x", None), ("a.1", fb("c2", 1, 0), "y", None)]
    for seq in range(2, 12):
        steps += [("a.1", fb("c1", seq, 1), "x", None), ("a.1", fb("c2", seq, 1), "y", None)]
    steps += [("a.1", fb("c1", 12, 2), "x", None), ("a.1", fb("c2", 12, 3), "", None)]
    await frames(pair, steps)
    await stored(pair)


async def test_gaps(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    fail = [("a.1", fb("g1", 1, 0), "1", None), ("a.1", fb("g1", 3, 1), "3", None), ("a.1", fb("g1", 4, 2), "4", None)]
    await frames(pair, fail)  # a gap ends the batch, the rest is unknown
    ok = [("a.1", fb("g2", s, o, gap="ok"), str(s), None) for s, o in ((1, 0), (3, 1), (4, 2))]
    await frames(pair, ok)  # reported, then carried on
    for gap in ("fail", "ok"):  # a repeated sequence ends the batch in both modes
        again = [(1, 0), (2, 1), (2, 1), (3, 2)]
        await frames(pair, [("a.1", fb("r" + gap, s, o, gap=gap), str(s), None) for s, o in again])
    await stored(pair)


async def test_pings(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    await frames(pair, [("a.1", fb("p0", 1, 4), "", None)])  # unknown, even at 1
    await frames(pair, [("a.1", fb("p1", 1, 0), "1", None), ("a.1", fb("p1", 1, 4), "", None)])
    await frames(pair, [("a.1", fb("p1", 5, 4), "", None)])  # beyond: a gap, and the end
    steps = [("a.1", fb("p2", 1, 0, gap="ok"), "1", None), ("a.1", fb("p2", 5, 4, gap="ok"), "", None)]
    await frames(pair, [*steps, ("a.1", fb("p2", 6, 2, gap="ok"), "6", None)])
    await stored(pair)


ODD_REPLIES = [
    "_PAIR.x.$FI",
    "_PAIR.$FI",
    fb("o", 1, 9),
    fb("o", 1, -1),
    fb("o", 1, 0, gap="maybe"),
    fb("o", 2, 0),
    fb("o", 1, 1),
    fb("o", 1, 3),
    fb("o", 0, 2),
    fb("o", 18446744073709551615, 2),
    fb("o", 99999999999999999999, 2),
    fb("x" * 65, 1, 2),
    fb("x" * 64, 1, 2),
    fb("q1", "01", 2),
    fb("q2", 1, "00"),
    fb("q3", 1, 2, flow=-5),
    fb("q4", 1, 0, flow="x"),
    fb("q5", 1, 0, flow=0),
    fb("q6", 1, 0, flow=70000),
    fb('q"7', 1, 2),
    "_PAIR.$FI.10.fail.1.2.$FI",
    "_PAIR.fb.s.10.fail.1.2.$FIX",
]


async def test_reply_patterns(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    for reply in ODD_REPLIES:
        await frames(pair, [("a.1", reply, "m", None)])
    await stored(pair)


async def test_message_ids(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    dup = h(Nats_Msg_Id="d")
    await frames(pair, [("a.1", fb("m1", s, o), str(s), dup) for s, o in ((1, 0), (2, 1), (3, 2))])
    await frames(pair, [("a.1", fb("m2", 1, 0), "1", dup), ("a.1", fb("m2", 2, 2), "2", None)])
    await frames(pair, [("a.1", fb("m3", 1, 2), "1", dup)])  # a duplicate first commit
    await frames(pair, [("a.1", fb("m4", 1, 2, gap="ok"), "1", dup)])
    await frames(pair, [("a.1", fb("m5", 1, 0), "1", None), ("a.1", fb("m5", 2, 2), "2", dup)])
    await stored(pair)


async def test_refused_messages(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    bad_seq = h(Nats_Expected_Last_Sequence="1")
    await frames(pair, [("a.1", fb("e1", 1, 0), "1", None), ("a.1", fb("e1", 2, 1), "2", bad_seq)])
    await frames(pair, [("a.1", fb("e1", 3, 2), "3", None)])
    wrong = h(Nats_Expected_Stream="T")
    ok = [("a.1", fb("e2", s, o, gap="ok"), str(s), wrong if s == 2 else None) for s, o in ((1, 0), (2, 1), (3, 2))]
    await frames(pair, ok)
    await frames(pair, [("a.1", fb("e3", 1, 2), "1", wrong)])
    await frames(pair, [("a.1", fb("e4", 1, 0), "1", wrong)])
    await frames(pair, [("a.1", fb("e5", 1, 0), "1", None), ("a.1", fb("e5", 2, 2), "2", wrong)])
    await frames(pair, [("a.1", fb("e6", 1, 0), "1", h(Nats_TTL="5s"))])
    await frames(pair, [("a.1", fb("e7", 1, 0), "1", h(Nats_Required_Api_Level="99"))])
    await frames(pair, [("a.1", fb("e8", 1, 2), "1", h(Nats_Required_Api_Level="1"))])
    await stored(pair)


async def test_expected_last_msg_id_leaves_the_message_pending(pair: Pair) -> None:
    """Refused after its checks, the message stays pending: later acks and the commit's
    PubAck come as if it were still on its way (as 2.15.1)."""
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    steps = [("a.1", fb("x1", 1, 0, flow=1), "1", h(Nats_Expected_Last_Msg_Id="zz"))]
    steps += [("a.1", fb("x1", s, 1, flow=1), str(s), None) for s in range(2, 5)]
    await frames(pair, [*steps, ("a.1", fb("x1", 5, 2, flow=1), "5", None), ("a.1", fb("x1", 6, 1), "6", None)])
    await frames(pair, batch("after", 3))
    await stored(pair)


async def test_headers_stored_as_sent(pair: Pair) -> None:
    """The batch is in the reply: atomic batch headers on a fast message are only headers."""
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True, allow_atomic=True)
    atomic = h(Nats_Batch_Id="q", Nats_Batch_Sequence="1")
    await frames(pair, [("a.1", fb("h1", 1, 0), "1", atomic), ("a.1", fb("h1", 2, 2), "2", h(X="y"))])
    await stored(pair)


async def test_streams_without_it(pair: Pair) -> None:
    await pair.create("T", subjects=["b.>"], storage="memory", allow_atomic=True)
    await frames(pair, [("b.1", fb("n", 1, 0), "1", None)], barrier="b.1")
    await pair.create("N", subjects=["n.>"], storage="memory", allow_batched=True, no_ack=True)
    steps = [("n.1", fb("q1", 1, 0), "1", None), ("n.1", fb("q1", 2, 2), "2", None), ("n.1", fb("q2", 2, 2), "2", None)]
    steps.append(("n.1", fb("q3", 1, 2), "3", h(Nats_Expected_Stream="X")))
    await frames(pair, steps, barrier="n.1")
    await pair.create("M", subjects=["m.>"], storage="memory", allow_batched=True, max_msg_size=4)
    await frames(pair, [("m.1", fb("big", 1, 0), "12345", None)], barrier="m.1")
    await pair.same("$JS.API.STREAM.UPDATE.N", {"name": "N", "subjects": ["n.>"], "storage": "memory", "sealed": True})
    await frames(pair, [("n.1", fb("s", 1, 0), "1", None)], barrier="n.1")


async def test_counters_and_interest(pair: Pair) -> None:
    await pair.create("C", subjects=["c.>"], storage="memory", allow_batched=True, allow_msg_counter=True)
    incr = h(Nats_Incr="5")
    steps = [("c.1", fb("k", s, o), "", incr if s != 2 else None) for s, o in ((1, 0), (2, 1), (3, 2))]
    await frames(pair, steps, barrier="c.1")
    await stored(pair, "C")
    await pair.create("I", subjects=["i.>"], storage="memory", allow_batched=True, retention="interest")
    await frames(pair, batch("i", 3, subject="i.1"), barrier="i.1")
    await stored(pair, "I")


async def test_config(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="file", allow_batched=True, allow_atomic=True)
    await pair.info("S")
    await pair.same("$JS.API.STREAM.CREATE.M", {"name": "M", "mirror": {"name": "S"}, "allow_batched": True})
    base = {"name": "S", "subjects": ["a.>"], "storage": "file"}
    await frames(pair, [("a.1", fb("u", 1, 0), "1", None)])
    await pair.same("$JS.API.STREAM.UPDATE.S", {**base, "allow_atomic": True})  # off: open batches go
    await frames(pair, [("a.1", fb("u", 2, 2), "2", None)])
    await pair.same("$JS.API.STREAM.UPDATE.S", {**base, "allow_batched": True})
    await frames(pair, [("a.1", fb("u", 2, 2), "2", None), ("a.1", fb("u", 1, 2), "1", None)])
    await pair.info("S")


# --- random batches -----------------------------------------------------------------------

_HEADERS: list[Headers] = [None, h(Nats_Msg_Id="i1"), h(Nats_Msg_Id="i2"), h(Nats_Expected_Stream="X")]


@st.composite
def _steps(draw: st.DrawFn) -> list[Step]:
    """One or two batches interleaved: mostly in order, with gaps, repeats, pings and a
    commit (or eob) somewhere, under random flow and gap modes."""
    modes = {name: (draw(st.sampled_from([1, 2, 3, 10])), draw(st.sampled_from(["fail", "ok"]))) for name in "AB"}
    next_seq = {"A": 1, "B": 1}
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, 14))):
        name = draw(st.sampled_from("AB"))
        flow, gap = modes[name]
        seq = next_seq[name] + draw(st.sampled_from([0, 0, 0, 0, 1, -1]))
        seq = max(seq, 1)
        op = draw(st.sampled_from([1, 1, 1, 1, 2, 3, 4])) if seq > 1 else draw(st.sampled_from([0, 0, 2, 4]))
        headers = draw(st.sampled_from(_HEADERS))
        steps.append(("a.1", fb(name, seq, op, flow=flow, gap=gap), f"{name}{seq}", headers))
        next_seq[name] = seq + 1
    return steps


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(_steps(), min_size=1, max_size=3))
async def test_random_batches(pair: Pair, runs: list[list[Step]]) -> None:
    """Random runs against both servers, on a fresh stream each example: every frame, then
    the stream's state."""
    await pair.same("$JS.API.STREAM.DELETE.S")
    await pair.create("S", subjects=["a.>"], storage="memory", allow_batched=True)
    for steps in runs:
        await frames(pair, steps)
    await pair.info("S")
    await pair.get("S", last_by_subj="a.1")


async def test_a_refusal_follows_the_messages_own_gap_mode(pair: Pair) -> None:
    """A batch opened with gap mode ``ok`` whose later message says ``fail``: a refused message
    ends the batch with its PubAck (the message's mode decides, found by the generator above)."""
    await pair.create("G", subjects=["g.>"], storage="memory", allow_batched=True)
    bad = h(Nats_Expected_Stream="X")
    steps = [("g.1", fb("m", 1, 0, gap="ok"), "1", None), ("g.1", fb("m", 2, 1, gap="fail"), "2", None)]
    steps += [("g.1", fb("m", 3, 1, gap="fail"), "3", bad), ("g.1", fb("m", 4, 1, gap="ok"), "4", None)]
    await frames(pair, steps, barrier="g.1")
    steps = [("g.1", fb("n", 1, 0, gap="fail"), "1", None), ("g.1", fb("n", 2, 1, gap="ok"), "2", bad)]
    steps += [("g.1", fb("n", 3, 1, gap="ok"), "3", None), ("g.1", fb("n", 4, 2, gap="ok"), "4", None)]
    await frames(pair, steps, barrier="g.1")
    await stored(pair, "G")


async def test_stream_rules_per_message(pair: Pair) -> None:
    """Each message meets the stream's rules alone: discard new, rollups, subject transforms
    with expected subject sequences (checked on the transformed subject)."""
    await pair.create("D", subjects=["d.>"], storage="memory", allow_batched=True, max_msgs=2, discard="new")
    for gap in ("fail", "ok"):
        steps = [("d.1", fb("d" + gap, s, o, gap=gap), str(s), None) for s, o in ((1, 0), (2, 1), (3, 1), (4, 2))]
        await frames(pair, steps, barrier="d.1")
    await stored(pair, "D")
    transform = {"src": "t.>", "dest": "u.>"}
    await pair.create(
        "T", subjects=["t.>"], storage="file", allow_batched=True, allow_rollup_hdrs=True, subject_transform=transform
    )
    await pair.publish("t.1", "first")
    subj_seq = h(Nats_Expected_Last_Subject_Sequence="1")
    await frames(pair, [("t.1", fb("t", 1, 0), "1", subj_seq), ("t.1", fb("t", 2, 1), "2", subj_seq)], barrier="t.1")
    steps = [("t.1", fb("r", 1, 0, gap="ok"), "1", h(Nats_Rollup="sub")), ("t.2", fb("r", 2, 1, gap="ok"), "2", None)]
    steps += [
        ("t.2", fb("r", 3, 1, gap="ok"), "3", h(Nats_Rollup="all")),
        ("t.2", fb("r", 4, 2, gap="ok"), "4", subj_seq),
    ]
    await frames(pair, steps, barrier="t.1")
    await stored(pair, "T")
