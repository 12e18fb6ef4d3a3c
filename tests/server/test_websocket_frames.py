"""Frames after the upgrade side by side with nats-server 2.15.1: the INFO frame, what a
flush sends (one binary frame; a message larger than 64 KiB in one frame with a 64-bit
length), PONG and MSG, a CONNECT split over frames or fragmented, text frames, ping and
pong, the close handshake and its codes, ``Maximum Payload`` (``-ERR`` then close 1009),
compressed frames, the monitoring port's view, and hostile frames (unmasked, bad opcodes,
oversized control frames, a stray continuation) that cost no other client anything."""

from __future__ import annotations

import asyncio
import json
import struct
import urllib.request
from typing import Any

from support.wsclient import CONNECT, Frame, WsClient, frame, info_of

from .ws_pair import Side, ws_pair


def _shape(frames: list[Frame]) -> list[Any]:
    """Frames as compared: an INFO's payload by its keys (ids and ports differ), the rest
    byte for byte (with the frame header: FIN, RSV1, opcode)."""
    out: list[Any] = []
    merged: list[Frame] = []
    for f in frames:
        # nats-server's write loop may flush a PONG before the async INFO that follows it
        # is queued (one frame or two, a race on its side): plain binary frames in a row
        # are compared as one.
        if merged and f.first == merged[-1].first == 0x82:
            merged[-1] = Frame(0x82, merged[-1].payload + f.payload)
        else:
            merged.append(f)
    for f in merged:
        text = f.text()
        if text.startswith(b"INFO ") or b"\r\nINFO " in text:
            before, _, after = text.partition(b"INFO ")
            line, _, rest = after.partition(b"\r\n")
            out.append((f.first, before, "INFO", list(json.loads(line)), rest))
        else:
            out.append((f.first, text))
    return out


async def _session(side: Side, sends: list[bytes], extra: str = "") -> tuple[list[Any], bool]:
    client = await WsClient.connect(side.ws_port, extra)
    try:
        first, _ = await client.frames(quiet=0.3)
        assert len(first) == 1 and first[0].text().startswith(b"INFO "), first
        info = info_of(first[0].text())
        assert (info["host"], info["port"]) == ("0.0.0.0", side.ws_port), info  # the WebSocket port's
        for data in sends:
            client.send(data)
            await asyncio.sleep(0.02)
        frames, closed = await client.frames(quiet=0.5)
        return _shape(frames), closed
    finally:
        client.close()


_C = CONNECT
_EXACT = {
    "connect and ping": [frame(2, _C + b"PING\r\n")],
    "split over frames": [frame(2, _C[:10]), frame(2, _C[10:] + b"PI"), frame(2, b"NG\r\n")],
    "fragmented": [frame(2, _C, fin=False), frame(0, b"PING\r\n")],
    "text frame": [frame(1, _C + b"PING\r\n")],
    "text frames, not UTF-8": [
        frame(1, _C + b"SUB t 1\r\nPUB t 2\r\n\xff\xfe\r\nPUB t 1\r\n\xc3", fin=False),
        frame(0, b"\r\nPING\r\n"),
    ],
    "sub, pub, ping": [frame(2, _C + b"SUB a 1\r\nPUB a 2\r\nhi\r\nPING\r\n")],
    "two reads": [
        frame(2, _C + b"SUB b 1\r\nPING\r\n"),
        frame(2, b"PUB b 2\r\nhi\r\nHPUB b 12 14\r\nNATS/1.0\r\n\r\nho\r\nPING\r\n"),
    ],
    "70 KB message": [frame(2, _C + b"SUB c 1\r\nPUB c 70000\r\n" + b"x" * 70000 + b"\r\nPING\r\n")],
    "ping": [frame(2, _C), frame(9, b"hello")],
    "empty ping": [frame(2, _C), frame(9, b"")],
    "unsolicited pong": [frame(2, _C), frame(10, b"x"), frame(2, b"PING\r\n")],
    "close 1000": [frame(2, _C), frame(8, struct.pack("!H", 1000) + b"bye")],
    "close 4000": [frame(2, _C), frame(8, struct.pack("!H", 4000))],
    "close, no status": [frame(2, _C), frame(8, b"")],
    "close, bad utf-8": [frame(2, _C), frame(8, struct.pack("!H", 1000) + b"\xff\xfe")],
    "max payload": [frame(2, _C + b"PUB d 2000000\r\n")],
    "ping before connect": [frame(2, b"PING\r\n")],
}


async def test_frames_as_nats_server() -> None:
    async with ws_pair() as sides:
        jsemu_side, real_side = sides["jsemu"], sides["real"]
        cases = list(_EXACT.values())
        got = await asyncio.gather(*(_session(side, case) for side in (jsemu_side, real_side) for case in cases))
        for i, name in enumerate(_EXACT):
            assert got[i] == got[len(cases) + i], name


_HOSTILE = {
    "unmasked": [frame(2, _C + b"PING\r\n", mask=False)],
    "unknown opcode": [frame(2, _C), frame(3, b"x")],
    "fragmented control frame": [frame(2, _C), frame(9, b"x", fin=False)],
    "control frame of 126 bytes": [frame(2, _C), frame(9, b"x" * 126)],
    "close code 999": [frame(2, _C), frame(8, struct.pack("!H", 999))],
    "close of one byte": [frame(2, _C), frame(8, b"\x03")],
    "continuation first": [frame(0, _C)],
    "new message inside a fragmented one": [frame(2, _C[:5], fin=False), frame(2, _C[5:])],
    "rsv1 without compression": [frame(2, _C, rsv1=True)],
    "unknown protocol op": [frame(2, _C), frame(2, b"FOO\r\n")],
    "oversized frame header": [struct.pack("!BBQ", 0x82, 0xFF, 1 << 62) + b"\x01\x02\x03\x04" + b"PING"],
}


async def _hostile(side: Side) -> list[tuple[list[Any], bool]]:
    bystander = await WsClient.connect(side.ws_port)
    bystander.send(frame(2, _C + b"SUB b 1\r\nPING\r\n"))
    await bystander.until(b"PONG\r\n")
    got = await asyncio.gather(*(_session(side, case) for case in _HOSTILE.values()))
    bystander.send(frame(2, b"PUB b 2\r\nok\r\nPING\r\n"))
    assert b"MSG b 1 2\r\nok\r\n" in await bystander.until(b"PONG\r\n"), side.kind
    bystander.close()
    return got


async def test_hostile_frames_close_that_client_only() -> None:
    """nats-server closes the connection; whether its close frame (and a ``-ERR``) gets out
    first is a race on its side, so what it sends must be a prefix of jsemu's. Another
    client's round trip is untouched."""
    async with ws_pair() as sides:
        emus, reals = await asyncio.gather(_hostile(sides["jsemu"]), _hostile(sides["real"]))
        for name, emu, real in zip(_HOSTILE, emus, reals, strict=True):
            assert real[1] and emu[1], (name, real, emu)  # both closed
            assert emu[0][: len(real[0])] == real[0], (name, emu, real)
            assert emu[0], name  # jsemu always says why: a close frame, protocol error
            last = emu[0][-1]
            assert last[0] == 0x88 and last[1][:2] in (struct.pack("!H", 1002), struct.pack("!H", 1007)), (name, emu)


async def test_compressed_frames_as_nats_server() -> None:
    """With ``compression`` and a client offering it: the INFO and anything over 64 bytes in
    a compressed frame, less in a plain one; the client's compressed frames are read."""
    import zlib

    def deflate(data: bytes) -> bytes:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return (c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH))[:-4]

    offer = "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; server_no_context_takeover\r\n"
    async with ws_pair("port: -1, no_tls: true, compression: true") as sides:
        got = {}
        for kind, side in sides.items():
            client = await WsClient.connect(side.ws_port, offer)
            first, _ = await client.frames(quiet=0.3)
            client.send(frame(2, deflate(_C + b"SUB a 1\r\nPING\r\n"), rsv1=True))
            pong, _ = await client.frames(quiet=0.3)
            client.send(frame(2, b"PUB a 100\r\n" + b"y" * 100 + b"\r\nPING\r\n"))
            msg, _ = await client.frames(quiet=0.3)
            client.send(frame(2, b"PING\r\n"))
            small, _ = await client.frames(quiet=0.3)
            client.close()
            got[kind] = [first[0].first, list(info_of(first[0].text())), _shape(pong), _shape(msg), _shape(small)]
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == 0xC2  # FIN, RSV1, binary
        assert got["real"][4] == [(0x82, b"PONG\r\n")]  # 64 bytes or less: plain


async def test_monitoring_shows_websocket_clients_as_nats_server() -> None:
    block = 'port: -1, no_tls: true, compression: true, same_origin: true, allowed_origins: ["http://a.example"], handshake_timeout: "3s"'
    async with ws_pair(block, extra="http_port: -1") as sides:
        got = {}
        for kind, side in sides.items():
            client = await WsClient.connect(side.ws_port)
            client.send(frame(2, _C + b"PING\r\n"))
            await client.until(b"PONG\r\n")
            base = side.monitor
            varz = json.loads(await asyncio.to_thread(_get, f"{base}/varz"))
            connz = json.loads(await asyncio.to_thread(_get, f"{base}/connz"))
            client.close()
            ws = varz["websocket"]
            assert ws.pop("port") == side.ws_port
            got[kind] = (ws, [c["type"] for c in connz["connections"]])
        assert got["jsemu"] == got["real"]
        assert got["real"][1] == ["websocket"]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        data: bytes = response.read()
    return data


async def test_browser_frames_at_most_4_kib_as_nats_server() -> None:
    """A client whose User-Agent starts ``Mozilla/`` gets frames of at most 4096 bytes (where
    nats-server cuts depends on its buffers; the sizes and the bytes they carry are compared)."""
    body = bytes(range(256)) * 40  # 10,240 bytes
    async with ws_pair() as sides:
        got = {}
        for kind, side in sides.items():
            client = await WsClient.connect(side.ws_port, "User-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n")
            await client.frames(quiet=0.3)
            client.send(frame(2, _C + b"SUB big 1\r\nPING\r\n"))
            await client.until(b"PONG\r\n")
            client.send(frame(2, b"PUB big %d\r\n%b\r\n" % (len(body), body)))
            frames, _ = await client.frames(quiet=0.5)
            client.close()
            got[kind] = (max(len(f.payload) for f in frames), b"".join(f.payload for f in frames))
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == 4096
