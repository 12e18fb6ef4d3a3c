"""jsemu-only: fast batches on the server's clock and under lowered limits, the reply
pattern parser, and stored batch messages across a restart. The wire behaviour itself is
compared with nats-server in ``tests/jetstream/api/test_fast_batch.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jsemu
from jetstream.consumers.test_consumer_model import Capture
from jsemu.jetstream.service import JetStream
from jsemu.jetstream.streams.atomic_batch import BatchLimits
from jsemu.jetstream.streams.fast_batch import FastBatchRequest, is_fast_reply, parse_fast_reply
from jsemu.server.sublist import Subscription

pytestmark = pytest.mark.fake_only


class Harness:
    """An in-process server with one stream ``S`` on ``s.>``; replies land in ``capture``."""

    def __init__(self, **config: Any) -> None:
        self.srv = jsemu.Server()
        js, api = self.srv.jetstream, self.srv.jetstream_api
        assert js is not None and api is not None
        self.js: JetStream = js
        self.api = api
        self.srv.control.freeze_clock()
        body = {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_batched": True, **config}
        assert "error" not in api.call("$JS.API.STREAM.CREATE.S", body)
        self.capture = Capture()
        js.server.sublist.insert(Subscription(self.capture, b"_R.>", None, b"cap"))

    def pub(self, batch: str, seq: int, op: int, stream: str = "S", gap: str = "fail") -> list[Any]:
        """One message of a batch; the decoded answers it got, in order."""
        reply = f"_R.{batch}.10.{gap}.{seq}.{op}.$FI".encode()
        before = len(self.capture.got)
        self.js.streams[stream].publish(b"%s.a" % stream.lower().encode(), reply, -1, b"m%d" % seq)
        return [json.loads(m) for s, _, _, m in self.capture.got[before:] if s == reply]


def code(answers: list[Any]) -> int:
    return int(answers[-1]["error"]["err_code"]) if answers and "error" in answers[-1] else 0


def test_a_batch_times_out_on_the_server_clock_without_an_advisory() -> None:
    h = Harness()
    ctl = h.srv.control
    assert h.pub("t", 1, 0) == [{"type": "ack", "seq": 0, "msgs": 10}]
    ctl.advance_clock(seconds=9.999)
    assert h.pub("t", 2, 1) == []  # each message restarts the timeout
    ctl.advance_clock(seconds=9.999)
    assert h.js.fast_inflight == 1
    ctl.advance_clock(seconds=0.001)
    assert h.js.fast_inflight == 0
    assert code(h.pub("t", 3, 2)) == 10208  # unknown: the batch is gone, what it stored stays
    assert h.js.streams["S"].store.state().msgs == 2
    assert h.pub("t", 1, 2) == [{"stream": "S", "seq": 3, "batch": "t", "count": 1}]


def test_lowered_limits_and_the_server_wide_inflight_count() -> None:
    h = Harness()
    h.js.batch_limits = BatchLimits(fast_inflight_per_stream=2, fast_inflight_total=3)
    h.api.call("$JS.API.STREAM.CREATE.T", {"name": "T", "subjects": ["t.>"], "allow_batched": True})
    assert h.pub("a", 1, 0)[0]["type"] == "ack"
    assert h.pub("b", 1, 0)[0] == {"type": "ack", "seq": 0, "msgs": 1}  # two open: one at a time
    assert code(h.pub("c", 1, 0)) == 10211  # too many in this stream
    assert h.pub("x", 1, 0, stream="T")[0]["type"] == "ack"
    assert h.js.fast_inflight == 3
    assert code(h.pub("y", 1, 0, stream="T")) == 10211  # too many across the server
    h.api.call("$JS.API.STREAM.DELETE.T", b"")
    assert h.js.fast_inflight == 2  # a deleted stream's batches are dropped
    assert h.pub("a", 2, 2)[-1]["count"] == 2


def test_disabling_allow_batched_drops_the_open_batches() -> None:
    h = Harness()
    h.pub("a", 1, 0)
    cfg = h.api.call("$JS.API.STREAM.INFO.S", b"")["config"]
    assert "error" not in h.api.call("$JS.API.STREAM.UPDATE.S", {**cfg, "allow_batched": False})
    assert h.js.fast_inflight == 0
    assert code(h.pub("a", 2, 2)) == 10205


@given(st.binary(max_size=40))
def test_the_reply_parser_never_fails(reply: bytes) -> None:
    reply += b".$FI"
    got = parse_fast_reply(reply) if is_fast_reply(reply) else None
    assert got is None or isinstance(got, FastBatchRequest)


def test_the_reply_parser() -> None:
    assert parse_fast_reply(b"p.id.7.ok.3.1.$FI") == FastBatchRequest(b"id", 3, 7, True, 1)
    assert parse_fast_reply(b"a.b.id.0.fail.01.00.$FI") == FastBatchRequest(b"id", 1, 10, False, 0)
    assert parse_fast_reply(b"p.id.99999.fail.2.4.$FI") == FastBatchRequest(b"id", 2, 0xFFFF, False, 4)
    assert parse_fast_reply(b"id.10.fail.1.2.$FI") is None  # no prefix before the id
    assert not is_fast_reply(b".$FI") and not is_fast_reply(None)


async def test_stored_messages_survive_a_restart(tmp_path: Path) -> None:
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="file", allow_batched=True)
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox + ".>")
        for seq, op in ((1, 0), (2, 1), (3, 2)):
            await nc.publish(f"s.{seq}", b"m%d" % seq, reply=f"{inbox}.r.10.fail.{seq}.{op}.$FI")
        first = json.loads((await sub.next_msg(2)).data)
        ack = json.loads((await sub.next_msg(2)).data)
        assert (first, ack) == (
            {"type": "ack", "seq": 0, "msgs": 10},
            {"stream": "S", "seq": 3, "batch": "r", "count": 3},
        )
        before = [await js.get_msg("S", seq) for seq in (1, 2, 3)]
        await nc.close()
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        after = [await js.get_msg("S", seq) for seq in (1, 2, 3)]
        assert [(m.subject, m.data, m.time) for m in after] == [(m.subject, m.data, m.time) for m in before]
        await nc.close()


def test_a_run_on_the_connection_fast_lane_is_a_batch() -> None:
    """Header-less publishes in one read come as columns (``Stream.publish_batch``): a fast
    batch reply among them sends the run through the batch, not the plain bulk append."""
    h = Harness()
    replies = [f"_R.l.10.fail.{s}.{o}.$FI".encode() for s, o in ((1, 0), (2, 1), (3, 2))]
    stream = h.js.streams["S"]
    stream.publish(b"s.a", None, -1, b"first")  # (the bulk append wants a non-empty store)
    stream.publish_batch([b"s.a"] * 4, [None, *replies], None, [b"plain", b"1", b"2", b"3"])
    got = [(s, json.loads(m)) for s, _, _, m in h.capture.got]
    assert got == [
        (replies[0], {"type": "ack", "seq": 0, "msgs": 10}),
        (replies[2], {"stream": "S", "seq": 5, "batch": "l", "count": 3}),
    ]
