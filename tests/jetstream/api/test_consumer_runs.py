"""Runs of acks in one read and long delivery stretches, side by side with nats-server.

jsemu takes a run of plain acks, and a stretch of new messages to one receiver, through
the inline loops of ``jetstream/consumers/fast.py``, and a read of acks followed by a pull
request as one ack run plus the request (``Parser._columns``, ``Router.learn_stretch``).
These must leave the state, and send the frames, that one ack or message at a time would.
"""

from __future__ import annotations

import asyncio

from support.pair import Pair, Side

from .test_consumers import _ACK_TS, _CTRL, CREATE, NEXT, _req, pull_frames
from .test_push_consumers import _push, _sub, _subscribers


async def _fill(pair: Pair, n: int) -> None:
    """A stream of ``n`` messages, published in one write per side."""
    await pair.create("S", subjects=["s.>"])
    data = b"".join(b"PUB s.%d %d\r\nm%d\r\n" % (i, len(b"m%d" % i), i) for i in range(n))
    for side in (pair.emu, pair.real):
        side.client.send(data)
    await asyncio.gather(pair.emu.barrier("s.0"), pair.real.barrier("s.0"))
    await pair.info()


async def _one_write(side: Side, data: bytes, n: int, timeout: float = 1.0) -> list[str]:
    """Send ``data`` in one write; up to ``n`` messages that come back (normalised)."""
    side.client.send(data)
    out: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(out) < n:
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
        out.append(_ACK_TS.sub(r"\1<ts>\2", args[0].decode() + " " + side.normalise(frame)))
    return out


def _acks(subjects: list[str], order: list[tuple[int, str]], tail: str = "") -> bytes:
    """Acks of ``subjects[i]`` with ``body``, in ``order``; each subject + ``tail``."""
    return b"".join(
        b"PUB %s %d\r\n%s\r\n" % ((subjects[i] + tail).encode(), len(body), body.encode()) for i, body in order
    )


async def test_acks_out_of_order_in_one_read_then_a_pull_request(pair: Pair) -> None:
    """Twelve delivered; one write acks some out of order (the floor waits for the gap, then
    jumps), marks one in progress, and ends with a no-wait pull request; a second write naks
    one and acks the rest. The infos agree after each, and the nak'ed message comes again.
    (A nak and a request in the same read would race on nats-server, which queues acks.)"""
    await _fill(pair, 12)
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}))
    emu, real = await pull_frames(pair, f"{NEXT}.D", "12", 12)
    assert emu.frames == real.frames and len(emu.frames) == 12
    order = [(2, ""), (0, "+ACK"), (1, ""), (4, "+OK"), (3, ""), (5, "+WPI"), (9, ""), (11, "+ACK")]
    body = b'{"batch":3,"no_wait":true}'
    request = b"PUB %s _PAIR.runs %d\r\n%s\r\n" % (f"{NEXT}.D".encode(), len(body), body)
    # with a tenth token an ack subject is no ack: nobody receives it (the message stays pending)
    bad = [(10, "")]
    got = await asyncio.gather(
        _one_write(pair.emu, _acks(emu.acks, order) + _acks(emu.acks, bad, ".9") + request, 2, 0.5),
        _one_write(pair.real, _acks(real.acks, order) + _acks(real.acks, bad, ".9") + request, 2, 0.5),
    )
    assert got[0] == got[1] == ["_PAIR.runs HMSG NATS/1.0 404 No Messages\r\n\r\n"]
    await asyncio.sleep(0.1)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    rest = [(6, "-NAK"), (7, ""), (5, "+ACK"), (8, "")]
    for side, subjects in ((pair.emu, emu.acks), (pair.real, real.acks)):
        side.client.send(_acks(subjects, rest))
    await asyncio.gather(pair.emu.client.round_trip(), pair.real.client.round_trip())
    await asyncio.sleep(0.1)
    info = await pair.same("$JS.API.CONSUMER.INFO.S.D")
    assert info["num_ack_pending"] == 2  # the nak'ed one and the one acked with a bad subject
    again = await pull_frames(pair, f"{NEXT}.D", {"batch": 2, "no_wait": True}, 2)
    assert again[0].frames == again[1].frames
    assert "$JS.ACK.S.D.2.7." in again[0].frames[0]  # the nak'ed one, delivered a second time
    await pair.same("$JS.API.CONSUMER.INFO.S.D")


async def test_push_ack_none_delivers_a_long_stream_in_parts(pair: Pair) -> None:
    """2,500 stored messages to a push consumer with ack none: all of them, in order, though
    jsemu delivers 1,000 per turn of its loop; then the info agrees."""
    await _fill(pair, 2500)
    subs = await _subscribers(pair)
    await _sub(subs, "SUB push.P 1")
    await pair.same(f"{CREATE}.P", _push("P", ack_policy="none"))
    emu, real = await asyncio.gather(subs[0].frames(2500, 5.0), subs[1].frames(2500, 5.0))
    assert len(emu) == 2500
    assert emu == real
    await pair.same("$JS.API.CONSUMER.INFO.S.P")


async def test_push_ack_explicit_delivers_up_to_max_ack_pending_in_parts(pair: Pair) -> None:
    """1,200 stored messages to a push consumer with explicit acks and the default
    ``max_ack_pending`` (1,000): the first 1,000, in order, though jsemu delivers 250 per turn
    of its loop with acks; nothing more until acks come; then the info agrees."""
    await _fill(pair, 1200)
    subs = await _subscribers(pair)
    await _sub(subs, "SUB push.E 1")
    await pair.same(f"{CREATE}.E", _push("E", ack_policy="explicit"))
    emu, real = await asyncio.gather(subs[0].frames(1001, 1.0), subs[1].frames(1001, 1.0))
    assert len(emu) == 1000
    assert emu == real
    await pair.same("$JS.API.CONSUMER.INFO.S.E")
