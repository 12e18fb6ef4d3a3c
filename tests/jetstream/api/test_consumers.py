"""Consumers, side by side with nats-server: the consumer API replies and errors, and the
exact frames a pull request gets (messages with their ack subjects, then statuses), plus
acks, naks, terms and the consumer info numbers they leave behind.

Ack subjects carry the message's timestamp in nanoseconds; it is the only token normalised.
Consumers are named (a legacy ephemeral's name is random) and every test runs well within
the 5 s inactive threshold of ephemerals.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from support.pair import Pair, Side, encode_payload
from support.rawclient import RawClient

S = "$JS.API.STREAM.CREATE.S"
_ACK_TS = re.compile(r"(\$JS\.ACK\.[^. ]+\.[^. ]+\.\d+\.\d+\.\d+\.)\d+(\.\d+)")
_CTRL = re.compile(rb"^(MSG|HMSG) ([^\r\n]*)\r\n")
_counter = [0]


class Pulled:
    """What one side sent back for a pull request: normalised frames and raw ack subjects."""

    def __init__(self) -> None:
        self.frames: list[str] = []
        self.acks: list[str] = []


async def _pull_side(side: Side, subject: str, payload: bytes, inbox: bytes, n: int, timeout: float) -> Pulled:
    out = Pulled()
    side._send(subject, inbox, payload, None)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(out.frames) < n:
        left = deadline - loop.time()
        if left <= 0:
            break
        frame = await side.client.next_frame(left)
        if frame is None:
            break
        m = _CTRL.match(frame)
        if m is None:
            if frame == b"PING\r\n":
                side.client.send(b"PONG\r\n")
            continue
        args = m.group(2).split()
        hmsg = m.group(1) == b"HMSG"
        if len(args) == (5 if hmsg else 4):
            out.acks.append(args[2].decode())
        text = args[0].decode() + " " + side.normalise(frame)
        out.frames.append(_ACK_TS.sub(r"\1<ts>\2", text))
    return out


async def pull_frames(pair: Pair, subject: str, payload: Any, n: int, timeout: float = 1.0) -> tuple[Pulled, Pulled]:
    """Send the same pull request to both; collect up to ``n`` frames from each (or what came
    within ``timeout``)."""
    _counter[0] += 1
    inbox = b"_PAIR.pull%d" % _counter[0]
    data = encode_payload(payload)
    emu, real = await asyncio.gather(
        _pull_side(pair.emu, subject, data, inbox, n, timeout), _pull_side(pair.real, subject, data, inbox, n, timeout)
    )
    return emu, real


async def ack(pair: Pair, emu_subject: str, real_subject: str, body: str, reply: bool = False) -> None:
    """Acknowledge on both sides; with ``reply`` both must answer the same (or not at all)."""
    data = body.encode()
    if reply:
        got = await asyncio.gather(
            pair.emu.request(emu_subject, data, None, 0.5), pair.real.request(real_subject, data, None, 0.5)
        )
        assert got[0] == got[1], (body, got)
    else:
        await asyncio.gather(pair.emu.publish(emu_subject, data, None), pair.real.publish(real_subject, data, None))


CREATE = "$JS.API.CONSUMER.CREATE.S"
NEXT = "$JS.API.CONSUMER.MSG.NEXT.S"


def _req(cfg: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"stream_name": "S", "config": cfg, **extra}


async def _stream_with(pair: Pair, n: int = 3, subjects: list[str] | None = None) -> None:
    await pair.create("S", subjects=["s.>"])
    for i in range(n):
        subject = (subjects or [f"s.{i}" for i in range(n)])[i]
        await pair.publish(subject, f"m{i}")


async def test_create_forms_info_names_list_delete(pair: Pair) -> None:
    await _stream_with(pair)
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}))
    await pair.same(f"{CREATE}.N", _req({"name": "N"}))
    await pair.same(f"{CREATE}.F.s.1", _req({"name": "F", "filter_subject": "s.1"}))
    await pair.same("$JS.API.CONSUMER.DURABLE.CREATE.S.DD", _req({"durable_name": "DD"}))
    await pair.same(f"{CREATE}.M", _req({"name": "M", "filter_subjects": ["s.0", "s.2"], "ack_policy": "all"}))
    # action create: the same config is fine, a different one is not; update needs it to exist
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}, action="create"))
    await pair.same(
        f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit", "max_deliver": 5}, action="create")
    )
    await pair.same(
        f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit", "max_deliver": 5}, action="update")
    )
    await pair.same(f"{CREATE}.X", _req({"durable_name": "X"}, action="update"))
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "all"}))  # can not change
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await pair.same("$JS.API.CONSUMER.INFO.S.nope")
    await pair.same("$JS.API.CONSUMER.INFO.T.D")
    await pair.same("$JS.API.CONSUMER.NAMES.S")
    await pair.same("$JS.API.CONSUMER.LIST.S", {"offset": 1})
    await pair.same("$JS.API.CONSUMER.LIST.S", {"offset": 9})
    await pair.info("S")
    await pair.same("$JS.API.CONSUMER.DELETE.S.N")
    await pair.same("$JS.API.CONSUMER.DELETE.S.N")
    await pair.same("$JS.API.INFO")
    # deleting the stream deletes its consumers
    await pair.same("$JS.API.STREAM.DELETE.S")
    await pair.settle()
    await pair.create("S", subjects=["s.>"])
    await pair.same("$JS.API.CONSUMER.NAMES.S")
    await pair.same("$JS.API.INFO")


BAD_CONFIGS: list[tuple[str, Any]] = [
    (f"{CREATE}.C", _req({"name": "C", "ack_wait": -1})),
    (f"{CREATE}.C", _req({"name": "C", "deliver_policy": "by_start_sequence"})),
    (f"{CREATE}.C", _req({"name": "C", "opt_start_seq": 3})),
    (f"{CREATE}.C", _req({"name": "C", "deliver_policy": "last_per_subject"})),
    (f"{CREATE}.C", _req({"name": "C", "deliver_policy": "nope"})),
    (f"{CREATE}.C", _req({"name": "C", "ack_policy": "nope"})),
    (f"{CREATE}.C", _req({"name": "C", "filter_subject": "a", "filter_subjects": ["b"]})),
    (f"{CREATE}.C", _req({"name": "C", "filter_subjects": ["s.>", "s.1"]})),
    (f"{CREATE}.C", _req({"name": "C", "filter_subjects": [""]})),
    (f"{CREATE}.C", _req({"name": "C", "idle_heartbeat": 1_000_000_000})),
    (f"{CREATE}.C", _req({"name": "C", "rate_limit_bps": 10})),
    (f"{CREATE}.C", _req({"name": "C", "max_expires": 10})),
    (f"{CREATE}.C", _req({"name": "C", "durable_name": "D"})),
    (f"{CREATE}.C", _req({"name": "C", "num_replicas": 3})),
    (f"{CREATE}.C", _req({"name": "C", "description": "x" * 5000})),
    (f"{CREATE}.C", {"stream_name": "T", "config": {"name": "C"}}),
    (f"{CREATE}.C", {"stream_name": "S", "config": {"name": "C"}, "action": "nope"}),
    (f"{CREATE}.C", {"stream_name": "S", "config": {"name": "C", "bogus": 1}}),
    (f"{CREATE}.C.s.1", _req({"name": "C", "filter_subject": "s.2"})),
    (f"{CREATE}.C.s.1", _req({"name": "C", "filter_subjects": ["s.1"]})),
    (f"{CREATE}.C", _req({"durable_name": "D"})),
    (CREATE, _req({"durable_name": "D"})),
    ("$JS.API.CONSUMER.DURABLE.CREATE.S.D", _req({"name": "D"})),
    ("$JS.API.CONSUMER.DURABLE.CREATE.S.D", _req({"durable_name": "E"})),
    ("$JS.API.CONSUMER.CREATE.T.C", _req({"name": "C"})),
    ("$JS.API.CONSUMER.CREATE.NO.C", {"stream_name": "NO", "config": {"name": "C"}}),
    (f"{CREATE}.a\\b", _req({"name": "a\\b"})),
]


async def test_named_ephemeral_update_keeps_the_default_inactive_threshold(pair: Pair) -> None:
    """nats-server 2.15.1: an update of a named ephemeral without ``inactive_threshold`` echoes the 5 s
    default again, while ``action: create`` compares the request *before* that default (so the same
    request again is 10148, and only one naming 5 s passes)."""
    await _stream_with(pair, 0)
    base = {"name": "E", "ack_policy": "explicit"}
    await pair.same(f"{CREATE}.E", _req(base))
    await pair.same(f"{CREATE}.E", _req(base, action="create"))
    await pair.same(f"{CREATE}.E", _req({**base, "inactive_threshold": 5_000_000_000}, action="create"))
    await pair.same(f"{CREATE}.E", _req({**base, "max_deliver": 5}))
    await pair.same(f"{CREATE}.E", _req({**base, "max_deliver": 5}, action="create"))
    await pair.same("$JS.API.CONSUMER.INFO.S.E")


async def test_config_errors(pair: Pair) -> None:
    await _stream_with(pair, 1)
    for subject, payload in BAD_CONFIGS:
        await pair.same(subject, payload)
    await pair.same("$JS.API.INFO")  # the API error counter agrees too


async def test_defaults_echoed(pair: Pair) -> None:
    await _stream_with(pair, 0)
    await pair.create(
        "L", subjects=["l.>"], consumer_limits={"max_ack_pending": 50, "inactive_threshold": 60_000_000_000}
    )
    await pair.same(f"{CREATE}.A", _req({"name": "A", "ack_policy": "all", "max_deliver": -7, "max_ack_pending": -3}))
    await pair.same(
        f"{CREATE}.B",
        _req(
            {
                "name": "B",
                "ack_policy": "explicit",
                "ack_wait": 1_000_000_000,
                "max_batch": 10,
                "max_expires": 2_000_000_000,
                "max_bytes": 1000,
                "metadata": {"k": "v"},
                "description": "d",
            }
        ),
    )
    await pair.same(
        "$JS.API.CONSUMER.CREATE.L.C", {"stream_name": "L", "config": {"name": "C", "ack_policy": "explicit"}}
    )
    await pair.same(
        "$JS.API.CONSUMER.CREATE.L.D",
        {"stream_name": "L", "config": {"durable_name": "D", "ack_policy": "explicit", "max_ack_pending": 60}},
    )
    await pair.same(f"{CREATE}.P", _req({"name": "P", "max_deliver": -2}, pedantic=True))


async def test_pull_frames_acks_and_info(pair: Pair) -> None:
    await _stream_with(pair, 4)
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}))
    emu, real = await pull_frames(pair, f"{NEXT}.D", "2", 2)
    assert emu.frames == real.frames
    emu2, real2 = await pull_frames(pair, f"{NEXT}.D", {"batch": 5, "no_wait": True}, 3)
    assert emu2.frames == real2.frames
    emu3, real3 = await pull_frames(pair, f"{NEXT}.D", {"batch": 5, "expires": 200_000_000}, 1, timeout=2.0)
    assert emu3.frames == real3.frames
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    # ack the first with a reply (the double-ack answer), nak the second, term the third
    await ack(pair, emu.acks[0], real.acks[0], "+ACK", reply=True)
    await ack(pair, emu.acks[1], real.acks[1], "-NAK")
    await ack(pair, emu2.acks[0], real2.acks[0], "+TERM", reply=True)
    await asyncio.sleep(0.1)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    # the nak'ed message comes again, with its delivery count
    emu4, real4 = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    assert emu4.frames == real4.frames
    assert "$JS.ACK.S.D.2.2." in emu4.frames[0]
    await ack(pair, emu4.acks[0], real4.acks[0], "+ACK", reply=True)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")  # the floor moves past the termed one
    await ack(pair, emu2.acks[1], real2.acks[1], "+WPI", reply=True)
    await ack(pair, emu2.acks[1], real2.acks[1], "+ACK")
    await asyncio.sleep(0.1)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    # bad and limited requests
    for payload in ['{"batch": "x"}', '{"expires": 1, "idle_heartbeat": 5}']:
        e, r = await pull_frames(pair, f"{NEXT}.D", payload, 1)
        assert e.frames == r.frames


async def test_ack_none_and_ack_all(pair: Pair) -> None:
    await _stream_with(pair, 5)
    await pair.same(f"{CREATE}.N", _req({"name": "N"}))
    await pair.same(f"{CREATE}.A", _req({"name": "A", "ack_policy": "all", "max_ack_pending": 3}))
    e, r = await pull_frames(pair, f"{NEXT}.N", "3", 3)
    assert e.frames == r.frames
    await pair.same("$JS.API.CONSUMER.INFO.S.N")
    # max_ack_pending 3 stops the batch of 5 after three; a no_wait request then waits for nothing
    e, r = await pull_frames(pair, f"{NEXT}.A", {"batch": 5, "expires": 300_000_000}, 4, timeout=2.0)
    assert e.frames == r.frames
    await ack(pair, e.acks[1], r.acks[1], "+ACK", reply=True)
    await asyncio.sleep(0.1)
    await pair.same("$JS.API.CONSUMER.INFO.S.A")
    e, r = await pull_frames(pair, f"{NEXT}.A", {"batch": 5, "no_wait": True}, 3)
    assert e.frames == r.frames
    await pair.same("$JS.API.CONSUMER.INFO.S.A")


async def test_deliver_policies_and_filters(pair: Pair) -> None:
    await _stream_with(pair, 6, ["s.a", "s.b", "s.a", "s.c", "s.b", "s.a"])
    configs = {
        "L": {"deliver_policy": "last"},
        "LF": {"deliver_policy": "last", "filter_subject": "s.b"},
        "NW": {"deliver_policy": "new"},
        "SQ": {"deliver_policy": "by_start_sequence", "opt_start_seq": 3},
        "LP": {"deliver_policy": "last_per_subject", "filter_subject": "s.>"},
        "LPM": {"deliver_policy": "last_per_subject", "filter_subjects": ["s.a", "s.c"]},
        "FM": {"filter_subjects": ["s.b", "s.c"], "ack_policy": "explicit"},
    }
    for name, cfg in configs.items():
        await pair.same(f"{CREATE}.{name}", _req({"durable_name": name, **cfg}))
    for name in configs:
        e, r = await pull_frames(pair, f"{NEXT}.{name}", {"batch": 10, "no_wait": True}, 10)
        assert e.frames == r.frames, name
        await pair.same(f"$JS.API.CONSUMER.INFO.S.{name}")
    await pair.publish("s.c", "late")
    await asyncio.sleep(0.1)
    for name in configs:
        await pair.same(f"$JS.API.CONSUMER.INFO.S.{name}")


async def test_waiting_request_is_woken_by_a_publish(pair: Pair) -> None:
    await _stream_with(pair, 0)
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}))
    publishers = [
        await RawClient.connect(side.client.writer.get_extra_info("peername")[1], {"verbose": False})
        for side in (pair.emu, pair.real)
    ]
    try:

        async def publish_later() -> None:
            await asyncio.sleep(0.3)
            for client in publishers:
                await client.exchange(b"PUB s.x 3\r\none\r\nPUB s.y 3\r\ntwo\r\n")

        task = asyncio.ensure_future(publish_later())
        e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 2, "expires": 2_000_000_000}, 2, timeout=3.0)
        await task
    finally:
        for client in publishers:
            await client.close()
    # The pending count in the first ack reply is a race on the binary: 1 when both messages
    # were stored before its consumer goroutine ran (the usual case, and jsemu's: one read),
    # 0 when that goroutine ran in between (seen on a loaded machine). Blanked; all else equal.
    assert [_PENDING.sub(".<pending> ", f) for f in e.frames] == [_PENDING.sub(".<pending> ", f) for f in r.frames]
    assert len(e.frames) == 2
    await pair.same("$JS.API.CONSUMER.INFO.S.D")


_PENDING = re.compile(r"\.\d+ (?=one$)")


async def test_legacy_ephemeral_and_unknown_consumer(pair: Pair) -> None:
    await _stream_with(pair, 2)
    emu, real = await pair.each(CREATE, _req({"ack_policy": "explicit"}))
    names = emu["name"], real["name"]
    assert all(len(n) == 8 and n.isalnum() for n in names)
    # The generated name is not written into the config; everything else is the same.
    for reply in (emu, real):
        for key in ("name", "created", "ts"):
            reply.pop(key)
        reply["config"]["metadata"].pop("_nats.ver")
    assert emu == real
    assert "name" not in emu["config"]
    # A pull request for a consumer that does not exist: nobody takes it.
    e, r = await pull_frames(pair, f"{NEXT}.nope", "1", 1, timeout=1.0)
    assert e.frames == r.frames
    assert "<no responders>" in r.frames[0]
    emu_names, real_names = await pair.each("$JS.API.CONSUMER.NAMES.S")
    assert (emu_names["consumers"], real_names["consumers"]) == ([names[0]], [names[1]])


async def test_pull_limits_statuses_and_next(pair: Pair) -> None:
    await _stream_with(pair, 4)
    await pair.same(
        f"{CREATE}.L",
        _req(
            {
                "durable_name": "L",
                "ack_policy": "explicit",
                "max_batch": 3,
                "max_expires": 1_500_000_000,
                "max_bytes": 100,
                "max_waiting": 1,
            }
        ),
    )
    await pair.same(
        f"{CREATE}.T",
        _req({"durable_name": "T", "deliver_policy": "by_start_time", "opt_start_time": "2001-02-03T04:05:06Z"}),
    )
    for payload in [
        {"batch": 4},
        {"batch": 1, "expires": 2_000_000_000},
        {"batch": 1, "max_bytes": 200},
        {"batch": 2, "max_bytes": 10, "no_wait": True},  # the first message does not fit: 409
        {"batch": 2, "max_bytes": 40, "no_wait": True},
    ]:
        e, r = await pull_frames(pair, f"{NEXT}.L", payload, 3, timeout=0.5)
        assert e.frames == r.frames, payload
    # max_waiting 1: a second waiting request is refused
    first = asyncio.ensure_future(pull_frames(pair, f"{NEXT}.L", {"batch": 3, "expires": 600_000_000}, 3, timeout=1.5))
    await asyncio.sleep(0.2)
    e, r = await pull_frames(pair, f"{NEXT}.L", {"batch": 1, "expires": 500_000_000}, 1, timeout=1.0)
    assert e.frames == r.frames
    e, r = await first
    assert e.frames == r.frames
    # +NXT acks and asks for the next ones in one go; an ack none consumer takes no acks at all
    e, r = await pull_frames(pair, f"{NEXT}.T", "1", 1)
    none = await asyncio.gather(
        pair.emu.request(e.acks[0], b"+ACK", None, 1.0), pair.real.request(r.acks[0], b"+ACK", None, 1.0)
    )
    assert [_ACK_TS.sub(r"\1<ts>\2", x) for x in none] == [_ACK_TS.sub(r"\1<ts>\2", none[1])] * 2
    assert "<no responders>" in none[1]
    await pair.same(f"{CREATE}.X", _req({"durable_name": "X", "ack_policy": "explicit"}))
    e, r = await pull_frames(pair, f"{NEXT}.X", "1", 1)
    assert e.frames == r.frames
    nxt = await asyncio.gather(
        _pull_side(pair.emu, e.acks[0], b"+NXT 2", b"_PAIR.nxt", 2, 1.0),
        _pull_side(pair.real, r.acks[0], b"+NXT 2", b"_PAIR.nxt", 2, 1.0),
    )
    assert nxt[0].frames == nxt[1].frames
    assert len(nxt[0].frames) == 2
    await pair.same("$JS.API.CONSUMER.INFO.S.T")
    await pair.same("$JS.API.CONSUMER.INFO.S.X")
    # an ack subject of another shape is nobody's
    bad = e.acks[0].rsplit(".", 1)[0]
    got = await asyncio.gather(
        pair.emu.request(bad, b"+ACK", None, 1.0), pair.real.request(r.acks[0].rsplit(".", 1)[0], b"+ACK", None, 1.0)
    )
    assert got[0].split(" Nats-Subject")[0] == got[1].split(" Nats-Subject")[0] == "<no responders>"


async def test_pull_batch_completed_with_bytes_left(pair: Pair) -> None:
    """A request with ``max_bytes`` whose batch is filled with bytes to spare ends with
    ``409 Batch Completed`` and what is left (``loopAndGatherMsgs``); one whose bytes run out
    exactly does not. Found by ``python -m benchmarks.stress --only fuzz``."""
    await _stream_with(pair, 6)
    await pair.same(f"{CREATE}.B", _req({"durable_name": "B", "ack_policy": "explicit"}))
    for payload in [
        {"batch": 1, "max_bytes": 1000},
        {"batch": 2, "max_bytes": 1000, "expires": 500_000_000},
        {"batch": 1, "max_bytes": 1000, "no_wait": True},
    ]:
        e, r = await pull_frames(pair, f"{NEXT}.B", payload, 4, timeout=0.5)
        assert e.frames == r.frames, payload
        assert "409 Batch Completed" in r.frames[-1], r.frames
    # the last message's size exactly: the batch is 1 from then on, no status after it
    e, r = await pull_frames(pair, f"{NEXT}.B", {"batch": 5, "max_bytes": 1}, 3, timeout=0.5)
    assert e.frames == r.frames


async def test_more_api_edges(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"], max_consumers=1)
    await pair.create("W", subjects=["w.>"], retention="workqueue")
    await pair.same(f"{CREATE}.A", _req({"name": "A", "num_replicas": 1}))
    await pair.same(f"{CREATE}.B", _req({"name": "B"}))  # max_consumers
    await pair.same("$JS.API.CONSUMER.INFO.S.A", {"x": 1})
    await pair.same("$JS.API.CONSUMER.INFO.S.A", b"{}")
    await pair.same("$JS.API.CONSUMER.DELETE.S.A", b"nope")
    await pair.same("$JS.API.CONSUMER.NAMES.S", {"offset": "x"})
    await pair.same("$JS.API.CONSUMER.NAMES.NOPE")
    await pair.same("$JS.API.CONSUMER.LIST.NOPE")
    await pair.same("$JS.API.CONSUMER.CREATE.S.A", b"not json")
    await pair.same("$JS.API.CONSUMER.CREATE.S.A", b"")
    for cfg in (
        {"name": "C"},
        {"name": "C", "ack_policy": "all"},
        {"name": "C", "ack_policy": "explicit", "deliver_policy": "last"},
    ):
        await pair.same("$JS.API.CONSUMER.CREATE.W.C", {"stream_name": "W", "config": cfg})
    await pair.same("$JS.API.INFO")


async def test_headers_delivered_and_nak_delay(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await pair.publish("s.h", "with", {"X-Key": "v", "Nats-Msg-Id": "id1"})
    await pair.publish("s.p", "plain")
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}))
    e, r = await pull_frames(pair, f"{NEXT}.D", "2", 2)
    assert e.frames == r.frames
    assert e.frames[0].startswith("s.h reply=$JS.ACK.S.D.1.1.1.<ts>.1 HMSG NATS/1.0\r\nX-Key: v")
    # -NAK with a delay: not due before it, due after it
    await ack(pair, e.acks[0], r.acks[0], '-NAK {"delay": 400000000}', reply=True)
    await ack(pair, e.acks[1], r.acks[1], "-NAK 300ms")
    e2, r2 = await pull_frames(pair, f"{NEXT}.D", {"batch": 2, "no_wait": True}, 1)
    assert e2.frames == r2.frames
    await asyncio.sleep(0.6)
    e3, r3 = await pull_frames(pair, f"{NEXT}.D", {"batch": 2, "expires": 500_000_000}, 2, timeout=1.5)
    assert e3.frames == r3.frames
    assert [f.split(" ")[0] for f in e3.frames] == ["s.p", "s.h"]  # in the order they became due


async def test_purge_and_delete_under_a_consumer(pair: Pair) -> None:
    await _stream_with(pair, 6)
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}))
    await pair.same(f"{CREATE}.N", _req({"durable_name": "N"}))
    e, r = await pull_frames(pair, f"{NEXT}.D", "2", 2)
    assert e.frames == r.frames
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 4})
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 3, "no_wait": True}, 3)
    assert e.frames == r.frames
    await pair.same("$JS.API.STREAM.PURGE.S", {"seq": 3})
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await pair.same("$JS.API.CONSUMER.INFO.S.N")
    await pair.same("$JS.API.STREAM.PURGE.S")
    await asyncio.sleep(0.1)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await pair.same("$JS.API.CONSUMER.INFO.S.N")


async def test_filtered_purge_under_consumers(pair: Pair) -> None:
    await _stream_with(pair, 6, ["s.a", "s.b", "s.a", "s.b", "s.a", "s.c"])
    for name, cfg in {"A": {"filter_subject": "s.a"}, "ALL": {}, "BC": {"filter_subjects": ["s.b", "s.c"]}}.items():
        await pair.same(f"{CREATE}.{name}", _req({"durable_name": name, "ack_policy": "explicit", **cfg}))
        e, r = await pull_frames(pair, f"{NEXT}.{name}", "2", 2)
        assert e.frames == r.frames
    await pair.same("$JS.API.STREAM.PURGE.S", {"filter": "s.a", "keep": 1})
    await asyncio.sleep(0.1)
    for name in ("A", "ALL", "BC"):
        await pair.same(f"$JS.API.CONSUMER.INFO.S.{name}")
        e, r = await pull_frames(pair, f"{NEXT}.{name}", {"batch": 5, "no_wait": True}, 5)
        assert e.frames == r.frames, name


async def test_stream_consumer_limits(pair: Pair) -> None:
    await pair.create(
        "L", subjects=["l.>"], consumer_limits={"max_ack_pending": 50, "inactive_threshold": 90_000_000_000}
    )
    for cfg in (
        {"name": "A", "inactive_threshold": 100_000_000_000},
        {"name": "B", "ack_policy": "explicit", "max_ack_pending": 51},
        {"name": "C", "ack_policy": "explicit", "max_ack_pending": 50, "inactive_threshold": 1_500_000_000},
    ):
        await pair.same("$JS.API.CONSUMER.CREATE.L." + cfg["name"], {"stream_name": "L", "config": cfg})
