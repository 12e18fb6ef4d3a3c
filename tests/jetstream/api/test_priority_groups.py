"""Priority groups, side by side with nats-server: ``overflow`` (``min_pending`` /
``min_ack_pending``), ``pinned_client`` (``Nats-Pin-Id``, the two 423 statuses, ``UNPIN``,
the pinned / unpinned advisories, ``priority_groups`` in the info) and ``prioritized``
(which waiting request a new message goes to).

Pin ids are NUIDs chosen by each server: each side's pull requests carry that side's own
pin id back, and pin ids (like advisory ids) are normalised to ``<pin>`` when compared.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from support.pair import Pair, Side, encode_payload

from .test_consumer_pause import Advisories
from .test_consumers import NEXT, Pulled, _pull_side, _req, _stream_with

CREATE = "$JS.API.CONSUMER.CREATE.S"
UNPIN = "$JS.API.CONSUMER.UNPIN.S"
_PIN = re.compile(r'(Nats-Pin-Id: |"pinned_client_id":"|"pinned_id":")([0-9A-Za-z]{22})')
_counter = [0]


def _scrub_pins(text: str) -> str:
    return _PIN.sub(r"\1<pin>", text)


def _pins(pulled: Pulled) -> list[str]:
    return [m.group(2) for f in pulled.frames for m in _PIN.finditer(f)]


async def pull(pair: Pair, consumer: str, emu: Any, real: Any, n: int, timeout: float = 1.0) -> list[str]:
    """One pull request to each side (their own bodies, for their own pin ids); the frames
    must be the same once pin ids are normalised. Returns the real side's frames."""
    _counter[0] += 1
    inbox = b"_PAIR.pg%d" % _counter[0]
    subject = f"{NEXT}.{consumer}"
    got = await asyncio.gather(
        _pull_side(pair.emu, subject, encode_payload(emu), inbox, n, timeout),
        _pull_side(pair.real, subject, encode_payload(real), inbox, n, timeout),
    )
    frames = [[_scrub_pins(f) for f in side.frames] for side in got]
    assert frames[0] == frames[1]
    pull.last = got  # type: ignore[attr-defined]
    return frames[1]


async def same_pins(pair: Pair, subject: str, payload: Any = b"") -> str:
    emu, real = await pair.request(subject, payload)
    assert _scrub_pins(emu) == _scrub_pins(real), f"request {subject} {payload!r}"
    return real


async def test_pinned_client(pair: Pair) -> None:
    await _stream_with(pair, 6)
    adv = await Advisories.listen(
        pair, ("$JS.EVENT.ADVISORY.CONSUMER.PINNED.>", "$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.>"), _scrub_pins
    )
    cfg = {"durable_name": "P", "ack_policy": "explicit", "priority_policy": "pinned_client", "priority_groups": ["A"]}
    await pair.same(f"{CREATE}.P", _req(cfg))
    wait = 200_000_000
    body = {"batch": 1, "expires": wait}
    frames = await pull(pair, "P", body, body, 1)  # no group
    assert "Priority Group missing" in frames[0]
    body = {"batch": 1, "group": "B", "expires": wait}
    await pull(pair, "P", body, body, 1)
    body = {"batch": 1, "group": "A", "expires": wait}
    frames = await pull(pair, "P", body, body, 1)
    assert "Nats-Pin-Id: <pin>" in frames[0]
    emu_pin, real_pin = (_pins(side)[0] for side in pull.last)  # type: ignore[attr-defined]
    assert '"pin' in (await adv.expect(1))[0]
    await same_pins(pair, "$JS.API.CONSUMER.INFO.S.P")
    body = {"batch": 1, "group": "A", "id": "XXX", "expires": wait}
    frames = await pull(pair, "P", body, body, 1)  # 423 Nats-Pin-Id mismatch
    assert "423" in frames[0]
    mine = [{"batch": 1, "group": "A", "id": pin, "expires": wait} for pin in (emu_pin, real_pin)]
    await pull(pair, "P", *mine, 1)  # the pinned client gets the next one
    body = {"batch": 1, "group": "A", "expires": 300_000_000}
    frames = await pull(pair, "P", body, body, 1)  # another client waits its request out
    assert "408" in frames[0]
    # another client asking first waits; the pinned one asking after it gets the message
    other = {"batch": 1, "group": "A", "expires": 400_000_000}
    mine2 = [{**m, "expires": 400_000_000} for m in mine]
    got = await _pulls(pair, "P", [("other", other, other), ("mine", *mine2)], 2)
    assert got[0].startswith("mine m") and got[1].startswith("other NATS/1.0 408")
    await same_pins(pair, f"{UNPIN}.P", {"group": "A"})
    assert '"reason":"admin"' in (await adv.expect(1))[0]
    await same_pins(pair, "$JS.API.CONSUMER.INFO.S.P")
    await pull(pair, "P", *mine, 1)  # the old pin: 423 Nats-Wrong-Pin-Id with the pending counts
    body = {"batch": 2, "group": "A", "expires": wait}
    frames = await pull(pair, "P", body, body, 2)  # a new pin for whoever asks next
    assert all("Nats-Pin-Id: <pin>" in f for f in frames)
    await adv.expect(1)
    await same_pins(pair, "$JS.API.CONSUMER.INFO.S.P")
    for bad in ({"group": "B"}, {}, b"", b"garbage", {"group": "bad group!"}, {"group": 5}, {"group": "A", "x": 1}):
        await same_pins(pair, f"{UNPIN}.P", bad)
    await same_pins(pair, f"{UNPIN}.X", {"group": "A"})
    await same_pins(pair, "$JS.API.CONSUMER.UNPIN.T.X", {"group": "A"})
    await adv.expect(1)  # the last good UNPIN (unknown keys are ignored)
    await same_pins(pair, "$JS.API.INFO")
    await adv.close()


async def test_overflow_min_pending_and_min_ack_pending(pair: Pair) -> None:
    await _stream_with(pair, 4)
    cfg = {"durable_name": "O", "ack_policy": "explicit", "priority_policy": "overflow", "priority_groups": ["A"]}
    await pair.same(f"{CREATE}.O", _req(cfg))
    await pair.same("$JS.API.CONSUMER.INFO.S.O")
    steps: list[tuple[dict[str, Any], int]] = [
        ({"batch": 1, "group": "A", "min_pending": 10, "no_wait": True}, 1),  # under the threshold: 404
        ({"batch": 1, "group": "A", "min_pending": 10, "expires": 300_000_000}, 1),  # waits it out: 408
        ({"batch": 1, "group": "A", "min_pending": 4, "expires": 300_000_000}, 1),  # 4 pending: served
        ({"batch": 1, "group": "A", "min_ack_pending": 2, "expires": 300_000_000}, 1),  # 1 unacked: 408
        ({"batch": 1, "group": "A", "min_ack_pending": 1, "expires": 300_000_000}, 1),  # served
        ({"batch": 2, "group": "A", "min_pending": 1, "min_ack_pending": 9, "expires": 300_000_000}, 2),
        ({"batch": 1, "group": "A", "min_pending": 1, "no_wait": True}, 1),  # nothing left: 404
        ({"batch": 1, "min_pending": 1}, 1),  # no group
        ({"batch": 1, "group": "A", "id": "x"}, 1),  # not pinned_client
        ({"batch": 1, "group": "A", "priority": 10}, 1),
    ]
    for body, n in steps:
        await pull(pair, "O", body, body, n)
        await pair.same("$JS.API.CONSUMER.INFO.S.O")
    # two waiting requests share new messages in turns (a served request goes to the back)
    body = {"batch": 2, "group": "A", "expires": 1_000_000_000}
    got = await _pulls(pair, "O", [("a", body, body), ("b", body, body)], 3, publish=3)
    assert got == ["a n0", "b n1", "a n2"]


async def _send_pull(side: Side, subject: str, inbox: bytes, body: Any) -> None:
    side._send(subject, inbox, encode_payload(body), None)


async def _collect(side: Side, n: int, timeout: float = 1.0, early: list[bytes] | None = None) -> list[str]:
    """``<sid> <payload or status line>`` of the next ``n`` messages (each request's inbox
    has its own sid), after those that came ``early``."""
    out: list[str] = []
    early = list(early or [])
    while len(out) < n:
        frame = early.pop(0) if early else await side.client.next_frame(timeout)
        if frame is None:
            break
        if frame.startswith((b"MSG ", b"HMSG ")):
            head, rest = frame.split(b"\r\n", 1)
            if frame.startswith(b"HMSG "):
                hlen = int(head.split()[-2])
                hdr, body = rest[:hlen], rest[hlen:-2]
                what = body if body else hdr.split(b"\r\n")[0]
            else:
                what = rest[:-2]
            out.append(f"{head.split()[2].decode()} {what.decode()}")
    return out


async def _pulls(
    pair: Pair, consumer: str, requests: list[tuple[str, Any, Any]], n: int, publish: int = 0
) -> list[str]:
    """Several waiting requests at once (name, emu body, real body), in order, then
    ``publish`` new messages; the next ``n`` frames as :func:`_collect` shows them, the
    same on both sides."""
    early: list[list[bytes]] = []
    for side, k in ((pair.emu, 1), (pair.real, 2)):
        for name, *bodies in requests:
            _counter[0] += 1
            side.client.send(f"SUB _PQ.{name}.{_counter[0]} {name}\r\n".encode())
            await _send_pull(side, f"{NEXT}.{consumer}", f"_PQ.{name}.{_counter[0]}".encode(), bodies[k - 1])
        frames = await side.client.round_trip()
        for i in range(publish):
            side._send(f"s.n{i}", None, f"n{i}".encode(), None)
        early.append(frames)
    got = await asyncio.gather(_collect(pair.emu, n, early=early[0]), _collect(pair.real, n, early=early[1]))
    assert got[0] == got[1]
    return got[1]


async def _waiting(pair: Pair, consumer: str, want: int, timeout: float = 5.0) -> None:
    """Poll ``CONSUMER.INFO`` on both servers until ``num_waiting`` is ``want``."""
    for side in (pair.emu, pair.real):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            info = json.loads(await side.request(f"$JS.API.CONSUMER.INFO.S.{consumer}", b"", None, 1.0, scrub=False))
            if info.get("num_waiting") == want or loop.time() > deadline:
                break
            await asyncio.sleep(0.02)


async def test_prioritized_requests_served_by_priority(pair: Pair) -> None:
    await _stream_with(pair, 0)
    cfg = {"durable_name": "Q", "ack_policy": "none", "priority_policy": "prioritized", "priority_groups": ["A"]}
    await pair.same(f"{CREATE}.Q", _req(cfg))
    requests = [("low", 5, 2), ("high", 1, 1), ("mid", 3, 1), ("low2", 5, 1)]
    for side in (pair.emu, pair.real):
        for name, priority, batch in requests:
            side.client.send(f"SUB _PQ.{name} {name}\r\n".encode())
            body = {"batch": batch, "group": "A", "priority": priority, "expires": 2_000_000_000}
            await _send_pull(side, f"{NEXT}.Q", f"_PQ.{name}".encode(), body)
        assert not await side.client.round_trip()
    # nats-server queues a pull request on the consumer's goroutine after the read: wait until it
    # holds all four before comparing (jsemu holds them at once).
    await _waiting(pair, "Q", 4)
    await pair.same("$JS.API.CONSUMER.INFO.S.Q")
    for side in (pair.emu, pair.real):
        for i in range(5):
            side._send(f"s.{i}", None, f"m{i}".encode(), None)
    got = await asyncio.gather(_collect(pair.emu, 5), _collect(pair.real, 5))
    assert got[0] == got[1]
    assert got[1] == ["high m0", "mid m1", "low m2", "low2 m3", "low m4"]


async def test_waiting_requests_take_turns_without_priority_groups(pair: Pair) -> None:
    """``waitQueue.pop`` for every pull consumer: a request served while others wait goes
    to the back of the queue."""
    await _stream_with(pair, 0)
    await pair.same(f"{CREATE}.C", _req({"durable_name": "C", "ack_policy": "explicit"}))
    body = {"batch": 2, "expires": 1_000_000_000}
    got = await _pulls(pair, "C", [("a", body, body), ("b", body, body)], 4, publish=4)
    assert got == ["a n0", "b n1", "a n2", "b n3"]
