"""The order of the frames one connection gets when several of its subscriptions match.

nats-server delivers message by message: a connection with ``t.*`` and ``t.>`` (or ``t.a``
twice, or a one-member queue group beside them) gets m1 for each of its matching
subscriptions, then m2 for each, and so on; never a block of every message for one
subscription, then a block for the next. That holds for client publishes and for what the
server sends itself in runs (a stream's PubAcks, a push consumer's deliveries, a Direct Get
batch, a pull request's batch): jsemu's batched outbound path (``server/outbound.py``) must
keep it. Hypothesis draws the subscriptions on one or two connections and a batch of
publishes in one write; the frames each connection gets are compared, in order, with
nats-server's (the order between two connections is not defined).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.rawclient import RawClient
from support.servers import RealServer

import jsemu
from jsemu.threaded import ThreadedServer

CONNECT = {"verbose": False, "pedantic": False, "headers": True}
MODES = ["core", "acks", "push", "direct", "pull"]
PATTERNS = ["a", "*", ">", "a"]
_names = itertools.count()


@pytest.fixture(scope="module")
def ports(real_server: RealServer) -> Iterator[tuple[int, int]]:
    with ThreadedServer(jsemu.Server()) as emu:
        yield emu.port, real_server.port


def _normal(frame: bytes) -> bytes:
    """Timestamps (and so an HMSG's sizes: Go trims a timestamp's trailing zeros) and ack
    subjects left out."""
    if b"Nats-Time-Stamp: " in frame:
        frame = re.sub(rb"Nats-Time-Stamp: [^\r]*", b"Nats-Time-Stamp: <ts>", frame)
        frame = re.sub(rb" \d+ \d+\r\n", b" <sizes>\r\n", frame, count=1)
    return re.sub(rb"\$JS\.ACK\.\S*", b"<ack>", frame)


async def _request(client: RawClient, subject: str, body: object) -> dict[str, object]:
    data = json.dumps(body).encode()
    client.send(b"SUB _I.api 99\r\nUNSUB 99 1\r\nPUB %s _I.api %d\r\n%s\r\n" % (subject.encode(), len(data), data))
    frame = await client.next_frame(5.0)
    while frame == b"PING\r\n":  # nats-server's first PING to a new connection
        client.send(b"PONG\r\n")
        frame = await client.next_frame(5.0)
    assert frame is not None
    reply: dict[str, object] = json.loads(frame.split(b"\r\n", 1)[1][:-2])
    assert "error" not in reply, reply
    return reply


async def _frames(client: RawClient, want: int) -> list[bytes]:
    """``want`` frames, then whatever else comes before a PONG."""
    frames = []
    while len(frames) < want:
        frame = await client.next_frame(5.0)
        if frame is None:
            break
        if frame == b"PING\r\n":
            client.send(b"PONG\r\n")
        else:
            frames.append(frame)
    return [_normal(f) for f in [*frames, *await client.round_trip()]]


def _same_node_runs_sorted(frames: list[bytes], node: dict[bytes, tuple[str, bool]]) -> list[bytes]:
    """nats-server keeps the subscriptions of one sublist node (``t.a`` twice; one-member
    queue groups on one subject) in a Go map: their order within one message is random, so
    a run of one message's frames to the same node is compared sorted by sid."""
    out: list[bytes] = []
    run: list[tuple[bytes, bytes]] = []
    key: object = None
    for frame in frames:
        head, _, rest = frame.partition(b"\r\n")
        parts = head.split()
        sid = parts[2] if len(parts) > 2 and parts[0] in (b"MSG", b"HMSG") else b""
        this = (node.get(sid), parts[:2], parts[3:], rest) if sid in node else frame
        if this != key:
            out += [f for _, f in sorted(run)]
            run, key = [], this
        run.append((sid, frame))
    return out + [f for _, f in sorted(run)]


async def _run(port: int, n: int, mode: str, subs: list[tuple[int, str, bool]], count: int) -> list[list[bytes]]:
    """Subscribe (connection, pattern under ``t<n>.``, one-member queue group?), publish
    ``count`` messages in one write in ``mode``; each connection's frames."""
    target = f"t{n}.a"
    if mode == "push":
        # nats-server's push consumer sees interest only in a plain subscription on its
        # literal deliver subject (a wildcard or a queue subscriber alone gets nothing; jsemu
        # delivers to them: left alone here). With one, every matching subscription gets it.
        subs = [(0, "a", False), *((i, pattern, False) for i, pattern, _ in subs)]
    conns = [await RawClient.connect(port, CONNECT) for _ in range(2)]
    setup = [b"", b""]
    for sid, (i, pattern, queued) in enumerate(subs, 1):
        queue = b" q%d" % sid if queued else b""
        setup[i] += b"SUB t%d.%s%s %d\r\n" % (n, pattern.encode(), queue, sid)
    for conn, lines in zip(conns, setup, strict=True):
        assert await conn.exchange(lines) == []
    pub = await RawClient.connect(port, CONNECT)
    assert await pub.exchange() == []
    stream = f"S{n}"
    bodies = [b"m%d" % i for i in range(count)]
    if mode != "core":
        await _request(
            pub,
            f"$JS.API.STREAM.CREATE.{stream}",
            {"name": stream, "subjects": [f"s{n}.>"], "storage": "memory", "allow_direct": True},
        )
    if mode in ("push", "direct", "pull"):
        pub.send(b"".join(b"PUB s%d.x %d\r\n%s\r\n" % (n, len(b), b) for b in bodies))
        info = {}
        while info.get("state", {}).get("messages") != count:  # type: ignore[union-attr]
            info = await _request(pub, f"$JS.API.STREAM.INFO.{stream}", {})
    if mode == "core":
        pub.send(b"".join(b"PUB %s %d\r\n%s\r\n" % (target.encode(), len(b), b) for b in bodies))
    elif mode == "acks":
        pub.send(b"".join(b"PUB s%d.x %s %d\r\n%s\r\n" % (n, target.encode(), len(b), b) for b in bodies))
    elif mode == "push":
        config = {"durable_name": "c", "deliver_subject": target, "ack_policy": "none"}
        await _request(pub, f"$JS.API.CONSUMER.CREATE.{stream}.c", {"stream_name": stream, "config": config})
    elif mode == "direct":
        body = json.dumps({"seq": 1, "batch": count}).encode()
        pub.send(b"PUB $JS.API.DIRECT.GET.%s %s %d\r\n%s\r\n" % (stream.encode(), target.encode(), len(body), body))
    else:
        config = {"durable_name": "c", "ack_policy": "none"}
        await _request(pub, f"$JS.API.CONSUMER.CREATE.{stream}.c", {"stream_name": stream, "config": config})
        body = json.dumps({"batch": count, "no_wait": True}).encode()
        pub.send(
            b"PUB $JS.API.CONSUMER.MSG.NEXT.%s.c %s %d\r\n%s\r\n" % (stream.encode(), target.encode(), len(body), body)
        )
    per_message = count + (mode == "direct")  # a Direct Get batch ends with its EOB status
    out = []
    node = {b"%d" % sid: (pattern, queued) for sid, (_, pattern, queued) in enumerate(subs, 1)}
    for i, conn in enumerate(conns):
        matching = sum(1 for c, pattern, _ in subs if c == i)  # every pattern matches t<n>.a
        out.append(_same_node_runs_sorted(await _frames(conn, per_message * matching), node))
    if mode != "core":
        await _request(pub, f"$JS.API.STREAM.DELETE.{stream}", {})
    for conn in [*conns, pub]:
        await conn.close()
    return out


SUBS = st.lists(st.tuples(st.integers(0, 1), st.sampled_from(PATTERNS), st.booleans()), min_size=1, max_size=4)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.sampled_from(MODES), subs=SUBS, count=st.integers(1, 4))
def test_one_connection_gets_each_message_for_all_its_subscriptions_in_turn(
    ports: tuple[int, int], mode: str, subs: list[tuple[int, str, bool]], count: int
) -> None:
    emu_port, real_port = ports
    n = next(_names)
    real = asyncio.run(_run(real_port, n, mode, subs, count))
    emu = asyncio.run(_run(emu_port, n, mode, subs, count))
    assert emu == real


@pytest.mark.parametrize("mode", MODES)
def test_two_subscriptions_interleave(ports: tuple[int, int], mode: str) -> None:
    """The case of the module docstring, always run: ``t.a`` and ``t.>`` on one connection."""
    emu_port, real_port = ports
    subs = [(0, "a", False), (0, ">", False), (1, "*", False)]
    n = next(_names)
    real = asyncio.run(_run(real_port, n, mode, subs, 3))
    emu = asyncio.run(_run(emu_port, n, mode, subs, 3))
    assert emu == real
    first, second = (f.partition(b"\r\n") for f in real[0][:2])
    assert first[2] == second[2] and first[0].split()[2] != second[0].split()[2]  # m1 twice, then m2
