"""Runs of plain publishes to a subject nobody listens to, or that one client subscription
takes (``jsemu/server/run_lanes.py``): what each connection gets, frame by frame, as
nats-server sends it.

A run takes a lane only once its subject is learned (its first read goes message by
message), so every case sends its reads twice or more. The cases are the lanes' edges:
no-responders statuses for reply subjects nobody listens to, a publisher with ``echo:
false`` subscribed to what it publishes, an ``UNSUB`` limit, interest that appears or goes
inside one read, reply subjects, and a wildcard subscription over several subjects.
Hypothesis draws reads from the same pieces and compares them too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.rawclient import RawClient
from support.servers import RealServer

import jsemu
from jsemu.threaded import ThreadedServer

CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True}
_names = itertools.count()


@pytest.fixture(scope="module")
def ports(real_server: RealServer) -> Iterator[dict[str, int]]:
    with ThreadedServer(jsemu.Server()) as emu:
        yield {"jsemu": emu.port, "real": real_server.port}


def _pubs(prefix: bytes, subjects: list[bytes], reply: bytes | None = None) -> bytes:
    out = b""
    for i, subject in enumerate(subjects):
        payload = b"m%d" % i
        head = b"PUB %b.%b" % (prefix, subject)
        if reply is not None:
            head += b" " + prefix + b"." + reply
        out += head + b" %d\r\n%b\r\n" % (len(payload), payload)
    return out


async def _run(port: int, prefix: bytes, script: list[tuple[str, bytes]], echo: bool = True) -> list[list[bytes]]:
    """``script``: (``pub`` or ``sub``, bytes with ``{p}`` for the prefix) sent in order, each
    followed by a round trip on the connection that sent it; the frames each got."""
    pub = await RawClient.connect(port, {**CONNECT, "echo": echo})
    sub = await RawClient.connect(port, CONNECT)
    clients = {"pub": pub, "sub": sub}
    got: dict[str, list[bytes]] = {"pub": [], "sub": []}
    try:
        for who, data in script:
            clients[who].send(data.replace(b"{p}", prefix))
            got[who] += await clients[who].round_trip()
        for who in ("pub", "sub"):  # what the other side's reads sent to it
            got[who] += await clients[who].round_trip()
    finally:
        await pub.close()
        await sub.close()
    return [got["pub"], got["sub"]]


def _sid_order_free(frames: list[bytes]) -> list[bytes]:
    """Frames of one message for several subscriptions of a connection, sorted: which of a
    ``*`` and a literal subscription nats-server serves first is not jsemu's (both before and
    after the lanes; ``tests/server/test_delivery_order.py`` owns that order). The reply
    subjects are two tokens deep so that no ``*`` takes them: which subscription a
    no-responders status names when two of the publisher's match is not jsemu's either."""
    out: list[bytes] = []
    block: list[bytes] = []
    key = None
    for frame in frames:
        parts = frame.split(b" ", 3)
        this = (parts[0], parts[1], parts[-1]) if parts[0] in (b"MSG", b"HMSG") else frame
        if this != key:
            out += sorted(block)
            block = []
            key = this
        block.append(frame)
    return out + sorted(block)


async def _compare(ports: dict[str, int], script: list[tuple[str, bytes]], echo: bool = True) -> list[list[bytes]]:
    prefix = b"rl%d" % next(_names)
    emu = await _run(ports["jsemu"], prefix, script, echo)
    real = await _run(ports["real"], prefix, script, echo)
    assert [_sid_order_free(f) for f in emu] == [_sid_order_free(f) for f in real]
    return emu


def _twice(data: bytes, times: int = 3) -> list[tuple[str, bytes]]:
    return [("pub", data)] * times


async def test_no_interest_runs_with_and_without_replies(ports: dict[str, int]) -> None:
    """Nobody listens: dropped; a reply subject gets its no-responders status each time."""
    plain = _pubs(b"{p}", [b"a"] * 5)
    with_reply = b"SUB {p}.r.inbox 9\r\n" + _pubs(b"{p}", [b"a", b"b", b"a"], b"r.inbox")
    mixed = _pubs(b"{p}", [b"a", b"a"]) + _pubs(b"{p}", [b"a"], b"r.inbox") + _pubs(b"{p}", [b"a"])
    got = await _compare(ports, [*_twice(plain), *_twice(with_reply), *_twice(mixed)])
    assert sum(b"503" in f for f in got[0]) == 3 * 3 + 3


async def test_one_subscription_runs(ports: dict[str, int]) -> None:
    """One client subscription: every message, in order, with its reply subject."""
    got = await _compare(
        ports,
        [
            ("sub", b"SUB {p}.a 1\r\n"),
            *_twice(_pubs(b"{p}", [b"a"] * 4)),
            *_twice(_pubs(b"{p}", [b"a"] * 3, b"r.1")),
            *_twice(_pubs(b"{p}", [b"a"]) + _pubs(b"{p}", [b"a"], b"r.2")),
        ],
    )
    assert len(got[1]) == 3 * 4 + 3 * 3 + 3 * 2


async def test_a_run_over_nobody_and_somebody(ports: dict[str, int]) -> None:
    """A run over a subject nobody listens to and one two subscriptions take (no lane):
    not dropped with the first."""
    got = await _compare(
        ports,
        [("sub", b"SUB {p}.b 1\r\nSUB {p}.b 2\r\n"), *_twice(_pubs(b"{p}", [b"a", b"b", b"a", b"b"]))],
    )
    assert len(got[1]) == 3 * 4


async def test_wildcard_subscription_over_several_subjects(ports: dict[str, int]) -> None:
    await _compare(
        ports,
        [
            ("sub", b"SUB {p}.* 1\r\n"),
            *_twice(_pubs(b"{p}", [b"a", b"b", b"a", b"c"])),
            *_twice(_pubs(b"{p}", [b"b"] * 3)),
        ],
    )


async def test_no_echo_publisher_subscribed_to_its_subject(ports: dict[str, int]) -> None:
    """``echo: false``: the publisher's own subscription gets nothing, the other one all."""
    script = [("pub", b"SUB {p}.a 5\r\n"), *_twice(_pubs(b"{p}", [b"a"] * 3))]
    got = await _compare(ports, script, echo=False)
    assert got[0] == []
    got = await _compare(ports, [("sub", b"SUB {p}.a 1\r\n"), *script], echo=False)
    assert got[0] == [] and len(got[1]) == 9


async def test_unsub_limit_after_the_route_was_learned(ports: dict[str, int]) -> None:
    got = await _compare(
        ports,
        [("sub", b"SUB {p}.a 1\r\n"), *_twice(_pubs(b"{p}", [b"a"] * 3), 2), ("sub", b"UNSUB 1 8\r\n")]
        + _twice(_pubs(b"{p}", [b"a"] * 3), 2),
    )
    assert len(got[1]) == 8


async def test_interest_comes_and_goes_inside_one_read(ports: dict[str, int]) -> None:
    """The publisher's own SUB and UNSUB between runs of one read."""
    run = _pubs(b"{p}", [b"a"] * 3)
    got = await _compare(
        ports,
        [
            *_twice(run, 2),
            ("pub", run + b"SUB {p}.a 1\r\n" + run),
            ("pub", run + b"UNSUB 1\r\n" + run),
            ("pub", run),
        ],
    )
    assert len(got[0]) == 3 + 3


async def test_the_subscriber_leaves_between_runs(ports: dict[str, int]) -> None:
    run = _pubs(b"{p}", [b"a"] * 3)
    got = await _compare(
        ports, [("sub", b"SUB {p}.a 1\r\n"), *_twice(run, 2), ("sub", b"UNSUB 1\r\n"), *_twice(run, 2)]
    )
    assert len(got[1]) == 6


_OPS = st.sampled_from(
    [
        b"PUB {p}.a 2\r\nxx\r\n",
        b"PUB {p}.b 1\r\ny\r\n",
        b"PUB {p}.a {p}.r.inbox 0\r\n\r\n",
        b"PUB {p}.c {p}.r.inbox 1\r\nz\r\n",
        b"HPUB {p}.a 12 14\r\nNATS/1.0\r\n\r\nhh\r\n",
        b"SUB {p}.a 1\r\n",
        b"SUB {p}.* 2\r\n",
        b"SUB {p}.r.inbox 3\r\n",
        b"UNSUB 1\r\n",
        b"UNSUB 2 4\r\n",
    ]
)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    reads=st.lists(st.tuples(st.sampled_from(["pub", "sub"]), st.lists(_OPS, min_size=1, max_size=8)), max_size=8),
    echo=st.booleans(),
)
async def test_hypothesis_reads(ports: dict[str, int], reads: list[tuple[str, list[bytes]]], echo: bool) -> None:
    """Reads drawn from publishes (plain, with replies, one with headers), subscriptions and
    unsubscriptions on either connection, each sent twice so that the second takes a lane."""
    script = [(who, b"".join(ops)) for who, ops in reads for _ in range(2)]
    await _compare(ports, script, echo)
