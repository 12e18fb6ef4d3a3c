"""jsemu-only: an injected clock drives stored timestamps, max_age and the dedup window.

The real server cannot do this (it reads the wall clock), so these run against jsemu alone;
the behaviour at the boundaries is pinned against Go's rules in tests/store.
"""

from __future__ import annotations

import json

import nats

import jsemu
from jsemu.store import ManualClock
from jsemu.timefmt import format_ns

SECOND = 1_000_000_000


async def test_max_age_and_timestamps_follow_the_clock() -> None:
    clock = ManualClock(1_767_225_600_123_456_789)
    async with jsemu.Server(clock=clock) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], max_age=1.0, storage="memory")
        await js.publish("s.a", b"x")
        reply = await nc.request("$JS.API.STREAM.MSG.GET.S", b'{"seq":1}')
        assert json.loads(reply.data)["message"]["time"] == format_ns(clock.now_ns())
        clock.advance(SECOND - 1)
        assert (await js.stream_info("S")).state.messages == 1
        clock.advance(1)  # exactly max_age old: gone (Go removes ts <= now - max_age)
        info = await js.stream_info("S")
        assert (info.state.messages, info.state.first_seq, info.state.last_seq) == (0, 2, 1)
        await nc.close()


async def test_dedup_window_follows_the_clock() -> None:
    clock = ManualClock()
    async with jsemu.Server(clock=clock) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], duplicate_window=10.0)
        assert (await js.publish("s.a", b"1", headers={"Nats-Msg-Id": "m"})).seq == 1
        clock.advance(9 * SECOND)
        dup = await js.publish("s.a", b"2", headers={"Nats-Msg-Id": "m"})
        assert (dup.seq, dup.duplicate) == (1, True)
        clock.advance(SECOND)
        again = await js.publish("s.a", b"3", headers={"Nats-Msg-Id": "m"})
        assert (again.seq, again.duplicate) == (2, None)
        await nc.close()


def test_controlled_clock_advance_and_resume() -> None:
    """``ControlledClock`` (what the control plane moves): an advance applies whether the
    clock is frozen or running, and ``resume`` runs on from where the frozen clock was moved
    to, not from the wall clock."""
    import time

    from jsemu.store import ControlledClock

    hour = 3600 * SECOND
    clock = ControlledClock()
    clock.advance(hour)  # running from plain wall time
    assert hour - SECOND < clock.now_ns() - time.time_ns() <= hour
    clock.reset()
    at = time.time_ns() - 10 * hour
    assert clock.freeze(at) == at
    clock.advance(SECOND)
    assert clock.now_ns() == at + SECOND
    clock.resume()
    assert 0 <= clock.now_ns() - (at + SECOND) < SECOND
