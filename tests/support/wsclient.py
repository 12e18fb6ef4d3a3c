"""A raw WebSocket client for the tests: the upgrade request as bytes, frames built by hand
(masked or not, fragmented, any opcode), and the server's frames read back as they came.

Kept raw so a test can send what no well-behaved client would and compare the server's
bytes exactly; ``wsproto`` decodes what needs decoding (a compressed frame).
"""

from __future__ import annotations

import asyncio
import json
import ssl as ssl_
import struct
import zlib
from dataclasses import dataclass
from typing import Any

KEY = "dGhlIHNhbXBsZSBub25jZQ=="
CONNECT = b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"protocol":1}\r\n'


def upgrade_request(host: str = "127.0.0.1", extra: str = "", method: str = "GET", path: str = "/") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    ).encode()


def frame(
    opcode: int,
    payload: bytes,
    fin: bool = True,
    mask: bool = True,
    rsv1: bool = False,
    rsv: int = 0,
    key: bytes = b"\x01\x02\x03\x04",
) -> bytes:
    """A client frame (masked unless told; ``rsv``: raw RSV bits; the all-zero ``key`` masks
    without XOR work, for big payloads)."""
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | rsv | opcode
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head = bytes((first, bit | n))
    elif n < 65536:
        head = struct.pack("!BBH", first, bit | 126, n)
    else:
        head = struct.pack("!BBQ", first, bit | 127, n)
    if not mask:
        return head + payload
    if key == b"\0\0\0\0":
        return head + key + payload
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


@dataclass
class Frame:
    first: int  # FIN, RSV1 and opcode
    payload: bytes

    @property
    def opcode(self) -> int:
        return self.first & 0x0F

    def text(self) -> bytes:
        """The payload, inflated when the frame is compressed."""
        if self.first & 0x40:
            return zlib.decompressobj(-15).decompress(self.payload + b"\x00\x00\xff\xff")
        return self.payload


def split_frames(data: bytes) -> tuple[list[Frame], bytes]:
    """The whole (unmasked) server frames at the start of ``data`` and what is left."""
    frames = []
    while len(data) >= 2:
        n = data[1] & 0x7F
        off = 2
        if n == 126:
            if len(data) < 4:
                break
            n, off = struct.unpack("!H", data[2:4])[0], 4
        elif n == 127:
            if len(data) < 10:
                break
            n, off = struct.unpack("!Q", data[2:10])[0], 10
        if len(data) < off + n:
            break
        frames.append(Frame(data[0], data[off : off + n]))
        data = data[off + n :]
    return frames, data


async def read_until_quiet(reader: asyncio.StreamReader, quiet: float = 0.4, limit: float = 5.0) -> tuple[bytes, bool]:
    """Bytes until the close (True) or until ``quiet`` seconds pass without any (False)."""
    out = b""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while loop.time() < deadline:
        try:
            data = await asyncio.wait_for(reader.read(1 << 20), quiet)
        except TimeoutError:
            return out, False
        except ConnectionError:
            return out, True
        if not data:
            return out, True
        out += data
    return out, False


class WsClient:
    """One upgraded connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
        self.reader, self.writer, self.head = reader, writer, head
        self.buffer = b""

    @classmethod
    async def connect(
        cls, port: int, extra: str = "", host: str = "127.0.0.1", ssl: ssl_.SSLContext | None = None
    ) -> WsClient:
        """Upgraded (``ssl``: over TLS, for a ``wss://`` port)."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ssl)
        writer.write(upgrade_request(host, extra))
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101 "), head
        return cls(reader, writer, head)

    def send(self, *frames: bytes) -> None:
        self.writer.write(b"".join(frames))

    async def frames(self, quiet: float = 0.4) -> tuple[list[Frame], bool]:
        data, closed = await read_until_quiet(self.reader, quiet)
        found, self.buffer = split_frames(self.buffer + data)
        return found, closed

    async def until(self, needle: bytes, timeout: float = 5.0) -> bytes:
        """Frame payloads (inflated) until they hold ``needle``."""
        text = b""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while needle not in text:
            data = await asyncio.wait_for(self.reader.read(1 << 20), max(0.01, deadline - loop.time()))
            if not data:
                raise ConnectionError(f"closed before {needle!r}: {text!r}")
            found, self.buffer = split_frames(self.buffer + data)
            text += b"".join(f.text() for f in found)
        return text

    def close(self) -> None:
        self.writer.close()


def info_of(payload: bytes) -> dict[str, Any]:
    line = payload.split(b"\r\n", 1)[0]
    assert line.startswith(b"INFO "), payload
    info: dict[str, Any] = json.loads(line[5:])
    return info
