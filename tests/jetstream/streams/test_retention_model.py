"""Hypothesis state machine for interest and work-queue retention: random publishes, consumers
coming and going (filtered or not; ack explicit, all or none), fetches, acks, naks, terms and
purges against a plain model of which messages the stream keeps.

The model, written plainly: on an interest stream a message is stored when some consumer's
filter matches its subject, and it stays while some matching consumer has not acknowledged it
(ack none: not yet delivered; ack all: above the highest ack; explicit: not acked or termed);
with no consumer left nothing stays. On a work-queue stream every message is stored and goes
when one consumer acks or terms it; a second unfiltered consumer (10099) or a filter that
collides with another consumer's (10100) is refused. Driven in-process (no network).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import jsemu
from jetstream.consumers.test_consumer_model import Capture
from jsemu.server.sublist import Subscription
from jsemu.subjects import subject_matches, subjects_collide

SUBJECTS = ["s.a", "s.b", "s.c.x"]
FILTERS = [None, "s.a", "s.b", "s.c.*", "s.*"]


@dataclass
class ModelConsumer:
    name: str
    ack: str
    filt: str | None
    inbox: bytes
    acked: set[int] = field(default_factory=set)  # explicit: acked or termed
    floor: int = 0  # ack all: highest ack; ack none: highest delivered
    dfloor: int = 0  # ack all: acks of deliveries up to here are ignored (raised by purges)
    delivered: int = 0  # highest stream sequence delivered
    pending: dict[int, bytes] = field(default_factory=dict)  # seq -> ack subject

    def matches(self, subject: str) -> bool:
        return self.filt is None or subject_matches(subject, self.filt)

    def needs(self, seq: int, subject: str) -> bool:
        if not self.matches(subject):
            return False
        if self.ack == "explicit":
            return seq not in self.acked
        return seq > self.floor


class RetentionMachine(RuleBasedStateMachine):
    @initialize(retention=st.sampled_from(["interest", "workqueue"]))
    def setup(self, retention: str) -> None:
        self.srv = jsemu.Server()
        js, api = self.srv.jetstream, self.srv.jetstream_api
        assert js is not None and api is not None
        self.js, self.api = js, api
        self.retention = retention
        reply = api.call(
            "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory", "retention": retention}
        )
        assert "error" not in reply, reply
        self.stream = js.streams["S"]
        self.capture = Capture()
        js.server.sublist.insert(Subscription(self.capture, b"_M.>", None, b"cap"))
        self.last = 0
        self.stored: dict[int, str] = {}  # the model: seq -> subject of what the stream keeps
        self.consumers: dict[str, ModelConsumer] = {}
        self.n = 0

    def _settle(self) -> None:
        """Drop what nobody needs any more (interest retention)."""
        if self.retention != "interest":
            return
        cs = self.consumers.values()
        self.stored = {s: subj for s, subj in self.stored.items() if any(c.needs(s, subj) for c in cs)}

    @rule(subject=st.sampled_from(SUBJECTS), n=st.integers(1, 3))
    def publish(self, subject: str, n: int) -> None:
        for _ in range(n):
            self.stream.publish(subject.encode(), None, -1, b"m")
            self.last += 1
            if self.retention == "workqueue" or any(c.matches(subject) for c in self.consumers.values()):
                self.stored[self.last] = subject

    @precondition(lambda self: len(self.consumers) < 4)
    @rule(ack=st.sampled_from(["explicit", "all", "none"]), filt=st.sampled_from(FILTERS))
    def add_consumer(self, ack: str, filt: str | None) -> None:
        self.n += 1
        name = f"C{self.n}"
        cfg: dict[str, object] = {"durable_name": name, "ack_policy": ack}
        if filt is not None:
            cfg["filter_subject"] = filt
        reply = self.api.call(f"$JS.API.CONSUMER.CREATE.S.{name}", {"stream_name": "S", "config": cfg})
        expected_err = None
        if self.retention == "workqueue":
            others = list(self.consumers.values())
            if ack != "explicit":  # ack none is refused first by the pull rule
                expected_err = 10098 if ack == "all" else 10084
            elif others and filt is None:
                expected_err = 10099
            elif others and any(o.filt is None or subjects_collide(o.filt, filt or "") for o in others):
                expected_err = 10100
        if expected_err is not None:
            assert reply["error"]["err_code"] == expected_err, reply
            return
        assert "error" not in reply, reply
        self.consumers[name] = ModelConsumer(name, ack, filt, b"_M." + name.encode())

    @precondition(lambda self: self.consumers)
    @rule(data=st.data())
    def delete_consumer(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.consumers)))
        reply = self.api.call(f"$JS.API.CONSUMER.DELETE.S.{name}", b"")
        assert reply.get("success") is True, reply
        del self.consumers[name]
        self._settle()

    @precondition(lambda self: self.consumers)
    @rule(data=st.data(), batch=st.integers(1, 4))
    def fetch(self, data: st.DataObject, batch: int) -> None:
        c = self.consumers[data.draw(st.sampled_from(sorted(self.consumers)))]
        consumer = self.stream.consumer_set.by_name[c.name]  # type: ignore[union-attr]
        self.capture.got.clear()
        consumer.next_request(c.inbox, json.dumps({"batch": batch, "no_wait": True}).encode())
        for subject, reply, _, _ in self.capture.got:
            if reply is None:
                continue
            tokens = reply.decode().split(".")
            seq = int(tokens[5])
            assert seq in self.stored and c.matches(subject.decode()), (seq, subject, self.stored)
            c.delivered = max(c.delivered, seq)
            if c.ack == "none":
                c.floor = max(c.floor, seq)
            else:
                c.pending[seq] = reply
        self._settle()

    @precondition(lambda self: any(c.pending for c in self.consumers.values()))
    @rule(data=st.data(), kind=st.sampled_from(["+ACK", "+TERM", "-NAK"]))
    def acknowledge(self, data: st.DataObject, kind: str) -> None:
        c = self.consumers[data.draw(st.sampled_from(sorted(n for n, c in self.consumers.items() if c.pending)))]
        seq = data.draw(st.sampled_from(sorted(c.pending)))
        consumer = self.stream.consumer_set.by_name[c.name]  # type: ignore[union-attr]
        consumer.process_ack(c.pending[seq], None, -1, kind.encode())
        if kind == "-NAK":
            return
        if c.ack == "explicit":
            del c.pending[seq]
            c.acked.add(seq)
        elif seq > c.floor and int(c.pending[seq].decode().split(".")[6]) > c.dfloor:
            c.floor = seq
            c.pending = {s: r for s, r in c.pending.items() if s > seq}
        if self.retention == "workqueue":
            self.stored.pop(seq, None)
        self._settle()

    @rule(subject=st.sampled_from([None, *SUBJECTS]))
    def purge(self, subject: str | None) -> None:
        req = {"filter": subject} if subject else {}
        reply = self.api.call("$JS.API.STREAM.PURGE.S", req)
        assert reply.get("success") is True, reply
        self.stored = {s: subj for s, subj in self.stored.items() if subject is not None and subj != subject}
        for c in self.consumers.values():
            # ``consumer.purge``: pending messages that went count as acked; for ack all the
            # delivery floor rises past them (a later ack below it is ignored, as in Go).
            gone = [seq for seq in c.pending if seq not in self.stored]
            for seq in gone:
                c.dfloor = max(c.dfloor, int(c.pending.pop(seq).decode().split(".")[6]))
            if gone and not c.pending:
                c.floor = max(c.floor, c.delivered)

    @invariant()
    def stream_keeps_the_model(self) -> None:
        if not hasattr(self, "stream"):
            return
        store = self.stream.store
        kept = {seq for seq in range(store.first_seq, store.last_seq + 1) if store.load(seq) is not None}
        assert kept == set(self.stored)
        assert store.last_seq == self.last


RetentionMachine.TestCase.settings = settings(max_examples=80, stateful_step_count=40, deadline=None)
test_retention_model = RetentionMachine.TestCase
