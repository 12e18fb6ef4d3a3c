"""Atomic batch publish (``allow_atomic``, ``Nats-Batch-Id``/``-Sequence``/``-Commit``),
jsemu against nats-server 2.15.1: the empty acks of staged messages, the commit PubAck with
``batch`` and ``count``, the stored messages and their headers, each batch error in the
server's order, and that a failed batch stores nothing."""

from __future__ import annotations

from typing import Any

import pytest
from support.pair import Pair, encode_headers


def bh(batch: str, seq: int | str, commit: str | None = None, **extra: str) -> list[tuple[str, str]]:
    """The batch headers of one message (then any extra header)."""
    out = [("Nats-Batch-Id", batch), ("Nats-Batch-Sequence", str(seq))]
    if commit is not None:
        out.append(("Nats-Batch-Commit", commit))
    return out + [(k.replace("_", "-"), v) for k, v in extra.items()]


async def stored(pair: Pair, name: str = "S") -> Any:
    """Info, then every stored message (by sequence, headers included)."""
    info = await pair.info(name)
    for seq in range(1, info["state"]["last_seq"] + 2):
        await pair.get(name, seq=seq)
    return info


@pytest.mark.parametrize("storage", ["memory", "file"])
async def test_a_committed_batch(pair: Pair, storage: str) -> None:
    await pair.create("S", subjects=["a.>"], storage=storage, allow_atomic=True)
    await pair.same("a.1", "one", bh("b1", 1))
    await pair.same("a.2", "two", bh("b1", 2))
    await pair.info()  # nothing stored before the commit
    await pair.same("a.1", "three", bh("b1", 3, "1"))
    await pair.same("a.3", "plain")
    await stored(pair)


async def test_a_batch_of_one(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    await pair.same("a.1", "x", bh("solo", 1, "1"))
    await stored(pair)


async def test_end_of_batch_commit(pair: Pair) -> None:
    """``Nats-Batch-Commit: eob``: the commit message itself is not stored."""
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    await pair.same("a.1", "one", bh("e", 1))
    await pair.same("a.2", "two", bh("e", 2))
    await pair.same("a.9", "eob", bh("e", 3, "eob"))
    await pair.same("a.1", "x", bh("e1", 1, "eob"))  # eob as the only message
    await stored(pair)


async def test_published_without_replies(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    await pair.publish("a.1", "one", bh("q", 1), barrier=False)
    await pair.publish("a.2", "two", bh("q", 2), barrier=False)
    await pair.same("a.3", "three", bh("q", 3, "1"))
    await stored(pair)


BAD: list[tuple[str, list[tuple[str, str]]]] = [
    ("no sequence", [("Nats-Batch-Id", "b")]),
    ("empty sequence", [("Nats-Batch-Id", "b"), ("Nats-Batch-Sequence", "")]),
    ("bad sequence", bh("b", "x1")),
    ("sequence zero", bh("b", 0)),
    ("starts at 2", bh("b", 2)),
    ("starts at 2 commit", bh("b", 2, "1")),
    ("too large", bh("b", 1001)),
    ("too large eob", bh("b", 1001, "eob")),
    ("eob at 1001", bh("b", 1002, "eob")),
    ("commit invalid", bh("b", 1, "yes")),
    ("commit empty", bh("b", 1, "")),
    ("id 65", bh("x" * 65, 1, "1")),
    ("id 64", bh("x" * 64, 1, "1")),
    ("expected last msg id", bh("b", 1, "1", Nats_Expected_Last_Msg_Id="m")),
    ("expected stream", bh("b", 1, "1", Nats_Expected_Stream="T")),
    ("ttl disabled", bh("b", 1, "1", Nats_TTL="5s")),
    ("incr disabled", bh("b", 1, "1", Nats_Incr="1")),
    ("source header", bh("b", 1, "1", Nats_Stream_Source="X")),
    ("rollup not allowed", bh("b", 1, "1", Nats_Rollup="sub")),
    ("bad last seq", bh("b", 1, "1", Nats_Expected_Last_Sequence="7")),
    ("good last seq", bh("b", 1, "1", Nats_Expected_Last_Sequence="1")),
    ("subject seq", bh("b", 1, "1", Nats_Expected_Last_Subject_Sequence="1")),
    ("subject seq wrong", bh("b", 1, "1", Nats_Expected_Last_Subject_Sequence="0")),
    ("subject seq subject only", bh("b", 1, "1", Nats_Expected_Last_Subject_Sequence_Subject="a.1")),
    ("msg id seen", bh("b", 1, "1", Nats_Msg_Id="seen")),
    ("required api level", bh("b", 1, "1", Nats_Required_Api_Level="99")),
    ("required api level ok", bh("b", 1, "1", Nats_Required_Api_Level="1")),
    ("batch id empty", [("Nats-Batch-Id", ""), ("Nats-Batch-Sequence", "1")]),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
async def test_one_message_batches(pair: Pair, case: tuple[str, list[tuple[str, str]]]) -> None:
    """Each rule on a batch of one (after one stored message ``seen``), then the state."""
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    await pair.same("a.1", "first", {"Nats-Msg-Id": "seen"})
    await pair.same("a.1", "x", case[1])
    await pair.same("a.1", "y", bh("after", 1, "1"))
    await stored(pair)


async def test_a_failed_commit_stores_nothing(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True, allow_rollup_hdrs=True)
    await pair.same("a.1", "one", bh("f", 1, Nats_Msg_Id="m1"))
    await pair.same("a.2", "two", bh("f", 2, Nats_Msg_Id="m1"))  # the same id twice
    await pair.same("a.3", "three", bh("f", 3, "1"))
    await pair.same("a.1", "one", bh("g", 1, Nats_Expected_Last_Sequence="0"))
    await pair.same("a.2", "two", bh("g", 2, Nats_Expected_Last_Sequence="0"))  # only the first may
    await pair.same("a.2", "two", bh("g", 3, "1"))
    await pair.same("a.1", "one", bh("g2", 1))
    await pair.same("a.2", "two", bh("g2", 2, "1", Nats_Expected_Last_Sequence="1"))  # right, but not first
    await pair.same("a.1", "one", bh("h", 1))
    await pair.same("a.1", "two", bh("h", 2, "1", Nats_Expected_Last_Subject_Sequence="0"))
    await pair.same("a.1", "one", bh("r", 1))
    await pair.same("a.1", "two", bh("r", 2, "1", Nats_Rollup="sub"))
    await pair.same("a.2", "one", bh("r2", 1))
    await pair.same("a.1", "two", bh("r2", 2, "1", Nats_Rollup="all"))
    await pair.same("a.2", "one", bh("r3", 1, Nats_Rollup="all"))
    await pair.same("a.1", "two", bh("r3", 2, "1", Nats_Rollup="sub"))
    await pair.same("a.2", "one", bh("i", 1, Nats_Msg_Id="m9"))
    await pair.same("a.2", "one", bh("i", 2, "1"))
    await pair.same("a.2", "one", bh("j", 1, "1", Nats_Msg_Id="m9"))  # a duplicate of a stored id
    await stored(pair)


async def test_gaps_and_restarts(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    await pair.same("a.1", "one", bh("g", 1))
    await pair.same("a.1", "three", bh("g", 3))  # a gap abandons the batch
    await pair.same("a.1", "four", bh("g", 4, "1"))
    await pair.same("a.1", "one", bh("g", 1))  # the id can start again
    await pair.same("a.1", "one", bh("g", 1))  # ... but not twice at 1
    await pair.same("a.1", "one", bh("g", 1))
    await pair.same("a.1", "two", bh("g", 2, "1"))
    await pair.same("a.1", "one", bh("h", 1))
    await pair.same("a.1", "one", bh("h", 2, "bad"))  # an invalid commit drops the batch
    await pair.same("a.1", "one", bh("h", 2, "1"))  # the batch is gone: incomplete
    await stored(pair)


async def test_batches_interleave(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    await pair.same("a.1", "x1", bh("x", 1))
    await pair.same("a.2", "y1", bh("y", 1))
    await pair.same("a.3", "plain")
    await pair.same("a.1", "x2", bh("x", 2))
    await pair.same("a.2", "y2", bh("y", 2, "1"))
    await pair.same("a.1", "x3", bh("x", 3, "1", Nats_Expected_Last_Sequence="3"))
    await stored(pair)


async def test_counters_in_a_batch(pair: Pair) -> None:
    await pair.create("S", subjects=["c.>"], storage="memory", allow_atomic=True, allow_msg_counter=True)
    await pair.same("c.a", "", {"Nats-Incr": "5"})
    await pair.same("c.a", "", bh("c", 1, Nats_Incr="2"))
    await pair.same("c.b", "", bh("c", 2, Nats_Incr="1"))
    await pair.same("c.a", "", bh("c", 3, "1", Nats_Incr="-10"))
    await pair.same("c.a", "", bh("d", 1, "1"))  # increment missing
    await pair.same("c.a", "x", bh("d", 1, "1", Nats_Incr="1"))
    await stored(pair)


async def test_size_limit(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    for seq in range(1, 1000):  # staged without replies, so sent without waiting
        hdr = encode_headers(bh("big", seq))
        for side in (pair.emu, pair.real):
            side._send("a.1", None, b"m", hdr)
    await pair.same("a.1", "m", bh("big", 1000))
    await pair.same("a.1", "m", bh("big", 1001, "1"))
    await pair.same("a.1", "m", bh("big", 1002, "1"))
    await stored(pair)


async def test_inflight_per_stream(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    for k in range(50):
        await pair.same("a.1", "m", bh(f"b{k}", 1))
    await pair.same("a.1", "m", bh("b50", 1))
    await pair.same("a.1", "m", bh("b3", 2, "1"))  # one closes
    await pair.same("a.1", "m", bh("b50", 1))
    await pair.same("a.1", "m", bh("b51", 1))
    await pair.same("a.1", "m", bh("b51", 2, "1"))
    await stored(pair)


async def test_stream_rules_before_the_batch(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True, max_msg_size=8)
    await pair.same("a.1", "x" * 20, bh("b", 1))
    await pair.same("a.1", "x", bh("b", 1))
    cfg = (await pair.info())["config"]
    await pair.same("$JS.API.STREAM.UPDATE.S", {**cfg, "sealed": True})
    await pair.same("a.1", "x", bh("b", 2, "1"))
    await stored(pair)


async def test_disabling_drops_open_batches(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True)
    await pair.same("a.1", "x", bh("b", 1))
    cfg = (await pair.info())["config"]
    await pair.same("$JS.API.STREAM.UPDATE.S", {**cfg, "allow_atomic": False})
    await pair.same("a.1", "x", bh("b", 2, "1"))
    await pair.same("$JS.API.STREAM.UPDATE.S", {**cfg, "allow_atomic": True})
    await pair.same("a.1", "x", bh("b", 2, "1"))
    await pair.same("a.1", "x", bh("b", 1, "1"))
    await stored(pair)


async def test_config(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="file", allow_atomic=True)
    await pair.create("M", mirror={"name": "S"}, allow_atomic=True)
    await pair.create("P", subjects=["p.>"], allow_atomic=True, persist_mode="async")
    await pair.create("R", subjects=["r.>"], allow_atomic=True, replicas=3)
    await pair.create("T", subjects=["t.>"], allow_atomic=True, allow_msg_counter=True, allow_rollup_hdrs=True)
    await pair.same("$JS.API.STREAM.LIST", {})


async def test_subject_transform_and_dedup_window(pair: Pair) -> None:
    await pair.create(
        "S", subjects=["a.>"], storage="memory", allow_atomic=True, subject_transform={"src": "a.>", "dest": "t.>"}
    )
    await pair.same("a.1", "one", bh("t", 1, Nats_Msg_Id="d1"))
    await pair.same("a.2", "two", bh("t", 2, "1", Nats_Expected_Last_Subject_Sequence="0"))
    await pair.same("a.3", "plain", {"Nats-Msg-Id": "d1"})
    await stored(pair)


async def test_interest_retention_without_interest(pair: Pair) -> None:
    """No consumer: the batch's sequences are used up, nothing is kept (as for plain publishes)."""
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True, retention="interest")
    await pair.same("a.1", "one", bh("i", 1))
    await pair.same("a.2", "two", bh("i", 2, "1"))
    await pair.same(
        "$JS.API.CONSUMER.CREATE.S.C",
        {"stream_name": "S", "config": {"durable_name": "C", "filter_subject": "a.2", "ack_policy": "explicit"}},
    )
    await pair.same("a.1", "one", bh("j", 1))
    await pair.same("a.2", "two", bh("j", 2))
    await pair.same("a.2", "three", bh("j", 3, "eob"))
    await stored(pair)


async def test_republished_at_the_commit(pair: Pair) -> None:
    """Nothing is republished while staged; the commit republishes every stored message
    (with its ``Nats-Last-Sequence``), a rollup all resetting the subjects' last sequences."""
    for side in (pair.emu, pair.real):
        side.client.send(b"SUB out.> 77\r\n")
        assert [f for f in await side.client.exchange() if not f.startswith(b"INFO ")] == []
    await pair.create(
        "S", subjects=["a.>"], storage="memory", allow_atomic=True, allow_rollup_hdrs=True, republish={"dest": "out.>"}
    )
    await pair.same("a.1", "plain")
    await pair.same("a.1", "one", bh("p", 1))
    await pair.same("a.2", "two", bh("p", 2))
    await pair.same("a.1", "three", bh("p", 3, "1"))
    await pair.same("a.2", "r1", bh("q", 1, Nats_Rollup="all"))
    await pair.same("a.1", "r2", bh("q", 2, "1"))
    await pair.same("a.1", "r2", bh("x", 1, "1", Nats_Expected_Stream="T"))  # refused: nothing republished


async def test_discard_new_limits_cover_the_whole_batch(pair: Pair) -> None:
    await pair.create("S", subjects=["a.>"], storage="memory", allow_atomic=True, discard="new", max_msgs=3)
    await pair.same("a.1", "plain")
    await pair.same("a.1", "one", bh("m", 1))
    await pair.same("a.2", "two", bh("m", 2))
    await pair.same("a.3", "three", bh("m", 3, "1"))  # 4 > 3: nothing stored
    await pair.same("a.1", "one", bh("n", 1))
    await pair.same("a.2", "two", bh("n", 2, "1"))
    cfg = (await pair.info())["config"]
    await pair.same(
        "$JS.API.STREAM.UPDATE.S",
        {**cfg, "max_msgs": -1, "max_bytes": 400, "max_msgs_per_subject": 2, "discard_new_per_subject": True},
    )
    await pair.same("a.4", "x" * 50, bh("o", 1))
    await pair.same("a.4", "x" * 50, bh("o", 2, "1"))  # over max_bytes
    await pair.same("a.1", "x", bh("s", 1, "1"))  # a.1 holds 2 already
    await pair.same("a.5", "x", bh("t", 1))
    await pair.same("a.5", "x", bh("t", 2))
    await pair.same("a.5", "x", bh("t", 3, "1"))  # 3 on a.5 in one batch
    await stored(pair)
