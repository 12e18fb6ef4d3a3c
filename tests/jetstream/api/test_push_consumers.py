"""Push consumers, side by side with nats-server: what a subscriber of the deliver subject
receives (subjects, ack subjects, payloads, in order), delivery only while the deliver
subject has interest (``push_bound`` in the info), queue delivery to a ``deliver_group``,
acks and ``max_ack_pending`` on push, and a pull request to a push consumer.

Ack subjects carry the message's timestamp in nanoseconds; it is the only token normalised.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from support.pair import CONNECT, Pair, Side
from support.rawclient import RawClient

from .test_consumers import _ACK_TS, _CTRL, CREATE, NEXT, _req, _stream_with, ack, pull_frames


class Subscriber:
    """A second connection per side that subscribes to the deliver subject."""

    def __init__(self, side: Side, client: RawClient) -> None:
        self.side = side
        self.client = client
        self.acks: list[str] = []

    @classmethod
    async def connect(cls, side: Side) -> Subscriber:
        port = side.client.writer.get_extra_info("peername")[1]
        client = await RawClient.connect(port, CONNECT)
        return cls(side, client)

    async def sub(self, line: str) -> None:
        frames = await self.client.exchange(line.encode() + b"\r\n")
        assert [f for f in frames if not f.startswith(b"INFO ")] == []

    async def frames(self, n: int, timeout: float) -> list[str]:
        """Up to ``n`` messages (or what came within ``timeout``), normalised."""
        out: list[str] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(out) < n:
            left = deadline - loop.time()
            if left <= 0:
                break
            frame = await self.client.next_frame(left)
            if frame is None:
                break
            m = _CTRL.match(frame)
            if m is None:
                if frame == b"PING\r\n":
                    self.client.send(b"PONG\r\n")
                continue
            args = m.group(2).split()
            if len(args) == (5 if m.group(1) == b"HMSG" else 4):
                self.acks.append(args[2].decode())
            out.append(_ACK_TS.sub(r"\1<ts>\2", args[0].decode() + " " + self.side.normalise(frame)))
        return out


async def _subscribers(pair: Pair) -> tuple[Subscriber, Subscriber]:
    return await Subscriber.connect(pair.emu), await Subscriber.connect(pair.real)


async def _both(subs: tuple[Subscriber, Subscriber], n: int, timeout: float = 1.0) -> list[str]:
    emu, real = await asyncio.gather(subs[0].frames(n, timeout), subs[1].frames(n, timeout))
    assert emu == real
    return emu


async def _sub(subs: tuple[Subscriber, Subscriber], line: str) -> None:
    await asyncio.gather(subs[0].sub(line), subs[1].sub(line))


def _push(name: str, **cfg: Any) -> dict[str, Any]:
    return _req({"durable_name": name, "deliver_subject": f"push.{name}", **cfg})


async def test_push_delivers_while_bound(pair: Pair) -> None:
    await _stream_with(pair, 3)
    subs = await _subscribers(pair)
    # created without interest: nothing is delivered, the info is not push bound
    await pair.same(f"{CREATE}.D", _push("D", ack_policy="none"))
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await _sub(subs, "SUB push.D 1")
    assert len(await _both(subs, 3)) == 3
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    # new messages follow while bound
    await pair.publish("s.9", "live")
    assert len(await _both(subs, 1)) == 1
    # unbound: stored messages wait for the next subscriber
    await _sub(subs, "UNSUB 1")
    await asyncio.sleep(0.1)
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await pair.publish("s.10", "later")
    await pair.publish("s.11", "later2")
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    await _sub(subs, "SUB push.D 2")
    assert len(await _both(subs, 2)) == 2
    await pair.same("$JS.API.CONSUMER.INFO.S.D")
    # a pull request to a push consumer
    e, r = await pull_frames(pair, f"{NEXT}.D", "1", 1)
    assert e.frames == r.frames


async def test_push_acks_and_max_ack_pending(pair: Pair) -> None:
    await _stream_with(pair, 5)
    subs = await _subscribers(pair)
    await _sub(subs, "SUB push.A 1")
    await pair.same(f"{CREATE}.A", _push("A", ack_policy="explicit", max_ack_pending=2))
    assert len(await _both(subs, 3, timeout=0.5)) == 2  # stalls at max_ack_pending
    await pair.same("$JS.API.CONSUMER.INFO.S.A")
    emu, real = subs
    await ack(pair, emu.acks[0], real.acks[0], "+ACK", reply=True)
    assert len(await _both(subs, 2, timeout=0.5)) == 1  # room for one more
    await ack(pair, emu.acks[1], real.acks[1], "-NAK")
    await _both(subs, 2, timeout=0.5)  # the nak'ed one comes again
    assert "$JS.ACK.S.A.2.2." in emu.acks[-1]
    await pair.same("$JS.API.CONSUMER.INFO.S.A")


async def test_push_deliver_group(pair: Pair) -> None:
    """Queue delivery: each message goes to one member of the group (which one is random
    on both servers, so the test counts)."""
    await _stream_with(pair, 6)
    subs = await _subscribers(pair)
    others = await _subscribers(pair)
    await _sub(subs, "SUB push.G workers 1")
    await _sub(others, "SUB push.G workers 1")
    await pair.same(f"{CREATE}.G", _push("G", deliver_group="workers", ack_policy="none"))
    got = await asyncio.gather(*(s.frames(6, 0.5) for s in (*subs, *others)))
    assert len(got[0]) + len(got[2]) == 6
    assert len(got[1]) + len(got[3]) == 6
    assert sorted(got[0] + got[2]) == sorted(got[1] + got[3])
    await pair.same("$JS.API.CONSUMER.INFO.S.G")


_FC = re.compile(r"\$JS\.FC\.S\.F\.[0-9A-Za-z]{4}")
_BIG = re.compile(r"x{100,}")


def _short(frames: list[str]) -> list[str]:
    """Flow control replies are random; big payloads are shown by their length."""
    return [_BIG.sub(lambda m: f"<x*{len(m.group(0))}>", _FC.sub("<fc>", f)) for f in frames]


async def test_flow_control_and_idle_heartbeats(pair: Pair) -> None:
    """The first flow control request goes out past 1 MiB, delivery stalls past 2 MiB and
    the heartbeats say so (``Nats-Consumer-Stalled``) until the request is answered; then
    the rest comes, the window is doubled, and heartbeats go on while idle."""
    await pair.create("S", subjects=["s.>"])
    for i in range(25):
        await pair.publish(f"s.{i}", "x" * 100_000)
    subs = await _subscribers(pair)
    await _sub(subs, "SUB push.F 1")
    cfg = {"flow_control": True, "idle_heartbeat": 200_000_000, "ack_policy": "none"}
    await pair.same(f"{CREATE}.F", _push("F", **cfg))
    got = _short(await _both_raw(subs, 23, timeout=1.0))
    assert [f.split(" ")[0] for f in got].count("s.0") == 1
    assert "FlowControl Request" in got[11] and "Nats-Consumer-Stalled: <fc>" in got[22], got[11:]
    await pair.same("$JS.API.CONSUMER.INFO.S.F")
    # answer the outstanding request on both sides
    for s in subs:
        fc = next(a for a in reversed(s.acks) if a.startswith("$JS.FC."))
        s.client.send(b"PUB %s 0\r\n\r\n" % fc.encode())
    # the rest, then heartbeats that no longer say stalled (on a loaded machine a stalled
    # heartbeat may still come first, on either side: those are left out)
    emu, real = await asyncio.gather(*(s.frames(8, 1.0) for s in subs))
    for got in (emu, real):
        while got and "Nats-Consumer-Stalled" in got[0]:
            got.pop(0)
        assert [f.split(" ")[0] for f in got[:5]] == ["s.21", "s.22", "s.23", "s.24", "push.F"], got
        assert "Idle Heartbeat" in got[4] and "Stalled" not in got[4], got
    assert _short(emu[:5]) == _short(real[:5])
    await pair.same("$JS.API.CONSUMER.INFO.S.F")


async def _both_raw(subs: tuple[Subscriber, Subscriber], n: int, timeout: float) -> list[str]:
    emu, real = await asyncio.gather(subs[0].frames(n, timeout), subs[1].frames(n, timeout))
    assert _short(emu) == _short(real)
    return emu


async def test_headers_only(pair: Pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await pair.publish("s.1", "plain")
    await pair.publish("s.2", "with", headers={"K": "v"})
    subs = await _subscribers(pair)
    await _sub(subs, "SUB push.H 1")
    await pair.same(f"{CREATE}.H", _push("H", headers_only=True, ack_policy="none"))
    got = await _both(subs, 2)
    assert "Nats-Msg-Size: 5" in got[0] and "K: v" in got[1]


async def test_pull_request_idle_heartbeat(pair: Pair) -> None:
    """A pull request with ``idle_heartbeat`` that gets nothing is sent heartbeats (with
    the last sequences) until it expires; messages reset the heartbeat."""
    await _stream_with(pair, 2)
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "none"}))
    req = {"batch": 5, "expires": 700_000_000, "idle_heartbeat": 300_000_000}
    e, r = await pull_frames(pair, f"{NEXT}.D", req, 3, timeout=0.45)
    assert e.frames == r.frames
    assert len(e.frames) == 3 and "Idle Heartbeat" in e.frames[2] and "Nats-Last-Stream: 2" in e.frames[2]


async def test_update_deliver_subject(pair: Pair) -> None:
    await _stream_with(pair, 2)
    subs = await _subscribers(pair)
    await _sub(subs, "SUB push.U 1")
    await _sub(subs, "SUB push.V 2")
    await pair.same(f"{CREATE}.U", _push("U", ack_policy="none"))
    assert [f.split(" ")[0] for f in await _both(subs, 2)] == ["s.0", "s.1"]
    update = _req({"durable_name": "U", "deliver_subject": "push.V", "ack_policy": "none"})
    await pair.same(f"{CREATE}.U", update)  # refused while bound
    await _sub(subs, "UNSUB 1")
    await asyncio.sleep(0.1)
    await pair.same(f"{CREATE}.U", update)
    await pair.publish("s.5", "new")
    got = await _both(subs, 1)
    assert got[0].startswith("s.5 ")
    await pair.same("$JS.API.CONSUMER.INFO.S.U")
