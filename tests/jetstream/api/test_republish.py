"""Republish (``republish {src, dest, headers_only}``), jsemu against nats-server 2.15.1.

Both sides subscribe to the republish destinations; the republished messages then come in
as frames besides the PubAck, which the harness compares (``+ unexpected on <subject>``
lines, timestamps normalised), so their subjects, headers, bodies and order count.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from support.pair import CONNECT, Pair, Side
from support.polling import wait_for
from support.rawclient import RawClient

SECOND = 1_000_000_000
_IDENT = re.compile(r"(Nats-Stream-Source: [^\r\n]*) \S+(?=\r\n)")


async def listen(pair: Pair, subject: str) -> None:
    for side in (pair.emu, pair.real):
        side.client.send(b"SUB %s 77\r\n" % subject.encode())
        assert [f for f in await side.client.exchange() if not f.startswith(b"INFO ")] == []


@pytest.mark.parametrize("headers_only", [False, True], ids=["body", "headers_only"])
async def test_republish_headers_and_body(pair: Pair, storage: str, headers_only: bool) -> None:
    await listen(pair, "out.>")
    rp: dict[str, Any] = {"src": "r.*", "dest": "out.{{wildcard(1)}}"}
    if headers_only:
        rp["headers_only"] = True
    await pair.create("S", subjects=["r.>"], storage=storage, republish=rp)
    await pair.same("r.a", "hello")
    await pair.same("r.a", "again", {"X-A": "1", "Nats-Msg-Id": "m1"})
    await pair.same("r.a", "dup", {"Nats-Msg-Id": "m1"})  # a duplicate is not stored: not republished
    await pair.same("r.b", "")
    await pair.same("r.a.deeper", "not matching src")
    await pair.same("r.b", "bad", {"Nats-Expected-Last-Sequence": "1"})  # refused: nothing
    await pair.publish("r.b", "no reply")
    await pair.same("r.b", "x", {"Nats-Rollup": "sub"})  # refused (rollups not allowed)


async def test_republish_default_src_rollup_and_ttl(pair: Pair) -> None:
    """``src`` defaults to ``>``; the republished headers are the stored ones (a rollup's,
    a TTL raised to the marker TTL) and the markers are republished too."""
    await listen(pair, "copy.>")
    await pair.create(
        "S",
        subjects=["k.>"],
        storage="memory",
        allow_rollup_hdrs=True,
        allow_msg_ttl=True,
        subject_delete_marker_ttl=60 * SECOND,
        republish={"dest": "copy.>"},
    )
    await pair.same("k.a", "1")
    await pair.same("k.a", "2", {"Nats-Rollup": "sub"})
    await pair.same("k.b", "3", {"Nats-TTL": "5s"})
    await pair.info()


@pytest.mark.parametrize("config", [
    {"subjects": ["a.>"], "republish": {"src": "a.>", "dest": "a.b"}},
    {"subjects": ["a.>"], "republish": {"src": ">", "dest": "b.>"}},
    {"subjects": ["a.>"], "republish": {"src": "b.>", "dest": "c.>"}},
    {"subjects": ["a.*"], "republish": {"src": "a.*", "dest": "x.{{wildcard(2)}}"}},
    {"subjects": ["a.*"], "republish": {"src": "a.*", "dest": "x.{{nope(1)}}"}},
    {"subjects": ["a.*"], "republish": {"src": "a.*", "dest": ""}},
    {"subjects": ["a.*"], "republish": {"src": "a.*", "dest": "x.*"}},
    {"subjects": ["a.*"], "republish": {"src": "a.*", "dest": "a.>"}},
    {"subjects": ["a.*"], "republish": {"src": "a.*", "dest": "x.>", "headers_only": True}},
    {"subjects": ["a.*"], "republish": {"src": "a.>", "dest": "x.>"}},
    {"subjects": ["a.*"], "republish": {"src": ">", "dest": "x.>"}},
    {"subjects": ["a.*"], "republish": {"dest": "x.{{wildcard(1)}}"}},
    {"subjects": ["in.*"], "subject_transform": {"src": "in.*", "dest": "t.{{wildcard(1)}}"},
     "republish": {"src": ">", "dest": ">"}},
    {"subjects": ["in.*", "b"], "subject_transform": {"src": "in.*", "dest": "t.{{wildcard(1)}}"},
     "republish": {"src": ">", "dest": ">"}},
])  # fmt: skip
async def test_republish_create_errors(pair: Pair, config: dict[str, Any]) -> None:
    await pair.same("$JS.API.STREAM.CREATE.S", {"name": "S", "storage": "memory", **config})


async def _collector(side: Side, *subjects: str) -> RawClient:
    """A second connection to ``side`` subscribed to ``subjects``."""
    port = side.client.writer.get_extra_info("peername")[1]
    client = await RawClient.connect(port, CONNECT)
    client.send(b"".join(b"SUB %s %d\r\n" % (subj.encode(), i) for i, subj in enumerate(subjects, 1)))
    assert [f for f in await client.exchange() if not f.startswith(b"INFO ")] == []
    return client


async def _collected(side: Side, client: RawClient) -> dict[str, list[str]]:
    """What ``client`` received, normalised, by subject (in order for each subject)."""
    out: dict[str, list[str]] = {}
    for frame in await client.exchange():
        if not frame.startswith(b"INFO "):
            # The origin's identity (a hash of its ``created``, different on each server).
            text = _IDENT.sub(r"\1 <ident>", side.describe(frame))
            out.setdefault(text.split(":")[0], []).append(text)
    await client.close()
    return out


async def test_mirrored_and_sourced_messages_are_republished(pair: Pair) -> None:
    """Copies made by a mirror or from a source are republished by the copying stream
    (asynchronously on the real server, so they are collected on their own connection)."""
    emu = await _collector(pair.emu, "m.>", "src.>")
    real = await _collector(pair.real, "m.>", "src.>")
    await pair.create("O", subjects=["o.>"], storage="memory")
    await pair.same("o.x", "1")
    await pair.same("o.y", "2", {"H": "v"})
    mirror = {"name": "M", "storage": "memory", "mirror": {"name": "O"}, "republish": {"src": ">", "dest": "m.>"}}
    await pair.each("$JS.API.STREAM.CREATE.M", mirror)
    sourced = {"name": "U", "storage": "memory", "sources": [{"name": "O"}], "republish": {"dest": "src.>"}}
    await pair.each("$JS.API.STREAM.CREATE.U", sourced)
    await wait_for(pair, "M", lambda info: info["state"]["messages"] == 2)
    await wait_for(pair, "U", lambda info: info["state"]["messages"] == 2)
    await pair.same("o.x", "3")
    await wait_for(pair, "M", lambda info: info["state"]["messages"] == 3)
    await wait_for(pair, "U", lambda info: info["state"]["messages"] == 3)
    await asyncio.sleep(0.1)
    got, want = await _collected(pair.emu, emu), await _collected(pair.real, real)
    assert sorted(want) == ["on m.o.x", "on m.o.y", "on src.o.x", "on src.o.y"]
    assert got == want
