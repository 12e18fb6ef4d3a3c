"""Timestamps are normalised away in the comparisons, so check them within each server:
format (Go's RFC3339Nano in UTC) and consistency between the replies."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime

RFC3339NANO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{0,8}[1-9])?Z$")


def ns(ts: str) -> int:
    """Nanoseconds since the epoch of an RFC3339Nano UTC timestamp."""
    assert RFC3339NANO.match(ts), ts
    whole, _, frac = ts[:-1].partition(".")
    secs = int(datetime.fromisoformat(whole + "+00:00").timestamp())
    return secs * 1_000_000_000 + int((frac + "000000000")[:9])


async def test_timestamps_consistent(pair, storage) -> None:
    created = await pair.each("$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["foo.*"], "storage": storage})
    for i in range(3):
        await pair.same(f"foo.{i}", str(i))
        await asyncio.sleep(0.002)
    infos = await pair.each("$JS.API.STREAM.INFO.S")
    firsts = await pair.each("$JS.API.STREAM.MSG.GET.S", {"seq": 1})
    seconds = await pair.each("$JS.API.STREAM.MSG.GET.S", {"seq": 2})
    lasts = await pair.each("$JS.API.STREAM.MSG.GET.S", {"seq": 3})
    for side, create, info, first, second, last in zip(
        ("jsemu", "real"), created, infos, firsts, seconds, lasts, strict=True
    ):
        state = info["state"]
        assert info["created"] == create["created"], side
        assert state["first_ts"] == first["message"]["time"], side
        assert state["last_ts"] == last["message"]["time"], side
        order = [
            ns(create["created"]),
            ns(create["ts"]),
            ns(first["message"]["time"]),
            ns(second["message"]["time"]),
            ns(last["message"]["time"]),
            ns(info["ts"]),
        ]
        assert order == sorted(order), (side, order)
        assert len(set(order[2:5])) == 3, (side, order)


async def test_first_ts_after_deleting_first(pair, storage) -> None:
    await pair.create("S", storage=storage)
    for i in range(3):
        await pair.same("S", str(i))
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
    infos = await pair.each("$JS.API.STREAM.INFO.S")
    seconds = await pair.each("$JS.API.STREAM.MSG.GET.S", {"seq": 2})
    for side, info, second in zip(("jsemu", "real"), infos, seconds, strict=True):
        assert info["state"]["first_ts"] == second["message"]["time"], side


async def test_start_time_selects_by_stored_time(pair, storage) -> None:
    """MSG.GET ``start_time`` equal to a message's own timestamp selects that message."""
    await pair.create("S", storage=storage)
    for i in range(3):
        await pair.same("S", str(i))
        await asyncio.sleep(0.002)
    seconds = await pair.each("$JS.API.STREAM.MSG.GET.S", {"seq": 2})
    for side, second in zip((pair.emu, pair.real), seconds, strict=True):
        t = second["message"]["time"]
        got = await side.request("$JS.API.STREAM.MSG.GET.S", b'{"start_time":"%s"}' % t.encode(), None, 2.0)
        assert '"seq":2,' in got, (side.name, got)
