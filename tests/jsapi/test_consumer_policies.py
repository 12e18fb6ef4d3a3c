"""Consumer policies side by side with nats-server: ``backoff`` (config echo, its checks, and
redelivery spaced by it in real time) and ``replay_policy: original`` (deliveries spaced by the
stored times).

Real-time steps keep wide margins (hundreds of ms) around each delay, so a loaded machine
does not change the outcome; the exact timing is covered on jsemu's frozen clock
(``tests/jetstream/test_consumer_backoff.py``).
"""

from __future__ import annotations

import asyncio

from jsapi.conftest import Pair, Side, encode_payload
from jsapi.test_consumers import _ACK_TS, CREATE, NEXT, _req, pull_frames

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
