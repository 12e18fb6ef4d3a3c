"""The ack lane (``jsemu/server/ack_lane.py``): when acks may bypass routing, and that they
then leave the match cache and the learned routes alone."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.rawclient import RawClient

import jsemu
from jsemu.server.ack_lane import ack_key
from jsemu.server.sublist import Subscription

ACK = b"$JS.ACK.S.D.1.1.1.1700000000000000000.0"


class _Quiet:
    echo = True

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        return True


def _with_consumer() -> jsemu.Server:
    srv = jsemu.Server()
    api = srv.jetstream_api
    assert api is not None
    api.call("$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    reply = api.call(
        "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}
    )
    assert "error" not in reply, reply
    return srv


@pytest.mark.parametrize(
    ("subject", "queue", "opens"),
    [
        (b"foo.>", None, True),
        (b"$JS.API.>", None, True),
        (b"$JS.ACK.T.>", None, False),  # another stream: the lane is all or nothing
        (b">", None, False),
        (b"$JS.>", None, False),
        (b"*.ACK.>", None, False),
        (b"$JS.*.S.D.*.*.*.*.*", None, False),
        (b"$JS.ACK.S.D.1.>", None, False),
        (b"$JS.ACK.>", b"q", False),
    ],
)
def test_lane_is_open_only_while_nothing_else_can_take_an_ack(subject: bytes, queue: bytes | None, opens: bool) -> None:
    srv = _with_consumer()
    lane = srv.ack_lane
    assert lane.target(ACK) is not None
    sub = Subscription(_Quiet(), subject, queue, b"1")
    assert srv.sublist.insert(sub)
    assert (lane.target(ACK) is not None) is opens
    srv.sublist.remove(sub)
    assert lane.target(ACK) is not None  # re-checked after the change


def test_ack_key_takes_only_nine_non_empty_tokens() -> None:
    assert ack_key(ACK) == b"S.D"
    for bad in (b"$JS.ACK.S.D.1.1.1.1", b"$JS.ACK.S.D.1.1.1.1.0.9", b"$JS.ACK.S..1.1.1.1.0", b"$JS.ACK.S.D.1.1.1.1."):
        assert ack_key(bad) is None


async def test_acks_leave_the_match_cache_and_learned_routes_alone() -> None:
    async with jsemu.Server() as srv:
        client = await RawClient.connect(srv.port, {"verbose": False, "pedantic": False})
        create = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory"}).encode()
        consumer = json.dumps({"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}).encode()
        await client.exchange(
            b"SUB _INBOX.x 1\r\nPUB $JS.API.STREAM.CREATE.S _INBOX.x %d\r\n%b\r\n" % (len(create), create)
            + b"".join(b"PUB s.%d 1\r\n%d\r\n" % (i, i % 10) for i in range(20))
            + b"PUB $JS.API.CONSUMER.CREATE.S.D _INBOX.x %d\r\n%b\r\n" % (len(consumer), consumer)
        )
        frames = await client.exchange(b"PUB $JS.API.CONSUMER.MSG.NEXT.S.D _INBOX.x 2\r\n20\r\n")
        while len([f for f in frames if b" $JS.ACK." in f]) < 20:
            frames += await client.exchange()
            await asyncio.sleep(0.01)
        acks = [f.split(b" ")[3] for f in frames if b" $JS.ACK." in f]
        # one read: a run of acks on the fast lane; then one by one with a reply
        await client.exchange(b"".join(b"PUB %b 0\r\n\r\n" % a for a in acks[:10]))
        for a in acks[10:]:
            assert await client.exchange(b"PUB %b _INBOX.x 4\r\n+ACK\r\n" % a) == [b"MSG _INBOX.x 1 0\r\n\r\n"]
        consumer_state = srv.jetstream.consumer_set(srv.jetstream.streams["S"]).by_name["D"]  # type: ignore[union-attr]
        assert consumer_state.pending == {} and consumer_state.ack_floor == (20, 20)
        assert not [s for s in srv.sublist._cache if s.startswith(b"$JS.ACK.")]
        assert not [s for s in srv.learned_routes if s.startswith(b"$JS.ACK.")]
        await client.close()


_VARIANTS = [
    b"$JS.ACK.S.D.1.%d.%d.1700000000000000000.0",  # a valid ack of S.D
    b"$JS.ACK.S.D.1.%d.%d.1700000000000000000.0.9",  # a tenth token
    b"$JS.ACK.S.D.1.%d.%d.1700000000000000000",  # eight tokens
    b"$JS.ACK.S.D.1.%d..%d.0",  # an empty token
    b"$JS.ACK.S.D.1.%d.%d.1700000000000000000.",  # a trailing dot (an empty last token)
    b"$JS.ACK.S.E.1.%d.%d.1700000000000000000.0",  # another consumer (not declared)
    b"$JS.ACK.S.DD.1.%d.%d.1700000000000000000.0",  # a consumer whose name starts the same
    b"s.%d.%d",  # not an ack
]


def _valid(subject: bytes) -> bool:
    """A nine-token ack subject of consumer D on stream S, no token empty (the model)."""
    tokens = subject.split(b".")
    return len(tokens) == 9 and all(tokens) and tokens[:4] == [b"$JS", b"ACK", b"S", b"D"]


@settings(max_examples=300, deadline=None)
@example(valid=8, bad=[(4, 20)], start=0)  # a trailing dot on the run's last subject
@given(
    valid=st.integers(1, 20),
    bad=st.lists(st.tuples(st.integers(1, len(_VARIANTS) - 1), st.integers(0, 20)), max_size=2),
    start=st.integers(0, 3),
)
def test_a_run_of_one_consumers_acks_is_recognised_only_when_every_subject_is_its_ack(
    valid: int, bad: list[tuple[int, int]], start: int
) -> None:
    """``one_consumer`` (the bulk check) and ``stretch`` (one subject at a time) against a
    plain model, on runs of valid acks with a bad subject or two put in anywhere."""
    srv = _with_consumer()
    lane = srv.ack_lane
    picks = [0] * valid
    for variant, at in bad:
        picks.insert(min(at, len(picks)), variant)
    run = [_VARIANTS[p] % (i + 1, i + 1) for i, p in enumerate(picks)]
    start = min(start, len(run) - 1)
    rest = run[start:]
    handler = lane.one_consumer(run, start)
    if all(map(_valid, rest)) and len(rest) >= 8:
        assert handler is not None and handler == lane.targets[b"S.D"]
    else:
        assert handler is None
    leading = next((i for i, s in enumerate(rest) if not _valid(s)), len(rest))
    assert lane.stretch(run, start) == start + leading
