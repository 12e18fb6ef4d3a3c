"""What waiting pull requests and push subscribers hear when their consumer or stream goes
away or the server stops, frame by frame, on jsemu and on nats-server 2.15.1.

Captured from the binary (raw sockets), and read in ``consumer.go`` / ``jetstream.go``:

* ``CONSUMER.DELETE`` and ``STREAM.DELETE``: each waiting request of a pull consumer gets
  ``NATS/1.0 409 Consumer Deleted`` (no other header, no payload), in the order the requests
  wait (a request that took a message but wants more has moved behind the others), also
  while the consumer is paused; the next request hears no responders.
* A clean stop (SIGTERM, or an in-process ``stop()``): each waiting request gets
  ``409 Server Shutdown`` with ``Nats-Pending-Messages`` / ``Nats-Pending-Bytes`` (what it
  still asked for) before its connection closes; once per reply subject (the latest request
  of that reply), in no defined order (Go walks a map), so each connection's statuses are
  compared as a set.
* A purge sends nothing (the requests keep waiting and get the next message), and neither
  does a push consumer's deletion (its idle heartbeats stop), a stop to a push subscriber,
  or lame duck mode (SIGUSR2) to a waiting request.

Idle heartbeats of a request that asked for them are left out of the comparisons: when one
falls due relative to a deletion is timing, not protocol.
"""

from __future__ import annotations

import asyncio
import json
import signal
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from support.rawclient import RawClient
from support.servers import RealServer

import jsemu

CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}
NEXT = b"$JS.API.CONSUMER.MSG.NEXT.S.D"
DELETED = b"NATS/1.0 409 Consumer Deleted\r\n\r\n"
NO_RESPONDERS = b"NATS/1.0 503\r\nNats-Subject: $JS.API.CONSUMER.MSG.NEXT.S.D\r\n\r\n"


def shutdown(pending: int, left: int) -> bytes:
    return b"NATS/1.0 409 Server Shutdown\r\nNats-Pending-Messages: %d\r\nNats-Pending-Bytes: %d\r\n\r\n" % (
        pending,
        left,
    )


@dataclass
class Running:
    port: int
    stop: Callable[[], Awaitable[None]]
    signal: Callable[[int], None] | None = None
    server: jsemu.Server | None = None  # the in-process one


@pytest.fixture(params=["jsemu", "real"])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Running]:
    """A fresh server of the parametrised kind: jsemu in the test's loop, or nats-server."""
    async for running in _start(request.param):
        yield running


@pytest.fixture(params=["jsemu", "jsemu-process", "real"])
async def stoppable(request: pytest.FixtureRequest) -> AsyncIterator[Running]:
    """As ``server``, and ``jsemu serve`` as a process stopped by SIGTERM like nats-server."""
    async for running in _start(request.param):
        yield running


async def _start(kind: str) -> AsyncIterator[Running]:
    if kind == "jsemu":
        with tempfile.TemporaryDirectory(prefix="jsemu-goaway-") as tmp:
            srv = jsemu.Server(store_dir=tmp)
            await srv.start()
            try:
                yield Running(srv.port, srv.stop, server=srv)
            finally:
                await srv.stop()
        return
    proc = RealServer(jsemu_process=kind == "jsemu-process")

    async def terminate() -> None:
        proc.proc.terminate()
        await asyncio.to_thread(proc.proc.wait, 10)

    try:
        yield Running(proc.port, terminate, proc.proc.send_signal)
    finally:
        proc.stop()


async def connect(port: int) -> RawClient:
    client = await RawClient.connect(port, CONNECT)
    await client.round_trip()
    return client


async def request(client: RawClient, subject: str, body: Any = b"") -> dict[str, Any]:
    """A JetStream API request; its JSON reply (an INFO the server pushes meanwhile is skipped)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    client.send(b"SUB _API.r 999\r\nPUB %s _API.r %d\r\n%s\r\nUNSUB 999 1\r\n" % (subject.encode(), len(data), data))
    while True:
        frame = await client.next_frame(5.0)
        assert frame is not None, f"no reply to {subject}"
        if frame.startswith(b"MSG _API.r "):
            reply: dict[str, Any] = json.loads(frame.split(b"\r\n", 1)[1])
            return reply


def pull(client: RawClient, reply: bytes, body: dict[str, Any] | int) -> None:
    data = json.dumps(body).encode()
    client.send(b"PUB %s %s %d\r\n%s\r\n" % (NEXT, reply, len(data), data))


def status(frame: bytes) -> tuple[bytes, bytes]:
    """(reply subject, header block) of a header-only HMSG."""
    line, rest = frame.split(b"\r\n", 1)
    parts = line.split()
    assert parts[0] == b"HMSG" and parts[-1] == parts[-2], frame  # no payload
    return parts[1], rest[: int(parts[-1])]


def is_heartbeat(frame: bytes) -> bool:
    return frame.startswith(b"HMSG ") and b"\r\nNATS/1.0 100 Idle Heartbeat\r\n" in frame


async def frames_until(client: RawClient, n: int, timeout: float = 3.0) -> list[bytes]:
    """``n`` frames (not counting idle heartbeats, PINGs and INFOs), then whatever else
    came before the answer to a PING."""
    got: list[bytes] = []
    while len(got) < n:
        frame = await client.next_frame(timeout)
        if frame is None:
            break
        if frame == b"PING\r\n":
            client.send(b"PONG\r\n")
        elif not is_heartbeat(frame) and not frame.startswith(b"INFO "):
            got.append(frame)
    if not client.eof:
        got += [f for f in await client.round_trip() if not is_heartbeat(f) and not f.startswith(b"INFO ")]
    return got


async def waiting(api: RawClient, n: int) -> None:
    """Until the consumer holds ``n`` waiting requests (the server takes them in its own time)."""
    for _ in range(200):
        info = await request(api, "$JS.API.CONSUMER.INFO.S.D")
        if info["num_waiting"] == n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"num_waiting never reached {n}: {info}")


async def pull_setup(port: int) -> tuple[RawClient, RawClient, RawClient]:
    """Stream S, pull consumer D; on ``p1`` two requests (``a``: batch 10, no expiry, which
    takes the one message published; ``b``: batch 5, 30 s), on ``p2`` one with max_bytes and
    idle heartbeats. Returns (api client, p1, p2)."""
    api = await connect(port)
    assert "error" not in await request(api, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
    created = await request(
        api,
        "$JS.API.CONSUMER.CREATE.S.D",
        {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}},
    )
    assert "error" not in created, created
    p1, p2 = await connect(port), await connect(port)
    p1.send(b"SUB _P1.> 1\r\n")
    pull(p1, b"_P1.a", 10)
    pull(p1, b"_P1.b", {"batch": 5, "expires": 30_000_000_000})
    await p1.round_trip()
    await waiting(api, 2)  # p1's wait first, whatever the servers' scheduling
    p2.send(b"SUB _P2.> 1\r\n")
    pull(p2, b"_P2.a", {"batch": 3, "expires": 30_000_000_000, "idle_heartbeat": 1_000_000_000, "max_bytes": 1000})
    await p2.round_trip()
    await waiting(api, 3)
    api.send(b"PUB s.1 2\r\nhi\r\n")
    got = await frames_until(p1, 1)
    assert len(got) == 1 and got[0].startswith(b"MSG s.1 1 $JS.ACK.S.D.1.1.1.") and got[0].endswith(b"\r\nhi\r\n")
    return api, p1, p2


@pytest.mark.parametrize("what", ["consumer", "stream"])
async def test_deleted_consumer_releases_waiting_requests(server: Running, what: str) -> None:
    api, p1, p2 = await pull_setup(server.port)
    subject = "$JS.API.CONSUMER.DELETE.S.D" if what == "consumer" else "$JS.API.STREAM.DELETE.S"
    assert (await request(api, subject)).get("success") is True
    # b first: a took a message and so moved behind the others
    assert [status(f) for f in await frames_until(p1, 2)] == [(b"_P1.b", DELETED), (b"_P1.a", DELETED)]
    assert [status(f) for f in await frames_until(p2, 1)] == [(b"_P2.a", DELETED)]
    # the consumer is gone: the next request hears no responders
    pull(p1, b"_P1.c", 1)
    assert [status(f) for f in await frames_until(p1, 1)] == [(b"_P1.c", NO_RESPONDERS)]


async def test_purge_leaves_waiting_requests_alone(server: Running) -> None:
    api, p1, _ = await pull_setup(server.port)
    assert (await request(api, "$JS.API.STREAM.PURGE.S")).get("success") is True
    await asyncio.sleep(0.2)
    assert await frames_until(p1, 0) == []
    api.send(b"PUB s.2 3\r\nnew\r\n")  # b waits first now
    got = await frames_until(p1, 1)
    assert len(got) == 1 and got[0].startswith(b"MSG s.2 1 $JS.ACK.S.D.1.2.2."), got


async def test_deleted_push_consumer_sends_nothing(server: Running) -> None:
    api = await connect(server.port)
    await request(api, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
    api.send(b"SUB _PUSH.d 7\r\n")
    cfg = {"durable_name": "D", "deliver_subject": "_PUSH.d", "idle_heartbeat": 200_000_000, "flow_control": True}
    assert "error" not in await request(api, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": cfg})
    assert (await request(api, "$JS.API.CONSUMER.DELETE.S.D")).get("success") is True
    await asyncio.sleep(0.6)  # three heartbeat intervals
    assert [f for f in await api.round_trip() if not f.startswith(b"INFO ")] == []


async def test_stop_signals_waiting_requests(stoppable: Running) -> None:
    api, p1, p2 = await pull_setup(stoppable.port)
    p3 = await connect(stoppable.port)
    p3.send(b"SUB _P3 1\r\n")
    pull(p3, b"_P3", 2)
    pull(p3, b"_P3", {"batch": 4, "max_bytes": 100})  # the same reply: one status, the later's
    await p3.round_trip()
    await waiting(api, 5)
    await stoppable.stop()
    statuses = [
        sorted(status(f) for f in await c.read_until_closed() if not is_heartbeat(f) and not f.startswith(b"INFO "))
        for c in (p1, p2, p3)
    ]
    assert statuses == [
        [(b"_P1.a", shutdown(9, 0)), (b"_P1.b", shutdown(5, 0))],
        [(b"_P2.a", shutdown(3, 1000))],
        [(b"_P3", shutdown(4, 100))],
    ]


async def test_lame_duck_mode_sends_nothing(stoppable: Running) -> None:
    if stoppable.signal is None:
        pytest.skip("lame duck mode by signal: the process servers")
    _api, p1, _ = await pull_setup(stoppable.port)
    stoppable.signal(signal.SIGUSR2)
    await asyncio.sleep(0.5)
    assert await frames_until(p1, 0) == []
    stoppable.signal(signal.SIGKILL)  # a server in lame duck mode takes its time over SIGTERM


async def test_paused_consumer_deleted_releases_waiting_requests(server: Running) -> None:
    api = await connect(server.port)
    await request(api, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
    cfg = {"durable_name": "D", "ack_policy": "explicit", "pause_until": "2999-01-01T00:00:00Z"}
    assert "error" not in await request(api, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": cfg})
    p1 = await connect(server.port)
    p1.send(b"SUB _P1.> 1\r\n")
    pull(p1, b"_P1.a", {"batch": 2, "expires": 30_000_000_000})
    await p1.round_trip()
    await waiting(api, 1)
    assert (await request(api, "$JS.API.CONSUMER.DELETE.S.D")).get("success") is True
    assert [status(f) for f in await frames_until(p1, 1)] == [(b"_P1.a", DELETED)]


async def test_stop_sends_push_subscribers_nothing(stoppable: Running) -> None:
    api = await connect(stoppable.port)
    await request(api, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
    push = await connect(stoppable.port)
    push.send(b"SUB _PUSH.d 7\r\n")
    await push.round_trip()
    cfg = {"durable_name": "D", "deliver_subject": "_PUSH.d", "idle_heartbeat": 200_000_000, "flow_control": True}
    assert "error" not in await request(api, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": cfg})
    await stoppable.stop()
    frames = await push.read_until_closed()
    assert [f for f in frames if not is_heartbeat(f) and not f.startswith(b"INFO ")] == []


async def test_stop_after_lame_duck_mode_sends_nothing() -> None:
    """jsemu only: lame duck mode's ``shutdownJetStream`` removes the consumers, so the
    ``Server.Shutdown`` at its end has no waiting request to signal (nats-server closes the
    clients first anyway, and takes its time over a SIGTERM meanwhile)."""
    async for running in _start("jsemu"):
        _api, p1, _ = await pull_setup(running.port)
        assert running.server is not None and running.server.enter_lame_duck()
        await asyncio.sleep(0.1)
        await running.stop()
        frames = await p1.read_until_closed()
        assert [f for f in frames if not f.startswith(b"INFO ")] == []
