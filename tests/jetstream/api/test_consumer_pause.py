"""Pausing consumers, side by side with nats-server: ``CONSUMER.PAUSE`` replies and errors,
``pause_until`` in the create config, ``paused`` / ``pause_remaining`` in the info, what a
pull request gets while paused, the resume at ``pause_until`` and the ``consumer_pause``
advisories (on the same connection, so they are compared with the replies).

``pause_remaining`` (nanoseconds left, measured when each server answers) and the
advisories' ``id`` are the only values normalised beyond the pair's own rules; the
remaining time is checked to be within the pause.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
from support.pair import CONNECT, Pair, Side
from support.rawclient import RawClient

from jsemu.timefmt import format_ns

from .test_consumers import NEXT, _req, _stream_with, pull_frames

PAUSE = "$JS.API.CONSUMER.PAUSE.S"
CREATE = "$JS.API.CONSUMER.CREATE.S"
_REMAINING = re.compile(r'"pause_remaining":(\d+)')
_EVENT_ID = re.compile(r'"id":"[0-9A-Za-z]{22}"')
_ADVISORIES = b"SUB $JS.EVENT.ADVISORY.CONSUMER.PAUSE.> 99\r\n"


def _at(seconds: float) -> str:
    """An RFC 3339 time ``seconds`` from now (the same instant for both servers)."""
    return format_ns(time.time_ns() + int(seconds * 1e9))


def _scrub(text: str, longest: float) -> str:
    for m in _REMAINING.finditer(text):
        assert 0 < int(m.group(1)) <= longest * 1e9, text
    return _EVENT_ID.sub('"id":"<id>"', _REMAINING.sub('"pause_remaining":<n>', text))


async def same(pair: Pair, subject: str, payload: Any = b"", longest: float = 3600, timeout: float = 5.0) -> str:
    emu, real = await pair.request(subject, payload, timeout=timeout)
    emu, real = _scrub(emu, longest), _scrub(real, longest)
    assert emu == real, f"request {subject} {payload!r}"
    return real


class Advisories:
    """A connection of its own on each side subscribed to the pause advisories (they may
    trail the API reply, so they are collected apart and compared per step)."""

    def __init__(self, clients: list[RawClient], sides: list[Side], scrub: Any = None) -> None:
        self.clients = clients
        self.sides = sides
        self.extra_scrub = scrub

    @classmethod
    async def listen(cls, pair: Pair, subjects: tuple[str, ...] = (), scrub: Any = None) -> Advisories:
        clients = []
        for side in (pair.emu, pair.real):
            client = await RawClient.connect(_port(side), CONNECT)
            client.send(
                b"".join(b"SUB %s %d\r\n" % (s.encode(), 90 + i) for i, s in enumerate(subjects)) or _ADVISORIES
            )
            assert not await client.round_trip()
            clients.append(client)
        return cls(clients, [pair.emu, pair.real], scrub)

    async def expect(self, n: int) -> list[str]:
        """Exactly ``n`` advisories from each side, the same after normalising."""
        got = await asyncio.gather(*(self._take(c, s, n) for c, s in zip(self.clients, self.sides, strict=True)))
        if self.extra_scrub is not None:
            got = [[self.extra_scrub(text) for text in side] for side in got]
        assert got[0] == got[1]
        assert len(got[1]) == n, got[1]
        return got[1]

    async def expect_after_stream_delete(
        self, expected: list[str], timeout: float = 10.0, normalise: Any = None
    ) -> None:
        """The advisories of a stream delete: exactly ``expected`` (sorted) from jsemu, a
        subset from the binary. nats-server's ``stream.stop`` queues the consumers' and the
        stream's delete advisories on the stream's send queue and then closes that queue's
        loop; Go's ``select`` can take the quit first, and the rest are never written (seen
        under load for either kind). Under load the last can also trail by seconds, hence
        the long wait (it is only waited out when the binary lost one)."""
        got = await asyncio.gather(
            *(self._take(c, s, len(expected), timeout) for c, s in zip(self.clients, self.sides, strict=True))
        )
        if self.extra_scrub is not None:
            got = [[self.extra_scrub(text) for text in side] for side in got]
        emu, real = (sorted(normalise(t.strip()) if normalise else t.strip() for t in side) for side in got)
        assert emu == sorted(expected)
        assert set(real) <= set(expected), real

    @staticmethod
    async def _take(client: RawClient, side: Side, n: int, timeout: float = 2.0) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            frame = await client.next_frame(timeout)
            if frame is None:
                break
            if frame.startswith(b"MSG "):
                out.append(frame.split(b"\r\n", 1)[1].decode())
        out += [f.decode() for f in await client.round_trip() if not f.startswith(b"INFO")]
        return [_EVENT_ID.sub('"id":"<id>"', side.scrub(text)) for text in out]

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


def _port(side: Side) -> int:
    port: int = side.client.writer.get_extra_info("peername")[1]
    return port


async def test_pause_api_replies_errors_info_and_advisories(pair: Pair) -> None:
    await _stream_with(pair)
    adv = await Advisories.listen(pair)
    until = _at(3600)
    got = await same(pair, f"{CREATE}.C", _req({"durable_name": "C", "ack_policy": "explicit", "pause_until": until}))
    assert '"paused":true' in got
    assert '"paused":true' in (await adv.expect(1))[0]  # after the create reply
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
    await same(pair, f"{PAUSE}.C", {})  # resume: zero time, level 0 again
    assert '"paused":false,"pause_until":"0001-01-01T00:00:00Z"' in (await adv.expect(1))[0]
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
    await same(pair, f"{PAUSE}.C", {"pause_until": until})
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
    await same(pair, "$JS.API.CONSUMER.LIST.S")
    await adv.expect(1)
    await same(pair, f"{PAUSE}.C", {"pause_until": until})  # unchanged: no advisory
    await adv.expect(0)
    # an update keeps the pause of the consumer, and its reply is followed by the advisory
    await same(pair, f"{CREATE}.C", _req({"durable_name": "C", "ack_policy": "explicit", "max_deliver": 3}))
    assert '"paused":true' in (await adv.expect(1))[0]
    await same(pair, f"{PAUSE}.C", {"pause_until": _at(-60)})  # in the past: not paused, kept
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
    await same(pair, f"{PAUSE}.C", {"pause_until": "0001-01-01T00:00:00Z"})
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
    await adv.expect(2)
    for body in (b"", b"garbage", b"[]", {"pause_until": "nope"}, {"pause_until": until, "x": 1}, {"pause_until": 5}):
        await same(pair, f"{PAUSE}.C", body)
    await same(pair, f"{PAUSE}.X", {"pause_until": until})
    await same(pair, "$JS.API.CONSUMER.PAUSE.T.C", {"pause_until": until})
    await same(pair, PAUSE, {"pause_until": until}, timeout=2.0)  # no consumer token: no reply
    await same(pair, "$JS.API.INFO")
    await adv.expect(0)
    await adv.close()


async def test_paused_pull_requests_and_resume_at_pause_until(pair: Pair) -> None:
    await _stream_with(pair)
    adv = await Advisories.listen(pair)
    await same(pair, f"{CREATE}.C", _req({"durable_name": "C", "ack_policy": "explicit", "pause_until": _at(3600)}))
    # paused: a no-wait request ends at once, one with expires times out with its batch
    emu, real = await pull_frames(pair, NEXT + ".C", {"batch": 2, "no_wait": True}, 1)
    assert emu.frames == real.frames and real.frames and "404" in real.frames[0]
    emu, real = await pull_frames(pair, NEXT + ".C", {"batch": 2, "expires": 300_000_000}, 1)
    assert emu.frames == real.frames and real.frames and "408" in real.frames[0]
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
    # pause until shortly: a waiting request gets the messages once the pause ends, with
    # the advisory that says so
    await same(pair, f"{PAUSE}.C", {"pause_until": _at(0.8)}, longest=0.8)
    emu, real = await pull_frames(pair, NEXT + ".C", {"batch": 3, "expires": 5_000_000_000}, 3, timeout=4)
    assert emu.frames == real.frames and len(real.frames) == 3
    events = await adv.expect(3)  # paused at create, paused again, resumed
    assert '"paused":false' in events[2]
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
    await adv.close()


async def test_resume_by_api_wakes_nothing_until_the_next_request_or_message(pair: Pair) -> None:
    """nats-server 2.15.1: ``CONSUMER.PAUSE`` with no time resumes the consumer without
    signalling it, so a request already waiting gets nothing and times out with its whole
    batch (a new request or message would have woken it).

    The binary's consumer loop wakes for the request on its own goroutine and finds the
    consumer paused; when that goroutine runs late (a loaded machine), after the resume, it
    delivers instead. The pause is sent 0.2 s after the request to make that rare; when it
    happens anyway, the binary's side cannot be compared and the test says so (skip);
    jsemu's frame is checked either way."""
    await _stream_with(pair)
    await same(pair, f"{CREATE}.C", _req({"durable_name": "C", "ack_policy": "explicit", "pause_until": _at(3600)}))
    for side in (pair.emu, pair.real):
        side.client.send(b"SUB _PR.c pr\r\n")
        side._send(NEXT + ".C", b"_PR.c", b'{"batch":2,"expires":700000000}', None)
        assert not await side.client.round_trip()
    await asyncio.sleep(0.2)
    await same(pair, f"{PAUSE}.C", {})
    got = await asyncio.gather(*(side.client.next_frame(1.5) for side in (pair.emu, pair.real)))
    texts = [side.normalise(f) if f else "" for side, f in zip((pair.emu, pair.real), got, strict=True)]
    assert "408 Request Timeout" in texts[0] and "Nats-Pending-Messages: 2" in texts[0], texts[0]
    if got[1] is not None and got[1].startswith(b"MSG s."):
        pytest.skip("nats-server's consumer loop ran after the resume (its race): delivered, not comparable")
    assert texts[0] == texts[1]
    await same(pair, "$JS.API.CONSUMER.INFO.S.C")
