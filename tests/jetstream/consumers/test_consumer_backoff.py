"""jsemu-only, on the server's frozen clock: ``backoff`` spaces redeliveries by the delay for
each delivery count (the last one repeats) up to ``max_deliver``. In-process (no network):
each fetch is a no-wait pull request whose frames arrive synchronously."""

from __future__ import annotations

import asyncio
import json

import jsemu
from jsemu.server.sublist import Subscription

from .test_consumer_model import Capture

INBOX = b"_B.pull"
S = 1_000_000_000


class Harness:
    def __init__(self, consumer_cfg: dict[str, object]) -> None:
        self.srv = jsemu.Server()
        js, api = self.srv.jetstream, self.srv.jetstream_api
        assert js is not None and api is not None
        self.js = js
        self.ctl = self.srv.control
        self.ctl.freeze_clock()
        api.call("$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory"})
        reply = api.call("$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": consumer_cfg})
        assert "error" not in reply, reply
        self.info = reply
        self.stream = js.streams["S"]
        self.consumer = js.consumer_set(self.stream).by_name["C"]
        self.capture = Capture()
        js.server.sublist.insert(Subscription(self.capture, INBOX, None, b"cap"))

    def publish(self, subject: str = "s.a", n: int = 1) -> None:
        for _ in range(n):
            self.stream.publish(subject.encode(), None, -1, b"m")

    def fetch(self, batch: int = 1) -> list[tuple[int, int]]:
        """(delivery count, stream sequence) of each message; a status ends the list."""
        self.capture.got.clear()
        self.consumer.next_request(INBOX, json.dumps({"batch": batch, "no_wait": True}).encode())
        out = []
        for _, reply, _, _ in self.capture.got:
            if reply is not None:
                tokens = reply.decode().split(".")
                out.append((int(tokens[4]), int(tokens[5])))
        return out

    def step(self, ns: int) -> None:
        self.ctl.advance_clock(ns=ns)


def test_backoff_spaces_redeliveries_then_max_deliver() -> None:
    h = Harness({"durable_name": "C", "ack_policy": "explicit", "backoff": [S, 5 * S, 20 * S], "max_deliver": 5})
    assert h.info["config"]["ack_wait"] == S  # the first backoff is the ack wait
    h.publish()
    assert h.fetch() == [(1, 1)]
    for count, delay in [(2, S), (3, 5 * S), (4, 20 * S), (5, 20 * S)]:
        h.step(delay - 1)
        assert h.fetch() == [], count
        h.step(1)
        assert h.fetch() == [(count, 1)]
    h.step(60 * S)  # max_deliver 5 reached: dropped from pending at this look
    assert h.fetch() == []
    info = h.consumer.info_json()
    assert (info["num_ack_pending"], info["num_redelivered"]) == (0, 1)


def test_backoff_per_message_counts() -> None:
    """Each message waits by its own count: a fresh one uses the first delay while an older
    one is on its second."""
    h = Harness({"durable_name": "C", "ack_policy": "explicit", "backoff": [2 * S, 10 * S]})
    h.publish()
    assert h.fetch() == [(1, 1)]
    h.step(2 * S)
    assert h.fetch() == [(2, 1)]
    h.publish()
    assert h.fetch() == [(1, 2)]
    h.step(2 * S)
    assert h.fetch(2) == [(2, 2)]  # seq 1 waits 10 s now
    h.step(8 * S - 1)
    assert h.fetch(2) == []
    h.step(1)
    assert h.fetch(2) == [(3, 1)]


def test_ack_wait_without_backoff_unchanged() -> None:
    h = Harness({"durable_name": "C", "ack_policy": "explicit", "ack_wait": 3 * S})
    h.publish()
    assert h.fetch() == [(1, 1)]
    for count in (2, 3, 4):
        h.step(3 * S - 1)
        assert h.fetch() == []
        h.step(1)
        assert h.fetch() == [(count, 1)]


def _delivered(h: Harness) -> list[int]:
    return [int(reply.decode().split(".")[5]) for _, reply, _, _ in h.capture.got if reply is not None]


def test_replay_original_spaces_deliveries_by_stored_times() -> None:
    h = Harness({"durable_name": "C", "ack_policy": "explicit", "replay_policy": "original", "ack_wait": 600 * S})
    h.publish()
    h.step(2 * S)
    h.publish(n=2)  # stored in the same instant: no wait between them
    h.step(5 * S)
    h.publish()
    h.capture.got.clear()
    h.consumer.next_request(INBOX, json.dumps({"batch": 10, "expires": 60 * S}).encode())
    assert _delivered(h) == [1]
    h.step(2 * S - 1)
    assert _delivered(h) == [1]
    h.step(1)
    assert _delivered(h) == [1, 2, 3]
    h.step(5 * S - 1)
    assert _delivered(h) == [1, 2, 3]
    h.step(1)
    assert _delivered(h) == [1, 2, 3, 4]


def test_replay_instant_delivers_at_once() -> None:
    h = Harness({"durable_name": "C", "ack_policy": "explicit"})
    h.publish()
    h.step(2 * S)
    h.publish()
    assert h.fetch(5) == [(1, 1), (1, 2)]


async def test_push_replay_original_and_backoff() -> None:
    """The push engine follows the same clocks: deliveries spaced by the stored times, then
    the unacked first message redelivered after its backoff delay."""
    async with jsemu.Server() as srv:
        js, api = srv.jetstream, srv.jetstream_api
        assert js is not None and api is not None
        srv.control.freeze_clock()
        api.call("$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory"})
        capture = Capture()
        js.server.sublist.insert(Subscription(capture, b"_B.push", None, b"cap"))
        stream = js.streams["S"]
        stream.publish(b"s.a", None, -1, b"m")
        srv.control.advance_clock(ns=3 * S)
        stream.publish(b"s.a", None, -1, b"m")
        cfg = {
            "durable_name": "P",
            "ack_policy": "explicit",
            "deliver_subject": "_B.push",
            "replay_policy": "original",
            "backoff": [10 * S, 20 * S],
        }
        assert "error" not in api.call("$JS.API.CONSUMER.CREATE.S.P", {"stream_name": "S", "config": cfg})
        await asyncio.sleep(0.05)  # a bound push consumer starts after its create reply

        def got() -> list[tuple[int, int]]:
            tokens = [r.decode().split(".") for _, r, _, _ in capture.got if r is not None]
            return [(int(t[4]), int(t[5])) for t in tokens]

        assert got() == [(1, 1)]
        srv.control.advance_clock(ns=3 * S)
        assert got() == [(1, 1), (1, 2)]
        srv.control.advance_clock(ns=7 * S - 1)
        assert got() == [(1, 1), (1, 2)]
        srv.control.advance_clock(ns=1)  # 10 s after the first delivery
        assert got() == [(1, 1), (1, 2), (2, 1)]
