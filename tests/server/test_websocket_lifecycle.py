"""A WebSocket client's end, side by side with nats-server 2.15.1 (both as processes, the same
file): lame duck mode (an INFO with ``ldm`` and the WebSocket port's host and port, the port
refusing new sockets, then close 1001 ``Server Shutdown`` after the grace period) and a slow
consumer (a subscriber that stops reading is cut: ``/varz`` ``slow_consumers``, ``/connz``
``state=closed`` with its ``type`` and reason)."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time
import urllib.request
from typing import Any

import pytest
from support.servers import RealServer
from support.wsclient import CONNECT, WsClient, frame, info_of, upgrade_request

_LDM = "lame_duck_duration: 30s\nlame_duck_grace_period: 1s"


async def _lame_duck(process: bool) -> list[Any]:
    server = RealServer(jetstream=False, jsemu_process=process, websocket=True, conf_text=_LDM)
    try:
        port = int(server.ws_url.rsplit(":", 1)[1])
        client = await WsClient.connect(port)
        await client.frames(quiet=0.2)
        client.send(frame(2, CONNECT + b"PING\r\n"))
        await client.until(b"PONG\r\n")
        await client.frames(quiet=0.3)  # the INFO after the first PONG
        start = time.monotonic()
        server.proc.send_signal(signal.SIGUSR2)
        await asyncio.sleep(0.3)
        try:
            await asyncio.open_connection("127.0.0.1", port)
            refused = False
        except OSError:
            refused = True
        frames, closed = await client.frames(quiet=4)
        took = time.monotonic() - start
        out: list[Any] = []
        for f in frames:
            if f.payload.startswith(b"INFO "):
                info = info_of(f.payload)
                out.append(("INFO", info.get("ldm"), info["host"], info["port"] == port))
            else:
                out.append((f.first, f.payload))
        client.close()
        return [refused, out, closed, 0.8 < took < 3.5]
    finally:
        server.stop()


async def test_lame_duck_as_nats_server() -> None:
    got = await asyncio.gather(_lame_duck(True), _lame_duck(False))
    assert got[0] == got[1]
    assert got[1] == [True, [("INFO", True, "0.0.0.0", True), (0x88, b"\x03\xe9Server Shutdown")], True, True]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


async def _slow(process: bool) -> list[Any]:
    conf = "max_pending: 65536\nmax_payload: 65536\nhttp_port: -1\nwrite_deadline: 60s"
    server = RealServer(jetstream=False, jsemu_process=process, websocket=True, conf_text=conf)
    try:
        port = int(server.ws_url.rsplit(":", 1)[1])
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # so the server's side fills
        sock.connect(("127.0.0.1", port))
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock)
        writer.write(upgrade_request())
        await reader.readuntil(b"\r\n\r\n")
        slow = WsClient(reader, writer, b"")
        await slow.frames(quiet=0.2)
        slow.send(frame(2, CONNECT + b"SUB big 1\r\nPING\r\n"))
        await slow.until(b"PONG\r\n")
        writer.transport.pause_reading()  # type: ignore[attr-defined]
        r, w = await asyncio.open_connection("127.0.0.1", server.port)
        await r.readuntil(b"\r\n")
        w.write(CONNECT)
        for _ in range(600):
            w.write(b"PUB big 10000\r\n" + b"x" * 10_000 + b"\r\n")
            await w.drain()
        w.write(b"PING\r\n")
        await r.readuntil(b"PONG\r\n")
        w.close()
        closed: list[Any] = []
        for _ in range(100):
            closed = _get(f"{server.monitor_url}/connz?state=closed")["connections"] or []
            if closed:
                break
            await asyncio.sleep(0.05)
        varz = _get(f"{server.monitor_url}/varz")
        writer.close()
        return [varz["slow_consumers"], [(c["type"], c["reason"]) for c in closed]]
    finally:
        server.stop()


@pytest.mark.filterwarnings("ignore::ResourceWarning")
async def test_slow_consumer_as_nats_server() -> None:
    got = await asyncio.gather(_slow(True), _slow(False))
    assert got[0] == got[1]
    assert got[1] == [1, [("websocket", "Slow Consumer (Pending Bytes)")]]


async def _close_after_publishing(process: bool) -> tuple[int, int, int, list[bytes], bool]:
    server = RealServer(jetstream=True, jsemu_process=process, websocket=True)
    try:
        client = await WsClient.connect(int(server.ws_url.rsplit(":", 1)[1]))
        await client.frames(quiet=0.2)
        create = b'{"name":"S","subjects":["s.>"]}'
        client.send(
            frame(
                2,
                CONNECT
                + b"SUB _in.* 1\r\nPUB $JS.API.STREAM.CREATE.S _in.c %d\r\n%b\r\nPING\r\n" % (len(create), create),
            )
        )
        await client.until(b"PONG\r\n")
        pubs = b"".join(b"PUB s.%d _in.%d 1\r\na\r\nPUB x 1\r\nb\r\n" % (i, i) for i in range(200))
        client.send(frame(2, b"SUB x 2\r\n" + pubs), frame(8, b"\x03\xe8"))  # then close 1000 at once
        frames, closed = await client.frames(quiet=1.0)
        text = b"".join(f.payload for f in frames if f.opcode == 2)
        await asyncio.sleep(0.5)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        await reader.readuntil(b"\r\n")
        writer.write(CONNECT + b"SUB r 1\r\nPUB $JS.API.STREAM.INFO.S r 0\r\n\r\n")
        await reader.readuntil(b"MSG r 1 ")
        info = json.loads((await reader.readuntil(b"}\r\n")).split(b"\r\n", 1)[1])
        writer.close()
        acked = text.count(b"MSG _in.")
        return (
            text.count(b"MSG x 2 "),
            acked,
            info["state"]["messages"],
            [f.payload for f in frames if f.opcode == 8],
            closed,
        )
    finally:
        server.stop()


async def test_a_client_close_loses_nothing_acknowledged_as_nats_server() -> None:
    """Publishes, then the client's close frame in the same write: every message it had
    subscribed to before is delivered before the close's echo, and whatever was acknowledged
    is stored (nats-server's acks may not get out before the close: JetStream stores
    asynchronously there)."""
    got = await asyncio.gather(_close_after_publishing(True), _close_after_publishing(False))
    for delivered, acked, stored, close, closed in got:
        assert (delivered, close, closed) == (200, [b"\x03\xe8"], True)
        assert stored >= acked
