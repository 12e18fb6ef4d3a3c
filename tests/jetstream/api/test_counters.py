"""Counter streams (``allow_msg_counter``, ``Nats-Incr``), jsemu against nats-server 2.15.1:
the PubAck ``val``, the stored ``{"val":"..."}`` bodies, the errors in the server's order and
the ``Nats-Counter-Sources`` aggregation of a counter stream sourcing other counters (headers
compared decoded, stream identities named, as in ``test_sources.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from support.pair import Pair

from .test_sources import caught_up, create, get, info, origin


@pytest.mark.parametrize(
    "headers,payload",
    [
        ({"Nats-Incr": "1"}, ""),
        ({"Nats-Incr": "+5"}, ""),
        ({"Nats-Incr": "-10"}, ""),
        ({"Nats-Incr": "1"}, "x"),
        ({"Nats-Incr": "abc"}, ""),
        ({"Nats-Incr": "1.5"}, ""),
        ({"Nats-Incr": "1_0"}, ""),
        ({"Nats-Incr": ""}, ""),
        (None, "x"),
        ({"Nats-Incr": "99999999999999999999999999"}, ""),
        ({"Nats-Incr": "1", "Nats-Expected-Last-Sequence": "3"}, ""),
        ({"Nats-Incr": "1", "Nats-Expected-Last-Subject-Sequence": "0"}, ""),
        ({"Nats-Incr": "1", "Nats-Expected-Stream": "S"}, ""),
        ({"Nats-Incr": "1", "Nats-Rollup": "sub"}, ""),
        ({"Nats-Incr": "1", "Nats-Msg-Id": "a"}, ""),
        ({"Nats-Incr": "1", "Nats-Expected-Last-Msg-Id": "a"}, ""),
        ({"Nats-Incr": "1", "X": "y"}, ""),
        ({"Nats-Incr": "1", "Nats-TTL": "5s"}, ""),
    ],
)
async def test_counter_publish(pair: Pair, headers: dict[str, str] | None, payload: str) -> None:
    await pair.create("S", subjects=["c.>"], storage="memory", allow_msg_counter=True)
    await pair.same("c.a", "", {"Nats-Incr": "41"})
    await pair.same("c.a", payload, headers)
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"last_by_subj": "c.a"})
    await pair.same("c.b", "", {"Nats-Incr": "-1"})
    await pair.same("c.a", "", {"Nats-Incr": "1"})
    await pair.info()


async def test_incr_on_a_stream_without_counters(pair: Pair) -> None:
    await pair.create("S", subjects=["c.>"], storage="memory")
    await pair.same("c.a", "", {"Nats-Incr": "1"})
    await pair.same("c.a", "", {"Nats-Incr": "x"})
    await pair.same("c.a", "", {"Nats-Incr": "1", "Nats-Expected-Stream": "T"})


async def test_a_plain_source_is_not_counted(pair: Pair) -> None:
    """Messages from a stream without counters carry no ``Nats-Incr``: the counter stream
    refuses them (increment missing) and they are lost, as on the server."""
    await origin(pair, "P", subjects=["p.>"], storage="memory")
    await pair.same("p.a", "1")
    await create(pair, "S", subjects=["c.>"], storage="memory", allow_msg_counter=True, sources=[{"name": "P"}])
    await pair.same("c.a", "", {"Nats-Incr": "1"})
    await caught_up(pair, "S", 1)
    await info(pair, "S")


async def test_sourced_counters_aggregate(pair: Pair) -> None:
    """Each origin's total is kept per origin and subject (the JSON map sorted, as Go
    marshals it); the stored ``Nats-Incr`` becomes the difference to the last total seen.
    Origins publish one at a time, so both servers copy in the same order."""
    await origin(pair, "A", subjects=["a.>"], storage="memory", allow_msg_counter=True)
    await origin(pair, "B", subjects=["b.>"], storage="memory", allow_msg_counter=True)
    sources: list[dict[str, Any]] = [
        {"name": "A", "subject_transforms": [{"src": "a.>", "dest": "t.>"}]},
        {"name": "B", "subject_transforms": [{"src": "b.>", "dest": "t.>"}]},
    ]
    await create(pair, "T", subjects=["t.>"], storage="memory", allow_msg_counter=True, sources=sources)
    steps = [("b.x", "10"), ("a.x", "5"), ("a.x", "+2"), ("t.x", "100"), ("b.y", "-1"), ("a.x", "-3")]
    for n, (subject, incr) in enumerate(steps, 1):
        await pair.same(subject, "", {"Nats-Incr": incr})
        await caught_up(pair, "T", n)
    for seq in range(1, len(steps) + 1):
        await get(pair, "T", seq=seq)
    await get(pair, "T", last_by_subj="t.x")
    await info(pair, "T")
