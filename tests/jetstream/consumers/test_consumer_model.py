"""Hypothesis state machine for a pull consumer with explicit acks: random publishes,
no-wait fetches, acks, naks and clock steps against a plain model of what is pending,
acknowledged and due for redelivery.

The model is what nats-server's consumer does, written plainly: redeliveries first in the order
they became due, then new messages; a message whose ``ack_wait`` has passed is due again (one
that reached ``max_deliver`` is then dropped instead of delivered); a nak makes it due at once;
acks move the ack floor as Go's ``moveAckFloor`` does (a dropped message does not move it).
Driven in-process on a frozen clock (no network, no sleeping).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import jsemu
from jsemu.jetstream.consumers import fast as consumer_fast
from jsemu.server.sublist import Subscription

ACK_WAIT = 10_000_000_000
INBOX = b"_M.pull"


class Capture:
    """A subscriber that keeps what it receives."""

    echo = True

    def __init__(self) -> None:
        self.got: list[tuple[bytes, bytes | None, int, bytes]] = []

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        self.got.append((subject, reply, hdr, msg))
        return True


class ConsumerMachine(RuleBasedStateMachine):
    @initialize(max_deliver=st.sampled_from([-1, 2, 3]))
    def setup(self, max_deliver: int) -> None:
        self.srv = jsemu.Server()
        js, api = self.srv.jetstream, self.srv.jetstream_api
        assert js is not None and api is not None
        self.js, self.api = js, api
        self.ctl = self.srv.control
        self.ctl.freeze_clock()
        api.call("$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory"})
        cfg = {"durable_name": "C", "ack_policy": "explicit", "ack_wait": ACK_WAIT, "max_deliver": max_deliver}
        reply = api.call("$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": cfg})
        assert "error" not in reply, reply
        self.stream = js.streams["S"]
        self.consumer = js.consumer_set(self.stream).by_name["C"]
        self.capture = Capture()
        js.server.sublist.insert(Subscription(self.capture, INBOX, None, b"cap"))
        self.max_deliver = max_deliver
        # The model.
        self.last = 0  # last stream sequence
        self.next_new = 1  # next stream sequence never delivered
        self.dseq = 0  # last delivery sequence
        self.delivered_stream = 0
        self.floor = (0, 0)  # the ack floor: consumer and stream sequence
        self.pending: dict[int, dict[str, Any]] = {}  # seq -> orig dseq, deliveries, time, ack subject
        self.due: list[int] = []  # in the order they became due
        self.redelivered: set[int] = set()
        self.deleted: set[int] = set()  # removed before their first delivery

    def unread(self) -> int:
        """Messages never delivered (the ``num_pending`` of the consumer)."""
        return self.last - self.next_new + 1 - sum(seq >= self.next_new for seq in self.deleted)

    def now(self) -> int:
        return self.js.clock.now_ns()

    @rule(n=st.one_of(st.integers(1, 4), st.integers(10, 30)))
    def publish(self, n: int) -> None:
        for _ in range(n):
            self.stream.publish(b"s.x", None, -1, b"m")
        self.last += n

    @precondition(lambda self: self.next_new <= self.last)
    @rule(data=st.data())
    def delete_unread(self, data: st.DataObject) -> None:
        """Remove a stored message that was never delivered (a hole the next fetch steps over)."""
        seq = data.draw(st.integers(self.next_new, self.last))
        reply = self.api.call("$JS.API.STREAM.MSG.DELETE.S", {"seq": seq})
        assert ("error" in reply) is (seq in self.deleted), reply
        self.deleted.add(seq)

    @rule(batch=st.one_of(st.integers(1, 5), st.integers(8, 16)))
    def fetch(self, batch: int) -> None:
        self.capture.got.clear()
        self.consumer.next_request(INBOX, json.dumps({"batch": batch, "no_wait": True}).encode())
        expected: list[tuple[int, int, int]] = []  # (dc, seq, pending after)
        dropped = []
        while self.due and len(expected) < batch:
            seq = self.due.pop(0)
            p = self.pending[seq]
            if self.max_deliver > 0 and p["dc"] + 1 > self.max_deliver:
                dropped.append(seq)
                del self.pending[seq]
                continue
            p["dc"] += 1
            p["t"] = self.now()
            self.redelivered.add(seq)
            self.dseq += 1
            expected.append((p["dc"], seq, self.unread()))
        while len(expected) < batch:
            # The next live message; holes are stepped over only on the way to one (as the
            # server's ``sseq``: an empty fetch past the last live message leaves it).
            seq = next((s for s in range(self.next_new, self.last + 1) if s not in self.deleted), 0)
            if not seq:
                break
            self.next_new = seq + 1
            self.dseq += 1
            self.pending[seq] = {"dseq": self.dseq, "dc": 1, "t": self.now()}
            self.delivered_stream = max(self.delivered_stream, seq)
            expected.append((1, seq, self.unread()))
        got = []
        for subject, reply, hdr, _ in self.capture.got:
            if reply is None:
                assert subject == INBOX and hdr > 0
                got.append(("status",))
                continue
            tokens = reply.decode().split(".")
            dc, seq, pending = int(tokens[4]), int(tokens[5]), int(tokens[8])
            got.append((dc, seq, pending))
            if seq in self.pending:
                self.pending[seq]["ack"] = reply
                self.pending[seq].setdefault("acks", []).append(reply)
        want: list[tuple[Any, ...]] = list(expected)
        if len(expected) < batch:
            want.append(("status",))  # 404 No Messages ends a no-wait request that is short
        assert got == want

    @precondition(lambda self: any("ack" in p for p in self.pending.values()))
    @rule(data=st.data(), kind=st.sampled_from(["+ACK", "-NAK", "+TERM"]))
    def acknowledge(self, data: st.DataObject, kind: str) -> None:
        seq = data.draw(st.sampled_from(sorted(s for s, p in self.pending.items() if "ack" in p)))
        reply = self.pending[seq]["ack"]
        self.consumer.process_ack(reply, None, -1, kind.encode())
        if kind == "-NAK":
            if seq not in self.due:
                self.due.append(seq)
        else:
            dseq = self.pending.pop(seq)["dseq"]
            if seq in self.due:
                self.due.remove(seq)
            self.redelivered.discard(seq)
            self.move_floor(dseq, seq)

    @precondition(lambda self: sum("ack" in p for p in self.pending.values()) >= 2)
    @rule(data=st.data(), mode=st.sampled_from(["leading", "slice", "any"]), body=st.sampled_from(["", "+ACK", "+OK"]))
    def acknowledge_run(self, data: st.DataObject, mode: str, body: str) -> None:
        """Several plain acks in one run (one read of a client's acks: ``process_acks``): the
        leading ones in order (the consumer's in-order block), an in-order slice further up,
        or any of them in any order; each with the reply of its last delivery or an earlier one."""
        acked = sorted(s for s, p in self.pending.items() if "ack" in p)
        if mode == "leading":
            seqs = acked[: data.draw(st.just(len(acked)) | st.integers(2, len(acked)))]
        elif mode == "slice":
            start = data.draw(st.integers(1, len(acked) - 2)) if len(acked) > 2 else 0
            seqs = acked[start : data.draw(st.integers(start + 2, len(acked)))]
        else:
            seqs = data.draw(st.lists(st.sampled_from(acked), min_size=2, max_size=len(acked), unique=True))
        replies = [data.draw(st.sampled_from(self.pending[seq]["acks"])) for seq in seqs]
        if data.draw(st.booleans()):
            # and an ack of the next message, never delivered (a client's forgery): ignored
            tokens = replies[-1].split(b".")
            tokens[5:7] = [b"%d" % self.next_new, b"%d" % (self.dseq + 1)]
            replies.append(b".".join(tokens))
        n = len(replies)
        self.consumer.process_acks(replies, [None] * n, [-1] * n, [body.encode()] * n)
        for seq in seqs:
            dseq = self.pending.pop(seq)["dseq"]
            if seq in self.due:
                self.due.remove(seq)
            self.redelivered.discard(seq)
            self.move_floor(dseq, seq)

    def move_floor(self, dseq: int, seq: int) -> None:
        """``moveAckFloor`` after an ack of ``seq`` (delivered first as ``dseq``)."""
        if not self.pending:
            self.floor = (self.dseq, self.next_new - 1)
        elif dseq == self.floor[0] + 1:
            self.floor = (dseq, seq)
            for ss in range(seq + 1, self.next_new):
                if ss in self.pending:
                    self.floor = (self.pending[ss]["dseq"] - 1, ss - 1)
                    break

    @rule(seconds=st.sampled_from([1, 5, 9, 10, 11, 30]))
    def step_clock(self, seconds: int) -> None:
        self.ctl.advance_clock(seconds=seconds)
        now = self.now()
        expired = []
        for seq, p in self.pending.items():
            if seq in self.due or now - p["t"] < ACK_WAIT:
                continue
            # A message at max_deliver is still due once more (Go's ``hasMaxDeliveries`` looks
            # at the redelivery count); the next fetch drops it (as nats-server 2.15.1).
            expired.append(seq)
        self.due.extend(sorted(expired))

    @invariant()
    def info_matches(self) -> None:
        if not hasattr(self, "consumer"):
            return
        info = self.consumer.info_json()
        assert info["num_ack_pending"] == len(self.pending)
        assert info["num_pending"] == self.unread()
        assert info["num_redelivered"] == len(self.redelivered)
        delivered = (info["delivered"]["consumer_seq"], info["delivered"]["stream_seq"])
        if self.dseq:
            assert delivered == (self.dseq, self.delivered_stream)
        floor = (info["ack_floor"]["consumer_seq"], info["ack_floor"]["stream_seq"])
        assert floor == self.floor


@pytest.fixture(autouse=True)
def _short_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of two acks already try the in-order block, so the machine's short runs reach it."""
    monkeypatch.setattr(consumer_fast, "_BLOCK_MIN", 2)


ConsumerMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)
test_consumer_model = ConsumerMachine.TestCase
