"""Consumer policies side by side with nats-server: ``backoff`` (config echo, its checks, and
redelivery spaced by it in real time) and ``replay_policy: original`` (deliveries spaced by the
stored times), the ``MSG_TERMINATED`` / ``MAX_DELIVERIES`` advisories and the ``sample_freq``
ack metric (event ids and ack times normalised, the ids checked for their 22-character shape).

Real-time steps keep wide margins (hundreds of ms) around each delay, so a loaded machine
does not change the outcome; the exact timing is covered on jsemu's frozen clock
(``tests/jetstream/consumers/test_consumer_backoff.py``).
"""

from __future__ import annotations

import asyncio
import re

from support.pair import CONNECT, Pair, Side, encode_payload
from support.rawclient import RawClient

from .test_consumers import _ACK_TS, CREATE, NEXT, _req, ack, pull_frames

MS = 1_000_000


async def test_backoff_config_and_checks(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit", "backoff": [MS, 5 * MS]}))
    await pair.same(f"{CREATE}.B", _req({"durable_name": "B", "backoff": [MS, -1]}))
    await pair.same(f"{CREATE}.C", _req({"durable_name": "C", "backoff": [MS, 2 * MS, 3 * MS], "max_deliver": 2}))
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "backoff": [MS], "ack_wait": 9 * MS}))
    await pair.same(f"{CREATE}.E", _req({"durable_name": "E", "backoff": [MS], "ack_wait": 9 * MS}, pedantic=True))
    await pair.same(f"{CREATE}.F", _req({"durable_name": "F", "backoff": []}))
    await pair.same(f"{CREATE}.G", _req({"durable_name": "G", "ack_policy": "none", "backoff": [MS]}))
    # updates: a longer backoff, one longer than max_deliver
    await pair.same(f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit", "backoff": [MS, 7 * MS]}))
    await pair.same(
        f"{CREATE}.A", _req({"durable_name": "A", "ack_policy": "explicit", "backoff": [MS, MS], "max_deliver": 1})
    )
    await pair.same("$JS.API.CONSUMER.INFO.S.A")


async def test_backoff_redelivery_in_real_time(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await pair.publish("s.1", "one")
    cfg = {"durable_name": "D", "ack_policy": "explicit", "backoff": [300 * MS, 3000 * MS], "max_deliver": 3}
    await pair.same(f"{CREATE}.D", _req(cfg))
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    assert e.frames == r.frames
    await asyncio.sleep(0.6)  # past the first delay: delivered again
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    assert e.frames == r.frames and "$JS.ACK.S.D.2.1." in e.frames[0]
    await asyncio.sleep(0.6)  # far from the second delay (3 s): nothing yet
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    assert e.frames == r.frames and "404" in e.frames[0]
    await pair.same("$JS.API.CONSUMER.INFO.S.D")


async def _frames(side: Side, n: int, timeout: float) -> list[str]:
    out: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(out) < n and (left := deadline - loop.time()) > 0:
        frame = await side.client.next_frame(left)
        if frame is None:
            break
        if frame.startswith((b"MSG ", b"HMSG ")):
            out.append(_ACK_TS.sub(r"\1<ts>\2", side.normalise(frame) + " " + frame.split(b"\r\n")[0].decode()))
        elif frame == b"PING\r\n":
            side.client.send(b"PONG\r\n")
    return out


async def test_replay_original_in_real_time(pair: Pair) -> None:
    """Messages stored 0.6 s apart come 0.6 s apart: the second is not there after 0.25 s."""
    await pair.create("S", subjects=["s.>"])
    await pair.publish("s.1", "one")
    await asyncio.sleep(0.6)
    await pair.publish("s.2", "two")
    await pair.same(f"{CREATE}.R", _req({"durable_name": "R", "ack_policy": "explicit", "replay_policy": "original"}))
    await pair.same(f"{CREATE}.R", _req({"durable_name": "R", "ack_policy": "explicit"}))  # can not change
    request = encode_payload({"batch": 2, "expires": 5_000_000_000})
    for side in (pair.emu, pair.real):
        side._send(f"{NEXT}.R", b"_PAIR.replay", request, None)
    first = await asyncio.gather(*(_frames(side, 2, 0.25) for side in (pair.emu, pair.real)))
    assert first[0] == first[1] and len(first[0]) == 1, first
    second = await asyncio.gather(*(_frames(side, 1, 2.0) for side in (pair.emu, pair.real)))
    assert second[0] == second[1] and len(second[0]) == 1, second


_ID = re.compile(r'"id":"[0-9A-Za-z]{22}"')
_ACK_TIME = re.compile(r'"ack_time":\d+')
EVENTS = (
    b"SUB $JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.> 1\r\n"
    b"SUB $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.> 2\r\n"
    b"SUB $JS.EVENT.METRIC.> 3\r\n"
)


async def _listen(side: Side) -> RawClient:
    client = await RawClient.connect(side.client.writer.get_extra_info("peername")[1], CONNECT)
    assert await client.exchange(EVENTS) == []
    return client


async def _events(side: Side, client: RawClient) -> list[str]:
    """The events received so far, ids and ack times normalised (the ids checked for shape)."""
    out = []
    for frame in await client.exchange():
        if not frame.startswith(b"MSG "):
            continue  # an INFO update
        head, _, payload = frame.decode().partition("\r\n")
        text = head.split()[1] + " " + side.scrub(payload)
        assert text.count('"id":') == 1 and _ID.search(text), text
        out.append(_ACK_TIME.sub('"ack_time":<n>', _ID.sub('"id":<id>', text)))
    return out


async def test_term_max_deliveries_advisories_and_ack_metric(pair: Pair) -> None:
    """``+TERM`` (with and without a reason), ``max_deliver`` reached (at the next pull for
    max_deliver 2, at the ack wait for max_deliver 1) and the ack metric of ``sample_freq``."""
    listeners = [await _listen(pair.emu), await _listen(pair.real)]
    await pair.create("S", subjects=["s.>"])
    for i in range(4):
        await pair.publish(f"s.{i}", "x")
    wait = {"ack_policy": "explicit", "ack_wait": 300 * MS}
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "max_deliver": 2, "sample_freq": "100%", **wait}))
    await pair.same(f"{CREATE}.E", _req({"durable_name": "E", "max_deliver": 1, **wait}))
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 4, "no_wait": True}, 4)
    assert e.frames == r.frames
    await ack(pair, e.acks[0], r.acks[0], "+ACK", reply=True)
    await ack(pair, e.acks[1], r.acks[1], "+TERM  why not ", reply=True)
    await ack(pair, e.acks[3], r.acks[3], "+TERM", reply=True)
    e2, r2 = await pull_frames(pair, f"{NEXT}.E", {"batch": 1, "no_wait": True}, 1)
    await ack(pair, e2.acks[0], r2.acks[0], "+ACK", reply=True)  # not sampled: no sample_freq
    e2, r2 = await pull_frames(pair, f"{NEXT}.E", {"batch": 1, "no_wait": True}, 1)
    assert e2.frames == r2.frames
    got = await asyncio.gather(*(_events(s, c) for s, c in zip((pair.emu, pair.real), listeners, strict=True)))
    assert got[0] == got[1] and len(got[0]) == 3, got
    await asyncio.sleep(0.6)  # E's message reached max_deliver 1 at its ack wait; D's is due again
    got = await asyncio.gather(*(_events(s, c) for s, c in zip((pair.emu, pair.real), listeners, strict=True)))
    assert got[0] == got[1] and len(got[0]) == 1 and ".MAX_DELIVERIES.S.E " in got[0][0], got
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    assert e.frames == r.frames and "$JS.ACK.S.D.2.3." in e.frames[0]
    await asyncio.sleep(0.6)
    got = await asyncio.gather(*(_events(s, c) for s, c in zip((pair.emu, pair.real), listeners, strict=True)))
    assert got == [[], []]  # its ack wait passed: due once more, no advisory yet
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    assert e.frames == r.frames  # dropped at this look, with its advisory
    got = await asyncio.gather(*(_events(s, c) for s, c in zip((pair.emu, pair.real), listeners, strict=True)))
    assert got[0] == got[1] and len(got[0]) == 1 and ".MAX_DELIVERIES.S.D " in got[0][0], got
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await pair.same("$JS.API.CONSUMER.INFO.S.E")
    for client in listeners:
        await client.close()


async def test_dropped_at_max_deliver_keeps_the_ack_floor(pair: Pair) -> None:
    """A message nak'ed up to ``max_deliver`` leaves pending without moving the ack floor
    (the consumer store's ``UpdateDelivered``); the next ack moves it."""
    await pair.create("S", subjects=["s.>"])
    for i in range(3):
        await pair.publish(f"s.{i}", "x")
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "max_deliver": 2, "ack_policy": "explicit"}))
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 2, "no_wait": True}, 2)
    await ack(pair, e.acks[0], r.acks[0], "-NAK", reply=True)
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    await ack(pair, e.acks[0], r.acks[0], "-NAK", reply=True)
    e, r = await pull_frames(pair, f"{NEXT}.D", {"batch": 1, "no_wait": True}, 1)
    assert e.frames == r.frames, (e.frames, r.frames)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await ack(pair, e.acks[0], r.acks[0], "+ACK", reply=True)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
