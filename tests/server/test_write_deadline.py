"""``write_deadline``: a client whose socket does not take its output in time is cut as a slow
consumer, side by side with nats-server: closed without a ``-ERR``, about one deadline after
its output stopped draining, counted in /varz (``slow_consumers``, ``slow_consumer_stats``),
listed in ``/connz?state=closed`` with the reason ``Slow Consumer (Write Deadline)``; the
publisher and the other subscribers carry on. jsemu's deadline runs on the server's clock: with
the controlled clock frozen nobody is cut, and a step past the deadline cuts at once."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from support.cluster import free_port
from support.rawclient import RawClient
from support.servers import KINDS, RealServer

import jsemu
from jsemu.config.server_config import apply_config, parse_config
from jsemu.server.options import ServerOptions

QUIET = {"verbose": False, "pedantic": False}
PAYLOAD = 64 * 1024
#: 32 MiB: far more than loopback socket buffers hold, below 3/4 of ``max_pending`` (nats-server
#: stalls the publisher above that), so only the deadline can cut the subscriber.
FLOOD = 512
REASON = "Slow Consumer (Write Deadline)"


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
        return json.load(reply)


#: (client port, monitor port) of a started server.
Start = Callable[[dict[str, Any]], Awaitable[tuple[int, int]]]


@pytest.fixture(params=KINDS)
async def start(request: pytest.FixtureRequest) -> AsyncIterator[Start]:
    """Start jsemu (in this loop) or nats-server from the same configuration keys, with a
    monitoring port."""
    started: list[Any] = []

    async def run(config: dict[str, Any]) -> tuple[int, int]:
        if request.param == "jsemu":
            text = "\n".join(f"{key}: {json.dumps(value)}" for key, value in config.items())
            options = apply_config(parse_config(text), ServerOptions(http_port=-1))
            srv = jsemu.Server(options)
            await srv.start()
            started.append(srv)
            assert srv.monitor is not None
            return srv.port, srv.monitor.port
        http = free_port()
        real = RealServer({**config, "http_port": http}, jetstream=False)
        started.append(real)
        return real.port, http

    yield run
    for srv in started:
        if isinstance(srv, RealServer):
            srv.stop()
        else:
            await srv.stop()


async def _stalled_subscriber(port: int, subject: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A subscriber that never reads after its PONG: a small receive buffer, a reader that
    stops taking bytes after 2 KiB."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=1024)
    await reader.readuntil(b"\r\n")  # INFO
    writer.write(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB ' + subject + b" 1\r\nPING\r\n")
    assert await asyncio.wait_for(reader.readuntil(b"PONG\r\n"), 5) == b"PONG\r\n"
    return reader, writer


async def _rest_of(reader: asyncio.StreamReader) -> tuple[bytes, bool]:
    """What the subscriber can still read, and whether that ends in EOF."""
    data = b""
    while True:
        try:
            chunk = await asyncio.wait_for(reader.read(1 << 20), 5)
        except ConnectionError:
            return data, True
        except TimeoutError:
            return data, False
        if not chunk:
            return data, True
        data += chunk


async def test_stalled_subscriber_is_cut_after_the_deadline(start: Start, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "jsemu.server")
    port, http = await start({"write_deadline": "1s", "max_pending": 64 * 1024 * 1024, "max_payload": PAYLOAD})
    varz = await asyncio.to_thread(_get, http, "/varz")
    assert (varz["write_deadline"], varz["slow_consumers"]) == (1_000_000_000, 0)
    reader, writer = await _stalled_subscriber(port, b"big")
    pub = await RawClient.connect(port, QUIET)
    assert await pub.exchange(b"SUB other 7\r\n") == []
    began = time.monotonic()
    frame = b"PUB big %d\r\n" % PAYLOAD + b"x" * PAYLOAD + b"\r\n"
    for _ in range(FLOOD // 16):
        pub.send(frame * 16)
        await pub.writer.drain()
    cut_after = None
    while time.monotonic() - began < 8:
        varz = await asyncio.to_thread(_get, http, "/varz")
        if varz["slow_consumers"]:
            cut_after = time.monotonic() - began
            break
        await asyncio.sleep(0.05)
    assert cut_after is not None, "the stalled subscriber was never cut"
    assert 0.9 <= cut_after < 5, cut_after  # no earlier than the deadline
    assert varz["slow_consumer_stats"]["clients"] == 1 and varz["connections"] == 1
    # Closed without a word: the frames it was sent, then EOF, never a -ERR.
    data, eof = await _rest_of(reader)
    assert eof and b"-ERR" not in data and len(data) < FLOOD * PAYLOAD
    writer.close()
    closed = (await asyncio.to_thread(_get, http, "/connz?state=closed"))["connections"]
    assert [(c["reason"], c["subscriptions"], c["in_msgs"]) for c in closed] == [(REASON, 1, 0)]
    assert "stop" in closed[0]
    # The publisher was not disturbed.
    frames = await pub.exchange(b"PUB other 2\r\nok\r\n")
    assert [f for f in frames if f != b"PING\r\n"] == [b"MSG other 7 2\r\nok\r\n"]
    await pub.close()
    if caplog.records:  # jsemu (nats-server logs to its own stderr)
        notices = [r.getMessage() for r in caplog.records if "Slow Consumer" in r.getMessage()]
        assert len(notices) == 1 and "Slow Consumer Detected: WriteDeadline of 1s exceeded with" in notices[0]


async def test_max_pending_cut_is_counted_and_listed_too(start: Start) -> None:
    """The other slow-consumer rule: past ``max_pending`` (long before the deadline), cut at
    once, counted in the same /varz figures, listed as ``Slow Consumer (Pending Bytes)``."""
    port, http = await start({"write_deadline": "1m", "max_pending": 2 * 1024 * 1024, "max_payload": PAYLOAD})
    reader, writer = await _stalled_subscriber(port, b"big")
    pub = await RawClient.connect(port, QUIET)
    frame = b"PUB big %d\r\n" % PAYLOAD + b"x" * PAYLOAD + b"\r\n"
    pub.send(frame * 128)  # 8 MiB
    await pub.writer.drain()
    data, eof = await _rest_of(reader)
    assert eof and b"-ERR" not in data
    writer.close()
    varz = await asyncio.to_thread(_get, http, "/varz")
    assert (varz["slow_consumers"], varz["slow_consumer_stats"]["clients"]) == (1, 1)
    closed = (await asyncio.to_thread(_get, http, "/connz?state=closed"))["connections"]
    assert [c["reason"] for c in closed] == ["Slow Consumer (Pending Bytes)"]
    assert [f for f in await pub.exchange() if f != b"PING\r\n"] == []
    await pub.close()


async def test_negative_deadline_cuts_every_client_at_its_first_write(start: Start) -> None:
    """nats-server keeps a negative ``write_deadline``: the deadline has passed before any
    write, so a client gets not even its INFO."""
    port, http = await start({"write_deadline": "-1s"})
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data, eof = await _rest_of(reader)
    assert (data, eof) == (b"", True)
    writer.close()
    varz = await asyncio.to_thread(_get, http, "/varz")
    assert (varz["write_deadline"], varz["slow_consumers"], varz["connections"]) == (-1_000_000_000, 1, 0)


@pytest.mark.parametrize("value", ["500ms", "1h", 2, "0s", 0, "-1s"])
async def test_varz_echoes_the_deadline(start: Start, value: Any) -> None:
    """Nanoseconds; a number is seconds; 0 is the default (10 s)."""
    _, http = await start({"write_deadline": value})
    varz = await asyncio.to_thread(_get, http, "/varz")
    expected = {"500ms": 500_000_000, "1h": 3_600_000_000_000, 2: 2_000_000_000, "-1s": -1_000_000_000}
    assert varz["write_deadline"] == expected.get(value, 10_000_000_000)


@pytest.mark.fake_only
async def test_deadline_follows_the_controlled_clock() -> None:
    """Frozen, the clock never reaches the deadline however long the subscriber stalls; one
    step past it cuts the stalled subscriber at once, and never a subscriber that keeps up
    nor a stored message."""
    async with jsemu.Server(write_deadline=1.0, max_payload=PAYLOAD) as srv:
        srv.control.freeze_clock()
        api = await RawClient.connect(srv.port, QUIET)
        assert await api.exchange(b"SUB _INBOX.a 9\r\n") == []
        created = await _api(api, b"STREAM.CREATE.S", b'{"name":"S","subjects":["big"],"storage":"memory"}')
        assert "error" not in created, created
        reader, writer = await _stalled_subscriber(srv.port, b"big")
        fast = await RawClient.connect(srv.port, QUIET)
        assert await fast.exchange(b"SUB big 2\r\n") == []
        pub = await RawClient.connect(srv.port, QUIET)
        frame = b"PUB big %d\r\n" % PAYLOAD + b"x" * PAYLOAD + b"\r\n"
        count = 128  # 8 MiB
        pub.send(frame * count)
        received = 0
        # The server's first PING (its RTT, on the wall clock) comes about 2 s after each
        # CONNECT: the fast subscriber and the publisher can get one at any point below.
        while received < count:  # the fast subscriber reads everything
            got = await fast.next_frame(5)
            assert got is not None and got.startswith((b"MSG big 2 ", b"PING\r\n")), got
            received += got != b"PING\r\n"
        await asyncio.sleep(1.5)
        assert srv.slow_consumers == 0 and len(srv.connections) == 4
        srv.control.advance_clock(seconds=0.9)
        await asyncio.sleep(0.1)
        assert srv.slow_consumers == 0 and len(srv.connections) == 4
        srv.control.advance_clock(seconds=0.2)
        assert srv.slow_consumers == 1 and len(srv.connections) == 3
        data, eof = await _rest_of(reader)
        assert eof and b"-ERR" not in data
        writer.close()
        # Later steps cost the others nothing.
        srv.control.advance_clock(seconds=30)
        assert [f for f in await fast.exchange(b"PUB big 1\r\nz\r\n") if f != b"PING\r\n"] == [b"MSG big 2 1\r\nz\r\n"]
        assert [f for f in await pub.exchange() if f != b"PING\r\n"] == []
        info = await _api(api, b"STREAM.INFO.S", b"")
        assert info["state"]["messages"] == count + 1
        for client in (fast, pub, api):
            await client.close()


async def _api(client: RawClient, endpoint: bytes, body: bytes) -> Any:
    """One ``$JS.API`` request; its JSON reply (the client listens on ``_INBOX.a``)."""
    frames = await client.exchange(b"PUB $JS.API.%s _INBOX.a %d\r\n%s\r\n" % (endpoint, len(body), body))
    frames = [f for f in frames if f != b"PING\r\n"]
    assert len(frames) == 1, frames
    return json.loads(frames[0].split(b"\r\n", 1)[1])
