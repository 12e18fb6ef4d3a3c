"""jsemu-only: message schedules on the server's clock, against a plain model, and after a
restart. (What fires and how it looks is compared with nats-server in
``tests/jetstream/api/test_msg_schedules.py``.)

The model: a schedule message on ``s.sched<i>`` (stored with ``Nats-Rollup: sub``) fires when
the clock passes its time; a copy on ``s.t<i>`` carries ``Nats-Scheduler`` and
``Nats-Schedule-Next`` (``purge`` for ``@at``, which then purges ``s.sched<i>``; for
``@every p`` the next time, ``fire + p`` or, when that is already past, ``now + p``). A plain
message on the schedule subject cancels it. Clock steps are whole seconds (each at least
Go's 250 ms timer floor), so one step is one scheduler run.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import jsemu
from jsemu.timefmt import format_ns

pytestmark = pytest.mark.fake_only

SECOND = 1_000_000_000
T0 = 1_900_000_000 * SECOND  # a whole second, in 2030

Op = tuple[Any, ...]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("at"), st.integers(0, 2), st.integers(-2, 6)),
        st.tuples(st.just("every"), st.integers(0, 2), st.integers(1, 4)),
        st.tuples(st.just("plain"), st.integers(0, 2)),
        st.tuples(st.just("advance"), st.integers(1, 4)),
    ),
    max_size=25,
)


def _hdr(*pairs: tuple[str, str]) -> bytes:
    return ("NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in pairs) + "\r\n").encode()


class Model:
    """What the stream should hold: (subject, header, body) in sequence order."""

    def __init__(self) -> None:
        self.now = T0
        self.msgs: list[tuple[str, bytes, bytes]] = []
        #: schedule subject -> (message index, fire time, period or 0 for @at)
        self.schedules: dict[str, tuple[int, int, int]] = {}

    def store(self, subject: str, hdr: bytes, body: bytes) -> None:
        self.msgs.append((subject, hdr, body))

    def schedule(self, i: int, pattern: str, fire: int, period: int, body: bytes) -> None:
        subject = f"s.sched{i}"
        self.msgs = [m for m in self.msgs if m[0] != subject]  # Nats-Rollup: sub
        hdr = _hdr(("Nats-Schedule", pattern), ("Nats-Schedule-Target", f"s.t{i}"), ("Nats-Rollup", "sub"))
        self.store(subject, hdr, body)
        self.schedules[subject] = (len(self.msgs) - 1, fire, period)

    def plain(self, i: int, body: bytes) -> None:
        self.store(f"s.sched{i}", b"", body)
        self.schedules.pop(f"s.sched{i}", None)

    def advance(self, seconds: int) -> None:
        self.now += seconds * SECOND
        due = [(s, v) for s, v in self.schedules.items() if v[1] <= self.now]
        for subject, (_, fire, period) in sorted(due, key=lambda item: self._seq(item[0])):
            body = next(m[2] for m in reversed(self.msgs) if m[0] == subject and m[1])
            target = "s.t" + subject.removeprefix("s.sched")
            if period:
                nxt = fire + period * SECOND
                if nxt < self.now:
                    nxt = self.now + period * SECOND
                self.store(target, _hdr(("Nats-Scheduler", subject), ("Nats-Schedule-Next", format_ns(nxt))), body)
                self.schedules[subject] = (self.schedules[subject][0], nxt, period)
            else:
                self.store(target, _hdr(("Nats-Scheduler", subject), ("Nats-Schedule-Next", "purge")), body)
                self.msgs = [m for m in self.msgs if m[0] != subject]
                del self.schedules[subject]

    def _seq(self, subject: str) -> int:
        return max(k for k, m in enumerate(self.msgs) if m[0] == subject and m[1])


def _stored(store: Any) -> list[tuple[str, bytes, bytes]]:
    st_ = store.state()
    out = []
    for seq in range(st_.first_seq, st_.last_seq + 1):
        msg = store.load(seq)
        if msg is not None:
            out.append((msg.subject.decode(), msg.hdr, msg.data))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops)
@example([("every", 0, 1), ("advance", 3), ("advance", 1)])  # overdue: next is one period from now
@example([("at", 1, 2), ("plain", 1), ("advance", 3), ("every", 2, 2), ("every", 2, 1), ("advance", 2)])
def test_schedules_follow_the_model(steps: list[Op]) -> None:
    asyncio.run(_run_model(steps))


async def _run_model(steps: list[Op]) -> None:
    async with jsemu.Server() as srv:
        ctl = srv.control
        ctl.freeze_clock(T0)
        nc = await nats.connect(srv.url)
        reply = await nc.request(
            "$JS.API.STREAM.CREATE.S",
            b'{"name":"S","subjects":["s.>"],"storage":"memory","allow_msg_schedules":true}',
            timeout=5,
        )
        assert b"error" not in reply.data, reply.data
        await nc.close()
        stream = srv.jetstream.streams["S"]
        model = Model()
        for n, step in enumerate(steps):
            body = b"b%d" % n
            if step[0] == "advance":
                ctl.advance_clock(seconds=step[1])
                model.advance(step[1])
                continue
            i = step[1]
            if step[0] == "plain":
                hdr = b""
                model.plain(i, body)
            elif step[0] == "at":
                fire = model.now + step[2] * SECOND
                pattern = "@at " + format_ns(fire)
                hdr = _hdr(("Nats-Schedule", pattern), ("Nats-Schedule-Target", f"s.t{i}"))
                model.schedule(i, pattern, fire, 0, body)
            else:
                pattern = f"@every {step[2]}s"
                hdr = _hdr(("Nats-Schedule", pattern), ("Nats-Schedule-Target", f"s.t{i}"))
                model.schedule(i, pattern, model.now + step[2] * SECOND, step[2], body)
            stream.publish(f"s.sched{i}".encode(), None, len(hdr) if hdr else -1, hdr + body)
            assert _stored(stream.store) == model.msgs, step
        assert _stored(stream.store) == model.msgs


async def test_schedules_survive_a_restart(tmp_path: Path) -> None:
    """A file stream's schedules come back from the stored messages: a repeating one at the
    time its last copy named, a one-shot one; both overdue, they fire once, at once."""
    start = (time.time_ns() // SECOND - 100) * SECOND
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        srv.control.freeze_clock(start)
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="F", subjects=["f.>"], allow_msg_schedules=True)  # type: ignore[call-arg]
        await js.publish("f.every", b"e", headers={"Nats-Schedule": "@every 10s", "Nats-Schedule-Target": "f.te"})
        at = "@at " + format_ns(start + 30 * SECOND)
        await js.publish("f.at", b"a", headers={"Nats-Schedule": at, "Nats-Schedule-Target": "f.ta"})
        srv.control.advance_clock(seconds=10.5)
        store = srv.jetstream.streams["F"].store
        nxt = format_ns(start + 20 * SECOND).encode()
        assert [(m[0], m[2]) for m in _stored(store)] == [("f.every", b"e"), ("f.at", b"a"), ("f.te", b"e")]
        assert _stored(store)[2][1].endswith(b"Nats-Schedule-Next: " + nxt + b"\r\n\r\n")
        await nc.close()
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        schedules = srv.jetstream.streams["F"].schedules
        assert schedules is not None
        assert set(schedules.schedules) == {b"f.every", b"f.at"}
        assert schedules.schedules[b"f.every"][1] == start + 20 * SECOND  # from the copy's header
        store = srv.jetstream.streams["F"].store
        for _ in range(100):
            if len(_stored(store)) == 4:
                break
            await asyncio.sleep(0.02)
        contents = _stored(store)
        assert [(m[0], m[2]) for m in contents] == [("f.every", b"e"), ("f.te", b"e"), ("f.te", b"e"), ("f.ta", b"a")]
        assert contents[3][1] == _hdr(("Nats-Scheduler", "f.at"), ("Nats-Schedule-Next", "purge"))
        # overdue: skipped ahead to one period from now, not start + 30 s
        assert schedules.schedules[b"f.every"][1] > time.time_ns()
