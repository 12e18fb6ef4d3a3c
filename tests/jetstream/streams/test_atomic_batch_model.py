"""jsemu-only: atomic batches on the server's clock and under lowered limits, a hypothesis
test of random batches (with random failures) against a plain model, and committed batches
across a restart (one log record per batch, replayed whole or not at all). The wire
behaviour itself is compared with nats-server in ``tests/jetstream/api/test_atomic_batch.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jsemu
from jetstream.consumers.test_consumer_model import Capture
from jsemu.jetstream.service import JetStream
from jsemu.jetstream.streams.atomic_batch import BatchLimits
from jsemu.server.sublist import Subscription
from jsemu.store.records import AppendBatch
from jsemu.store.wal import read_log

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
        reply = api.call(
            "$JS.API.STREAM.CREATE.S",
            {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_atomic": True, **config},
        )
        assert "error" not in reply, reply
        self.capture = Capture()
        js.server.sublist.insert(Subscription(self.capture, b"_R.>", None, b"cap"))
        self.n = 0

    def pub(self, subject: str, payload: bytes = b"m", headers: dict[str, str] | None = None) -> Any:
        """Publish with a reply; the decoded reply (``b""`` for an empty one)."""
        self.n += 1
        reply = b"_R.%d" % self.n
        stream = self.js.streams["S"]
        if headers:
            hdr = ("NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()
            stream.publish(subject.encode(), reply, len(hdr), hdr + payload)
        else:
            stream.publish(subject.encode(), reply, -1, payload)
        got = [m for s, _, _, m in self.capture.got if s == reply]
        assert len(got) == 1, got
        return json.loads(got[0]) if got[0] else b""

    def batch(self, batch: str, seq: int, commit: str | None = None, subject: str = "s.a", **extra: str) -> Any:
        headers = {"Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(seq), **extra}
        if commit is not None:
            headers["Nats-Batch-Commit"] = commit
        return self.pub(subject, b"b%d" % seq, headers)

    def stored(self) -> list[tuple[bytes, bytes]]:
        store = self.js.streams["S"].store
        st_ = store.state()
        out = []
        for seq in range(st_.first_seq, st_.last_seq + 1):
            m = store.load(seq)
            if m is not None:
                out.append((m.subject, m.data))
        return out


def code(reply: Any) -> int:
    return int(reply["error"]["err_code"]) if isinstance(reply, dict) and "error" in reply else 0


def test_a_batch_times_out_on_the_server_clock() -> None:
    h = Harness()
    ctl = h.srv.control
    assert h.batch("t", 1) == b""
    ctl.advance_clock(seconds=9.999)
    assert h.batch("t", 2) == b""  # each message restarts the timeout
    ctl.advance_clock(seconds=9.999)
    assert h.js.atomic_inflight == 1
    ctl.advance_clock(seconds=0.001)
    assert h.js.atomic_inflight == 0
    assert code(h.batch("t", 3, "1")) == 10176  # incomplete: the batch is gone
    assert h.stored() == []
    assert h.batch("t", 1, "1") == {"stream": "S", "seq": 1, "batch": "t", "count": 1}


def test_lowered_limits_and_the_server_wide_inflight_count() -> None:
    h = Harness()
    h.js.batch_limits = BatchLimits(max_msgs=3, inflight_per_stream=5, inflight_total=2, timeout_ns=10**9)
    h.api.call("$JS.API.STREAM.CREATE.T", {"name": "T", "subjects": ["t.>"], "allow_atomic": True})
    assert h.batch("a", 1) == b""
    t = h.js.streams["T"]
    t.publish(b"t.x", None, *_hdr({"Nats-Batch-Id": "x", "Nats-Batch-Sequence": "1"}, b"m"))
    assert h.js.atomic_inflight == 2
    assert code(h.batch("b", 1)) == 10210  # too many inflight across the server
    assert h.batch("a", 2) == b""
    assert h.batch("a", 3) == b""
    assert (
        h.pub("s.a", b"x", {"Nats-Batch-Id": "a", "Nats-Batch-Sequence": "4", "Nats-Batch-Commit": "1"})["error"][
            "description"
        ]
        == "atomic publish batch is too large: 3"
    )
    assert h.batch("b", 1) == b""  # the too-large batch was dropped
    h.api.call("$JS.API.STREAM.DELETE.T", b"")
    assert h.js.atomic_inflight == 1  # a deleted stream's batches are dropped
    assert h.batch("c", 1) == b""
    assert h.batch("b", 2, "1")["count"] == 2


def _hdr(headers: dict[str, str], payload: bytes) -> tuple[int, bytes]:
    hdr = ("NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()
    return len(hdr), hdr + payload


def test_disabling_allow_atomic_drops_the_open_batches() -> None:
    h = Harness()
    assert h.batch("a", 1) == b""
    cfg = h.api.call("$JS.API.STREAM.INFO.S", b"")["config"]
    assert "error" not in h.api.call("$JS.API.STREAM.UPDATE.S", {**cfg, "allow_atomic": False})
    assert h.js.atomic_inflight == 0


# --- random batches against a model ---------------------------------------------------------

FAULTS = ["none", "none", "eob", "expected_ok", "expected_bad", "dup_id", "seen_id", "gap", "bad_commit", "open"]


@st.composite
def batches(draw: st.DrawFn) -> tuple[str, list[tuple[str, bool]]]:
    """A batch: its fault, and per message its subject and whether a plain publish follows it."""
    fault = draw(st.sampled_from(FAULTS))
    n = draw(st.integers(2 if fault == "dup_id" or fault == "gap" else 1, 5))
    msgs = [(draw(st.sampled_from(["s.a", "s.b", "s.c"])), draw(st.booleans())) for _ in range(n)]
    return fault, msgs


@settings(max_examples=60, deadline=None)
@given(st.lists(batches(), min_size=1, max_size=6))
def test_random_batches_against_a_model(ops: list[tuple[str, list[tuple[str, bool]]]]) -> None:
    """The model: a batch's messages are all stored at its commit, in order, or none is; a
    plain publish between its messages is stored at once. Expected-last-sequence is checked
    against the stream at the commit, message ids against the stream and the batch."""
    h = Harness()
    model: list[tuple[bytes, bytes]] = []
    ids_seen: set[str] = set()
    h.pub("s.z", b"first", {"Nats-Msg-Id": "seen"})
    model.append((b"s.z", b"first"))
    for k, (fault, msgs) in enumerate(ops):
        bid = f"b{k}"
        staged: list[tuple[bytes, bytes]] = []
        expected = ""
        n = len(msgs)
        reply: Any = None
        for i, (subject, plain_after) in enumerate(msgs, start=1):
            extra: dict[str, str] = {}
            if i == 1 and fault == "expected_ok":
                extra["Nats-Expected-Last-Sequence"] = expected = str(len(model))
            if i == 1 and fault == "expected_bad":
                extra["Nats-Expected-Last-Sequence"] = expected = str(len(model) + 7)
            if fault == "dup_id" and i in (1, n):
                extra["Nats-Msg-Id"] = f"d{k}"
            if fault == "seen_id" and i == n:
                extra["Nats-Msg-Id"] = "seen"
            seq = i + 1 if fault == "gap" and i == n else i
            last = i == n and fault != "open"
            commit = ("eob" if fault == "eob" else "bad" if fault == "bad_commit" else "1") if last else None
            payload = b"%s-%d" % (bid.encode(), i)
            reply = h.pub(
                subject,
                payload,
                {"Nats-Batch-Id": bid, "Nats-Batch-Sequence": str(seq), **extra}
                | ({"Nats-Batch-Commit": commit} if commit else {}),
            )
            if not (fault == "eob" and last):
                staged.append((subject.encode(), payload))
            if not last:
                assert reply == b"", reply
            if plain_after and not last:
                h.pub("s.p", b"plain")
                model.append((b"s.p", b"plain"))
        if fault == "open":
            continue
        if fault == "eob" and len(staged) == 0:
            assert code(reply) == 10176
        elif fault == "expected_ok" and expected != str(len(model)) or fault == "expected_bad":
            assert code(reply) == 10071
        elif fault in ("dup_id", "seen_id"):
            assert code(reply) == 10201
        elif fault == "gap":
            assert code(reply) == 10176
        elif fault == "bad_commit":
            assert code(reply) == 10200
        else:
            model.extend(staged)
            assert reply == {"stream": "S", "seq": len(model), "batch": bid, "count": len(staged)}, reply
        assert h.stored() == model
        ids_seen.add(bid)
    assert h.stored() == model


# --- restart --------------------------------------------------------------------------------


async def _request(nc: Any, subject: str, payload: bytes, headers: dict[str, str]) -> bytes:
    return bytes((await nc.request(subject, payload, headers=headers, timeout=2)).data)


async def test_committed_batches_survive_a_restart_and_replay_whole(tmp_path: Path) -> None:
    hdrs = [{"Nats-Batch-Id": "r", "Nats-Batch-Sequence": str(i)} for i in (1, 2, 3)]
    hdrs[2]["Nats-Batch-Commit"] = "eob"
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="file", allow_atomic=True)
        await js.publish("s.x", b"before")
        assert await _request(nc, "s.a", b"one", hdrs[0]) == b""
        assert await _request(nc, "s.b", b"two", hdrs[1]) == b""
        ack = json.loads(await _request(nc, "s.c", b"", hdrs[2]))
        assert ack == {"stream": "S", "seq": 3, "batch": "r", "count": 2}
        # a batch left open is not stored, now or after the restart
        assert await _request(nc, "s.a", b"open", {"Nats-Batch-Id": "o", "Nats-Batch-Sequence": "1"}) == b""
        before = [await js.get_msg("S", seq) for seq in (1, 2, 3)]
        await nc.close()
    wal = tmp_path / "jetstream" / "$G" / "streams" / "S" / "msgs.wal"
    records = read_log(wal).records
    assert [type(r).__name__ for r in records[-2:]] == ["Append", "AppendBatch"]
    batch = records[-1]
    assert isinstance(batch, AppendBatch) and len(batch.messages) == 2
    whole = wal.read_bytes()
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        after = [await js.get_msg("S", seq) for seq in (1, 2, 3)]
        assert [(m.subject, m.data, m.headers, m.time) for m in after] == [
            (m.subject, m.data, m.headers, m.time) for m in before
        ]
        assert after[2].headers == {"Nats-Batch-Id": "r", "Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"}
        info = await js.stream_info("S")
        assert (info.state.messages, info.state.last_seq) == (3, 3)
        await nc.close()
    # A crash in the middle of the batch's record: none of the batch comes back.
    cut = len(whole) - len(batch.encode()) // 2
    wal.write_bytes(whole[:cut])
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        info = await nc.jetstream().stream_info("S")
        assert (info.state.messages, info.state.last_seq) == (1, 1)
        await nc.close()
