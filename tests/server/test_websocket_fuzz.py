"""Hostile input on the WebSocket port, seeded and random: mutated upgrade requests, garbage,
handshakes cut short, then after an upgrade random frames (any opcode, mask bit, FIN, RSV
bits, declared length, payload: mutated NATS protocol or random bytes). Whatever each
socket gets, jsemu logs no internal error (the suite's autouse check), answers each within
the handshake timeout or closes it, and a WebSocket client and a TCP client that were there
all along still round-trip."""

from __future__ import annotations

import asyncio
import random
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from support.wsclient import CONNECT, WsClient, frame, upgrade_request

_SEED = 33
_INPUTS = 240

_NATS = [
    CONNECT,
    b"PING\r\n",
    b"SUB a 1\r\n",
    b"PUB a 2\r\nhi\r\n",
    b"HPUB a 12 14\r\nNATS/1.0\r\n\r\nho\r\n",
    b"PUB $JS.API.INFO _R 0\r\n\r\n",
    b"UNSUB 1\r\n",
    b"PUB a 99999999\r\n",
]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20)))
    b = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(b))
        op = rng.randrange(4)
        if op == 0:
            b[i] = rng.randrange(256)
        elif op == 1:
            b.insert(i, rng.randrange(256))
        elif op == 2:
            del b[i : i + rng.randrange(1, 8)]
        else:
            b[i:i] = b[i : i + rng.randrange(1, 16)]
        if not b:
            break
    return bytes(b)


def _random_frame(rng: random.Random) -> bytes:
    payload = rng.choice(_NATS) if rng.random() < 0.7 else bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
    if rng.random() < 0.4:
        payload = _mutate(rng, payload)
    opcode = rng.choice([0, 1, 2, 2, 2, 8, 9, 10, rng.randrange(16)])
    data = frame(opcode, payload, fin=rng.random() < 0.85, mask=rng.random() < 0.9, rsv1=rng.random() < 0.05)
    if rng.random() < 0.1:  # a length that lies
        n = rng.choice([126, 127, 65535, 1 << 40])
        data = bytes((data[0], 0x80 | 127)) + struct.pack("!Q", n) + data[2:]
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data))]
    return data


def _input(rng: random.Random) -> tuple[bytes, list[bytes]]:
    """(what to send before any answer, frames to send after a 101)."""
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))), []
    if kind == 1:
        return _mutate(rng, upgrade_request()), []
    if kind == 2:
        return upgrade_request()[: rng.randrange(len(upgrade_request()))], []
    return upgrade_request(), [_random_frame(rng) for _ in range(rng.randrange(1, 6))]


async def _hostile(port: int, head: bytes, frames: list[bytes]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head)
        if frames:
            try:
                await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 3)
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                return
            for data in frames:
                writer.write(data)
        try:
            while await asyncio.wait_for(reader.read(65536), 0.5):
                pass
        except (TimeoutError, ConnectionError):
            pass
    finally:
        writer.close()


async def test_random_hostile_input_costs_no_other_client_anything(
    jsemu_factory: Callable[..., Awaitable[Any]],
) -> None:
    server = await jsemu_factory(websocket=True)
    server.websocket.options.handshake_timeout = 0.4
    port = int(server.ws_url.rsplit(":", 1)[1])
    ws = await WsClient.connect(port)
    ws.send(frame(2, CONNECT + b"SUB w 1\r\nPING\r\n"))
    await ws.until(b"PONG\r\n")
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    await reader.readuntil(b"\r\n")
    writer.write(CONNECT + b"SUB t 1\r\nPING\r\n")
    await reader.readuntil(b"PONG\r\n")
    rng = random.Random(_SEED)
    inputs = [_input(rng) for _ in range(_INPUTS)]
    for start in range(0, len(inputs), 80):
        await asyncio.gather(*(_hostile(port, head, frames) for head, frames in inputs[start : start + 80]))
        ws.send(frame(2, b"PUB w 2\r\nok\r\nPUB t 2\r\nok\r\nPING\r\n"))
        assert b"MSG w 1 2\r\nok\r\n" in await ws.until(b"PONG\r\n")
        assert b"MSG t 1 2\r\nok\r\n" in await asyncio.wait_for(reader.readuntil(b"MSG t 1 2\r\nok\r\n"), 5)
    ws.close()
    writer.close()
    assert len(server.connections) == 2
