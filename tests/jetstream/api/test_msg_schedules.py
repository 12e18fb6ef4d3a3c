"""Message schedules (``allow_msg_schedules``, ``Nats-Schedule``), jsemu against nats-server 2.15.1.

Publish errors come in the server's order; what fires is compared message by message
(``STREAM.MSG.GET``: subject, headers such as ``Nats-Scheduler`` / ``Nats-Schedule-Next``,
body; timestamps normalised). The real server waits on the wall clock; jsemu's clock is
frozen at the same moment (aligned to 0.2 s past a whole second, as schedules fire on whole
seconds) and advanced by the same amount, so both sample at 0.6 s past a second.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

from support.pair import REAL_REAL, Pair

from .test_msg_ttl import gets, pass_time

CREATE = "$JS.API.STREAM.CREATE"
SCHED = {"allow_msg_schedules": True}


async def aligned_freeze(pair: Pair) -> float:
    """Wait until 0.2 s past a whole second, then freeze jsemu's clock; the wall time."""
    now = time.time()
    await asyncio.sleep((1.2 - now % 1.0) % 1.0)
    if not REAL_REAL:
        reply = await pair.emu.request("$JSEMU.API.FREEZE_CLOCK", b"{}", None, 2.0, scrub=False)
        assert '"ok":true' in reply.replace(" ", ""), reply
    return time.time()


def at(seconds_from_now: float) -> str:
    t = datetime.fromtimestamp(int(time.time() + seconds_from_now), UTC)
    return "@at " + t.strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_config_rules(pair: Pair) -> None:
    """Combinations the server refuses, rollups turned on for a schedule stream, and an
    update can turn schedules on but never off."""
    await pair.create("C", subjects=["c"], allow_msg_counter=True, **SCHED)
    await pair.create("D", subjects=["d"], discard="new", **SCHED)
    await pair.create("R", subjects=["r"], allow_rollup_hdrs=False, deny_purge=True, **SCHED)
    await pair.same(f"{CREATE}.P", {"name": "P", "subjects": ["p"], "allow_msg_schedules": True, "pedantic": True})
    await pair.create("U", subjects=["u"], storage="memory")
    await pair.same("$JS.API.STREAM.UPDATE.U", {"name": "U", "subjects": ["u"], "storage": "memory", **SCHED})
    await pair.same("$JS.API.STREAM.UPDATE.U", {"name": "U", "subjects": ["u"], "storage": "memory"})


BAD_SCHEDULES: list[dict[str, str]] = [
    {"Nats-Schedule": "@at 2099-01-01T00:00:00Z"},  # no target
    {"Nats-Schedule": "@at 2099-01-01T00:00:00Z", "Nats-Schedule-Target": "s.sched"},  # itself
    {"Nats-Schedule": "@at 2099-01-01T00:00:00Z", "Nats-Schedule-Target": "s.*"},
    {"Nats-Schedule": "@at 2099-01-01T00:00:00Z", "Nats-Schedule-Target": "other"},
    {"Nats-Schedule": "@at 2099-01-01", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "@at 2099-02-30T00:00:00Z", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "@every 500ms", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "@every x", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "@every 1s", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": "UTC"},
    {"Nats-Schedule": "0 0 * * *", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "60 0 * * * *", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "0 0 0 0 * *", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "0 0 5-2 * * *", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "0 0 */0 * * *", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "0 0 0 * foo *", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "@often", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "0 0 * * * *", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": "Mars/Base"},
    {"Nats-Schedule": "0 0 * * * *", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": ""},
    {"Nats-Schedule-Time-Zone": "Nowhere"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-TTL": "bogus"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-TTL": "500ms"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Rollup": "all"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Rollup": "SUB"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Rollup": "all"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "s.t"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "s.sched"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "s.>"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "elsewhere"},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "nowhere", "Nats-Schedule-Source": "s.>"},
    {"Nats-Schedule": "bogus", "Nats-Schedule-TTL": "bogus", "Nats-Schedule-Target": "s.*"},
    {"Nats-Schedule-Next": "purge"},
    {"Nats-Schedule-Next": "2099-01-01T00:00:00Z", "Nats-Scheduler": "s.x"},
    {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.sched"},
    {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.*"},
    {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.plain"},  # not a schedule message
    {"Nats-Scheduler": "s.x"},
    {"Nats-Schedule": ""},
    {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t"},
    {"Nats-Schedule": "0 30 9 * * MON-FRI", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": "Europe/Paris"},
    {"Nats-Schedule": "@weekly", "Nats-Schedule-Target": "s.t", "Nats-Rollup": "SUB"},
    {"Nats-Schedule": "@daily", "Nats-Schedule-Target": "s.t", "Nats-Schedule-TTL": "5s"},
    {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.none"},  # no message: allowed
]


async def test_publish_rules_in_the_servers_order(pair: Pair) -> None:
    """Every bad schedule gets the server's first error; the good ones are stored (with
    ``Nats-Rollup: sub`` added)."""
    await pair.create("S", subjects=["s.>"], storage="memory", **SCHED)
    await pair.same("s.plain", "x")
    for headers in BAD_SCHEDULES:
        await pair.same("s.sched", "x", headers)
    await gets(pair, 6)


async def test_schedule_headers_without_schedules_or_ttls(pair: Pair) -> None:
    """On a stream without schedules each schedule header is ``disabled`` (or the scheduler
    error); a schedule TTL on a schedule stream without TTLs is the TTL error."""
    await pair.create("N", subjects=["n.>"], storage="memory")
    for headers in BAD_SCHEDULES:
        await pair.same("n.sched", "x", headers)
    await pair.create("T", subjects=["t.>"], storage="memory", **SCHED)
    await pair.same("t.s", "x", {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "t.t", "Nats-Schedule-TTL": "5s"})
    both = {"Nats-Schedule-TTL": "5s", "Nats-Schedule-Rollup": "all"}  # the rollup is checked first
    await pair.same("t.s", "x", {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "t.t", **both})


async def test_at_fires_once_and_the_schedule_is_purged(pair: Pair) -> None:
    """``@at``: the copy on the target carries ``Nats-Scheduler`` and ``Nats-Schedule-Next:
    purge`` (schedule headers, ``Nats-Msg-Id``, ``Nats-Expected-*``, ``Nats-TTL`` and the rollup
    stripped; the schedule TTL and rollup applied), then the schedule message is gone."""
    await pair.create("S", subjects=["s.>"], storage="memory", allow_msg_ttl=True, **SCHED)
    await aligned_freeze(pair)
    headers = {
        "A": "1",
        "Nats-Schedule": at(2),
        "Nats-Schedule-Target": "s.t",
        "Nats-Msg-Id": "m1",
        "Nats-Expected-Stream": "S",
        "Nats-TTL": "1h",
        "Nats-Schedule-TTL": "30s",
        "Nats-Schedule-Rollup": "sub",
        "Z": "2",
    }
    await pair.same("s.t", "old")
    await pair.same("s.past", "p", {"Nats-Schedule": "@at 2020-01-01T00:00:00Z", "Nats-Schedule-Target": "s.t2"})
    await pair.same("s.sched", "body", headers)
    await gets(pair, 3)
    await pass_time(pair, 1.0)
    await gets(pair, 5)
    await pass_time(pair, 1.4)
    await gets(pair, 6)
    await pair.info(payload={"subjects_filter": ">"})


async def test_every_and_cron_repeat_on_whole_seconds(pair: Pair) -> None:
    """``@every 1s`` and ``* * * * * *`` fire each second, ``Nats-Schedule-Next`` naming the
    next one; a plain message on the schedule subject cancels it, a client purge too."""
    await pair.create("S", subjects=["s.>"], storage="memory", **SCHED)
    await aligned_freeze(pair)
    await pair.same("s.every", "e", {"Nats-Schedule": "@every 1s", "Nats-Schedule-Target": "s.te", "H": "v"})
    await pair.same("s.cron", "c", {"Nats-Schedule": "* * * * * *", "Nats-Schedule-Target": "s.tc"})
    await pair.same("s.zone", "z", {"Nats-Schedule": "*/1 * * * * *", "Nats-Schedule-Target": "s.tz",
                                    "Nats-Schedule-Time-Zone": "Asia/Kolkata"})  # fmt: skip
    # day of month and weekday both restricted (no "*"): either one matches, so every day
    await pair.same("s.or", "o", {"Nats-Schedule": "* * * 1 * 0-6", "Nats-Schedule-Target": "s.tor"})
    # with "*" in either, both must match: only on the 1st (the 1st of a month, both fire)
    await pair.same("s.and", "a", {"Nats-Schedule": "* * * 1 * *", "Nats-Schedule-Target": "s.tand"})
    await pass_time(pair, 2.4)
    await pair.info(payload={"subjects_filter": ">"})
    await pair.same("s.every", "stop")
    await pair.same("s.te", "x", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.cron"})
    await pass_time(pair, 2.0)
    await pair.info(payload={"subjects_filter": ">"})
    last = (await pair.info())["state"]["last_seq"]
    await gets(pair, last)


async def test_source_copies_the_last_message_of_a_subject(pair: Pair) -> None:
    """``Nats-Schedule-Source``: the copy has that subject's last message (headers and body);
    without one it falls back to the schedule message's own content."""
    await pair.create("S", subjects=["s.>"], storage="memory", **SCHED)
    await aligned_freeze(pair)
    src = {"Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "s.src"}
    await pair.same("s.a", "fallback", {"Nats-Schedule": at(1), **src})
    await pass_time(pair, 1.4)
    await pair.same("s.src", "source body", {"K": "v", "Nats-Msg-Id": "x"})
    await pair.same("s.b", "own", {"Nats-Schedule": at(1), **src})
    await pass_time(pair, 1.0)
    last = (await pair.info())["state"]["last_seq"]
    await gets(pair, last)


async def test_schedules_in_an_atomic_batch(pair: Pair) -> None:
    """A schedule staged in an atomic batch is checked at the commit and fires once stored
    (its copy keeps the batch headers); a bad one fails the whole batch."""
    await pair.create("S", subjects=["s.>"], storage="memory", allow_atomic=True, **SCHED)
    await aligned_freeze(pair)
    sched = {"Nats-Schedule": at(1), "Nats-Schedule-Target": "s.t"}
    await pair.publish("s.a", "1", {"Nats-Batch-Id": "b1", "Nats-Batch-Sequence": "1", **sched}, barrier=False)
    await pair.same("s.b", "2", {"Nats-Batch-Id": "b1", "Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"})
    bad = {"Nats-Schedule": "bad", "Nats-Schedule-Target": "s.t"}
    await pair.same("s.c", "3", {"Nats-Batch-Id": "b2", "Nats-Batch-Sequence": "1", "Nats-Batch-Commit": "1", **bad})
    await gets(pair, 2)
    await pass_time(pair, 1.4)
    await gets(pair, 3)
    await pair.info(payload={"subjects_filter": ">"})
