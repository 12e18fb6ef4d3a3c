"""hypothesis: pull requests drawn from the whole field space, answered as nats-server answers.

Each example draws a consumer and its state (its priority policy and groups, limits on batch,
expires and max_bytes, ``max_waiting``, messages pending or not, some delivered and unacked)
and one to three ``$JS.API.CONSUMER.MSG.NEXT`` payloads (every field of the request, types right
and wrong, zero, negative and huge values, unknown keys, bare numbers and junk), then perhaps a
message published while the requests wait. Both servers get the same steps and every frame sent
to the requests' inboxes within a short window (messages, ``100 Idle Heartbeat``, the 400, 404,
408, 409 and 423 statuses with their headers) must be the same, in the same order.

One nats-server process and one jsemu serve the whole test; each example has its own stream
(deleted at the next one) and its own inbox prefix (unsubscribed after it, so a late status of
an old request lands nowhere). Times are kept small and clear of each other's edges: a
heartbeat due within a few milliseconds of an expiry would make the order of the two a race on
either server. Volatile values are normalised: ack timestamps, pin ids, creation times.

A longer hunt: ``JSEMU_PULL_EXAMPLES=500 pytest -n0 --timeout 900 <this file>`` (about 2 min).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.pair import Pair, Side
from support.servers import RealServer

import jsemu

MS = 1_000_000
#: Examples per run: 40 in CI (about 10 s); ``JSEMU_PULL_EXAMPLES`` for a longer hunt.
EXAMPLES = int(os.environ.get("JSEMU_PULL_EXAMPLES", "40"))
_ACK_TS = re.compile(r"(\$JS\.ACK\.[^. ]+\.[^. ]+\.\d+\.\d+\.\d+\.)\d+(\.\d+)")
_PIN = re.compile(r"(Nats-Pin-Id: )([0-9A-Za-z]{22})")
_CTRL = re.compile(rb"^(MSG|HMSG) ([^ \r\n]+) ([^ \r\n]+)")
_FAKE_PIN = "XXXXXXXXXXXXXXXXXXXXXX"

# --- what a request may say -----------------------------------------------------------------

_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "batch": st.sampled_from([0, 1, 2, 5, -1, 2**31, 2**63, "1", 1.5, True, None]),
    # Expiries (when a request is served at all) end at 150 or 280 ms, heartbeats come at 60
    # or 100 ms: at least 30 ms between a heartbeat and an expiry, and 30 ms from the late
    # publish below.
    "expires": st.sampled_from([0, 1, MS, 150 * MS, 280 * MS, -1, -100 * MS, 10**15, "1s", 1.5, None]),
    "max_bytes": st.sampled_from([0, 1, 50, 100, 10_000, -1, "x"]),
    "no_wait": st.sampled_from([True, False, 1, "true", None]),
    "idle_heartbeat": st.sampled_from([0, 60 * MS, 100 * MS, -1, 10**12, "1s"]),
    "group": st.sampled_from(["A", "B", "", 5]),
    "min_pending": st.sampled_from([0, 1, 3, 10, -1, 2**63]),
    "min_ack_pending": st.sampled_from([0, 1, 2, -1]),
    "id": st.sampled_from(["", _FAKE_PIN, 7]),
    "priority": st.sampled_from([0, 1, 2, 9, 10, -1, "1"]),
    "bogus": st.sampled_from([1, "x"]),  # unknown keys are ignored
    "Batch": st.sampled_from([2, 3]),  # Go matches keys case-insensitively
}
_RAW = st.sampled_from([b"", b"2", b" 3 ", b"0", b"-1", b"abc", b"{", b"[1]", b"{}", b"null", b'{"batch":1}x'])


@st.composite
def next_request(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 5)) == 0:
        return draw(_RAW)
    keys = draw(st.lists(st.sampled_from(sorted(_FIELDS)), max_size=6, unique=True))
    return json.dumps({k: draw(_FIELDS[k]) for k in keys}).encode()


@st.composite
def consumer_config(draw: st.DrawFn) -> dict[str, Any]:
    cfg: dict[str, Any] = {"durable_name": "C", "ack_policy": draw(st.sampled_from(["explicit", "none", "all"]))}
    policy = draw(st.sampled_from(["none", "overflow", "pinned_client", "prioritized"]))
    if policy != "none":
        cfg["priority_policy"] = policy
        cfg["priority_groups"] = draw(st.sampled_from([["A"], ["A", "B"]]))
        if policy == "pinned_client" and draw(st.booleans()):
            cfg["priority_timeout"] = 10_000 * MS
    optional = {
        "max_waiting": st.sampled_from([1, 2]),
        "max_batch": st.sampled_from([1, 2]),
        "max_expires": st.sampled_from([200 * MS, 10_000 * MS]),
        "max_bytes": st.sampled_from([100, 1000]),
        "max_ack_pending": st.sampled_from([1, 2]),
    }
    for key, values in optional.items():
        if draw(st.integers(0, 3)) == 0:
            cfg[key] = draw(values)
    return cfg


case = st.fixed_dictionaries(
    {
        "config": consumer_config(),
        "sizes": st.lists(st.sampled_from([0, 5, 60]), max_size=3),  # payload sizes of the stored messages
        "unacked": st.integers(0, 2),  # delivered (not acked) before the requests
        "requests": st.lists(next_request(), min_size=1, max_size=3),
        # A message published while the requests wait (only one: the pending count in the
        # ack subject of the first of two would depend on whether the second was stored yet).
        "late": st.integers(0, 1),
    }
)

# --- the two servers --------------------------------------------------------------------------


class Bench:
    """jsemu and nats-server for one test function, on one event loop the examples reuse."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-pulls-")
        self.real = RealServer()
        self.emu = jsemu.Server(store_dir=self.tmp.name)
        self.loop.run_until_complete(self.emu.start())
        self.pair = self.loop.run_until_complete(self._connect())
        self.n = 0

    async def _connect(self) -> Pair:
        return Pair(await Side.connect("jsemu", self.emu.port), await Side.connect("real", self.real.port))

    def close(self) -> None:
        self.loop.run_until_complete(self.pair.close())
        self.loop.run_until_complete(self.emu.stop())
        self.loop.close()
        self.real.stop()
        self.tmp.cleanup()

    def run(self, case: dict[str, Any]) -> None:
        self.n += 1
        try:
            self.loop.run_until_complete(self._example(self.n, case))
        except BaseException:
            # Frames of the failed example may still be on their way: start the next on
            # fresh connections.
            self.loop.run_until_complete(self.pair.close())
            self.pair = self.loop.run_until_complete(self._connect())
            raise

    async def _example(self, n: int, case: dict[str, Any]) -> None:
        pair = self.pair
        if n > 1:
            await pair.same(f"$JS.API.STREAM.DELETE.P{n - 1}")
        stream, subject = f"P{n}", f"p{n}.x"
        await pair.same(
            f"$JS.API.STREAM.CREATE.{stream}", {"name": stream, "subjects": [f"p{n}.>"], "storage": "memory"}
        )
        for size in case["sizes"]:
            await pair.same(subject, b"m" * size)
        created = await pair.same(
            f"$JS.API.CONSUMER.CREATE.{stream}.C", {"stream_name": stream, "config": case["config"]}
        )
        if "error" in created:
            return
        nxt = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.C"
        prefix = f"R{n}"
        if case["unacked"]:
            grouped = {"group": "A"} if case["config"].get("priority_groups") else {}
            pre = json.dumps({"batch": case["unacked"], "no_wait": True, **grouped}).encode()
            await self._both(lambda side: _pull(side, prefix, [(f"{prefix}.pre", pre)], nxt, subject, 0, 0.03))
        requests = [(f"{prefix}.{i}", body) for i, body in enumerate(case["requests"])]
        window = 0.35 if any(_waits(body) for _, body in requests) else 0.1
        await self._both(lambda side: _pull(side, prefix, requests, nxt, subject, case["late"], window))

    async def _both(self, run: Any) -> None:
        emu, real = await asyncio.gather(run(self.pair.emu), run(self.pair.real))
        assert emu == real, f"jsemu: {emu}\nreal: {real}"


def _waits(body: bytes) -> bool:
    return b"expires" in body.lower() or b"idle_heartbeat" in body


async def _pull(
    side: Side, prefix: str, requests: list[tuple[str, bytes]], nxt: str, subject: str, late: int, window: float
) -> dict[str, list[str]]:
    """Send the requests 10 ms apart, publish ``late`` messages 15 ms after the last, and
    return every frame within ``window`` seconds after that (and before the PONG ending
    it), by the request it answers, in the order each request's inbox got them.

    Requests in one write race on nats-server (its consumer takes them in one goroutine
    while another delivers), so they go apart; the order across inboxes is not compared
    (each request's heartbeats and expiry keep their own time), what each got is."""
    client = side.client
    sids = {b"%d" % (100 + i): inbox for i, (inbox, _) in enumerate(requests)}
    client.send(b"".join(b"SUB %s %s\r\n" % (inbox.encode(), sid) for sid, inbox in sids.items()))
    frames: list[bytes] = []

    async def read() -> None:
        while not client.eof:
            frame = await client.next_frame(5.0)
            if frame == b"PING\r\n":
                client.send(b"PONG\r\n")
            elif frame is not None and not frame.startswith(b"INFO "):
                frames.append(frame)

    reader = asyncio.ensure_future(read())
    try:
        for inbox, body in requests:
            side._send(nxt, inbox.encode(), body, None)
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.005)
        for i in range(late):
            side._send(subject, None, b"late%d" % i, None)
        await asyncio.sleep(window)
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    client.send(b"".join(b"UNSUB %s\r\n" % sid for sid in sids))
    frames += await client.round_trip()
    out: dict[str, list[str]] = {}
    for frame in frames:
        m = _CTRL.match(frame)
        key = sids.get(m.group(3), "?") if m else "?"
        out.setdefault(key, []).append(_describe(side, frame))
    return out


def _describe(side: Side, frame: bytes) -> str:
    """A frame as text (a pull delivery shows the message's own subject)."""
    m = _CTRL.match(frame)
    if m is None:
        return frame.decode(errors="backslashreplace")
    text = m.group(2).decode() + " " + side.normalise(frame)
    return _PIN.sub(r"\1<pin>", _ACK_TS.sub(r"\1<ts>\2", text))


# --- the test ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bench() -> Iterator[Bench]:
    b = Bench()
    try:
        yield b
    finally:
        b.close()


_PINNED = {"priority_policy": "pinned_client", "priority_groups": ["A"], "max_waiting": 2}


_PRIORITIZED = {"priority_policy": "prioritized", "priority_groups": ["A"]}


def _grouped(**fields: Any) -> dict[str, Any]:
    return {"batch": 1, "group": "A", "expires": 280 * MS, **fields}


def _case(
    config: dict[str, Any], requests: list[Any], sizes: tuple[int, ...] = (5,), unacked: int = 0, late: int = 0
) -> dict[str, Any]:
    bodies = [r if isinstance(r, bytes) else json.dumps(r).encode() for r in requests]
    return {
        "config": {"durable_name": "C", "ack_policy": "explicit", **config},
        "sizes": list(sizes),
        "unacked": unacked,
        "requests": bodies,
        "late": late,
    }


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=case)
# nats-py asks with no_wait and idle_heartbeat but no expires when it already holds messages:
# nats-server 2.15.1 refuses that as "heartbeat value too large" (hb*2 > expires of 0).
@example(case=_case({}, [{"batch": 2, "no_wait": True, "idle_heartbeat": 5_000 * MS}]))
# Bare batch numbers (no priority group) to a pinned_client consumer.
@example(case=_case(_PINNED, [b"0", b"{}", b"2"], sizes=(0, 60, 0), unacked=1, late=1))
# prioritized: a priority 1 and a priority 0 request wait together; priority 0 gets the message.
@example(case=_case(_PRIORITIZED, [_grouped(priority=1), _grouped(priority=0)], sizes=(), late=1))
@example(case=_case(_PRIORITIZED, [_grouped(priority=10), _grouped(priority=-1), _grouped(priority=9)], sizes=(5,)))
# Go arms a heartbeat only when it is > 0: a negative one is no heartbeat at all.
@example(case=_case({}, [{"idle_heartbeat": -1, "expires": 150 * MS}], sizes=()))
# json.Unmarshal's texts: no offsets, a cut-off value, something after the value.
@example(case=_case({}, [b"{", b'{"batch":1}x', b'{"batch":}'], sizes=()))
def test_random_pull_requests(bench: Bench, case: dict[str, Any]) -> None:
    bench.run(case)
