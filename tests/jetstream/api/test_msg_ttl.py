"""Per-message TTL (``Nats-TTL``) and subject delete markers, jsemu against nats-server 2.15.1.

Expiry: the real server waits on the wall clock (small TTLs), jsemu's clock is frozen and
advanced by the same amount through the control plane (``$JSEMU.API``), so its side never
sleeps and never races. In real-real mode both sides just wait.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from support.pair import REAL_REAL, Pair

G = "$JS.API.STREAM.MSG.GET.S"
SECOND = 1_000_000_000


async def freeze(pair: Pair) -> None:
    if not REAL_REAL:
        reply = await pair.emu.request("$JSEMU.API.FREEZE_CLOCK", b"{}", None, 2.0, scrub=False)
        assert '"ok":true' in reply.replace(" ", ""), reply


async def pass_time(pair: Pair, seconds: float, step: float = 0.1) -> None:
    """``seconds`` go by on both servers: a wait for the real one, clock steps of ``step``
    for jsemu (so what expires in between happens at about the same time on both)."""
    if REAL_REAL:
        await asyncio.sleep(seconds)
        return

    async def advance() -> None:
        left = seconds
        while left > 1e-9:
            dt = min(step, left)
            body = json.dumps({"seconds": dt}).encode()
            reply = await pair.emu.request("$JSEMU.API.ADVANCE_CLOCK", body, None, 2.0, scrub=False)
            assert '"ok":true' in reply.replace(" ", ""), reply
            left -= dt

    await asyncio.gather(advance(), asyncio.sleep(seconds))


async def gets(pair: Pair, last: int) -> None:
    """Every sequence up to ``last`` by ``STREAM.MSG.GET``: the same message or the same 404."""
    for seq in range(1, last + 1):
        await pair.same(G, {"seq": seq})


TTL_VALUES = [
    "1s", "1", "never", "NEVER", "-1", "0", "bogus", "500ms", "0.5s", "1.5s", "1m", "-5", "2h", "1.5",
    "100ns", "", " 2", "1S", "+3s", "1h1m", "18446744073709551616", "9223372036854775807", "99999999999h",
]  # fmt: skip


@pytest.mark.parametrize("allow", [True, False], ids=["allow_msg_ttl", "no_ttl"])
async def test_ttl_header_values(pair: Pair, allow: bool) -> None:
    """Which ``Nats-TTL`` values are stored, which are invalid and which are disabled."""
    await pair.create("S", storage="memory", allow_msg_ttl=allow)
    for value in TTL_VALUES:
        await pair.same("S", "x", {"Nats-TTL": value})
    await pair.info()


async def test_ttl_errors_come_in_the_servers_order(pair: Pair) -> None:
    """An invalid TTL is refused late (after the expected-* rules and dedup); a valid one on a
    stream without TTLs right after ``Nats-Expected-Stream``."""
    await pair.create("S", storage="memory", allow_msg_ttl=True)
    await pair.same("S", "1", {"Nats-Msg-Id": "a"})
    await pair.same("S", "x", {"Nats-TTL": "bogus", "Nats-Expected-Stream": "T"})
    await pair.same("S", "x", {"Nats-TTL": "bogus", "Nats-Expected-Last-Sequence": "9"})
    await pair.same("S", "x", {"Nats-TTL": "bogus", "Nats-Msg-Id": "a"})
    await pair.same("S", "x", {"Nats-TTL": "bogus", "Nats-Rollup": "sub"})
    await pair.create("N", subjects=["n"], storage="memory")
    await pair.same("n", "x", {"Nats-TTL": "5s", "Nats-Expected-Stream": "T"})
    await pair.same("n", "x", {"Nats-TTL": "5s", "Nats-Expected-Last-Sequence": "9"})
    await pair.same("n", "x", {"Nats-TTL": "never"})


# Timelines: every check comes one second after the events it looks at and one second before
# the next ones, so a real server whose timers fire late (a loaded machine) still agrees.


async def test_ttl_expiry(pair: Pair, storage: str) -> None:
    """Messages go when their TTL is up; ``never`` and TTL-less ones stay."""
    await freeze(pair)
    await pair.create("S", subjects=["s.>"], storage=storage, allow_msg_ttl=True)
    await pair.same("s.a", "1", {"Nats-TTL": "1"})
    await pair.same("s.b", "2", {"Nats-TTL": "3s"})
    await pair.same("s.c", "3", {"Nats-TTL": "never"})
    await pair.same("s.d", "4")
    await pair.same("s.a", "5", {"Nats-TTL": "1s"})
    await pass_time(pair, 2.0)  # t=1: s.a 1 and 5 gone
    await pair.info("S")
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 1})
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"last_by_subj": "s.a"})
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 2})
    await pass_time(pair, 2.0)  # t=3: s.b 2 gone
    await pair.info("S")
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 2})
    await pair.same("s.e", "6")
    await pair.info("S")


async def test_never_outlives_max_age(pair: Pair) -> None:
    """max_age removes TTL'd and plain messages alike but passes ``Nats-TTL: never`` by."""
    await freeze(pair)
    await pair.create("S", storage="memory", allow_msg_ttl=True, max_age=SECOND)
    await pair.same("S", "1", {"Nats-TTL": "never"})
    await pair.same("S", "2", {"Nats-TTL": "1h"})
    await pair.same("S", "3")
    await pair.same("S", "4", {"Nats-TTL": "never"})
    await pass_time(pair, 2.0)
    await pair.info()
    await gets(pair, 4)


async def test_delete_markers(pair: Pair, storage: str) -> None:
    """With ``subject_delete_marker_ttl``: where max_age or a TTL removes the last message of a
    subject a marker is stored (``Nats-Marker-Reason: MaxAge``, ``Nats-TTL: 2s``, a rollup);
    a TTL below the marker TTL is raised to it (the header rewritten); a marker expires in
    its turn without a marker of its own."""
    await freeze(pair)
    created = await pair.create(
        "S", subjects=["m.>"], storage=storage, max_age=4 * SECOND, subject_delete_marker_ttl=2 * SECOND
    )
    assert created["config"]["allow_msg_ttl"] and created["config"]["allow_rollup_hdrs"]
    await pair.same("m.a", "1")
    await pair.same("m.a", "2")
    await pair.same("m.b", "3", {"Nats-TTL": "1"})  # raised to 2 (the header says so)
    await pair.same("m.c", "4", {"Nats-TTL": "never"})
    # A TTL past max_age: max_age takes it first. (A TTL due together with max_age would make
    # the order of the two markers below depend on the real server's timer wheel.)
    await pair.same("m.d", "5", {"Nats-TTL": "1m"})
    await gets(pair, 5)
    await pass_time(pair, 1.0)
    await pair.info()
    # t=2: m.b 3's TTL is up: a marker (6) takes its place
    await pass_time(pair, 2.0)
    await pair.info()
    await gets(pair, 7)
    # t=4: max_age: m.a 1 removed, m.a 2 and m.d 5 replaced by markers (7, 8); marker 6's TTL
    await pass_time(pair, 2.0)
    await pair.info()
    await gets(pair, 9)
    # t=6: the TTLs of markers 7 and 8
    await pass_time(pair, 2.0)
    await pair.info()
    await gets(pair, 9)


async def test_delete_marker_for_a_ttl_without_max_age(pair: Pair) -> None:
    """Without max_age, the marker follows the TTL (a subject's earlier message just goes);
    the marker's own TTL then removes it."""
    await freeze(pair)
    await pair.create("S", subjects=["k.>"], storage="memory", subject_delete_marker_ttl=2 * SECOND)
    await pair.same("k.x", "1", {"Nats-TTL": "2s"})
    await pair.same("k.y", "2", {"Nats-TTL": "2s"})
    await pair.same("k.y", "3")
    await pass_time(pair, 3.0)  # t=2: k.x 1 replaced by a marker (4), k.y 2 removed
    await pair.info()
    await gets(pair, 5)
    await pass_time(pair, 2.0)  # t=4: the marker's TTL
    await pair.info()
    await gets(pair, 5)
