"""A raw-socket NATS client for byte-level tests: send bytes, read back whole frames."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jsemu.protocol.frames import FrameReader

__all__ = ["RawClient", "header_block_ok", "normalise"]


def header_block_ok(hdr: bytes) -> bool:
    """Whether an HMSG's header length cuts the frame where its header block ends: the block
    must end with its first blank line. A wrong length field moves bytes between header and
    payload without changing the frame's bytes, so comparing the two joined would miss it."""
    return hdr.endswith(b"\r\n\r\n") and hdr.find(b"\r\n\r\n") == len(hdr) - 4


def normalise(frames: list[bytes]) -> list[bytes]:
    """Replace INFO frames by ``INFO`` so ids, ports and addresses do not matter."""
    return [b"INFO" if f.startswith(b"INFO ") else f for f in frames]


class RawClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.frames = FrameReader()
        self.info: dict[str, Any] = {}
        self.eof = False

    @classmethod
    async def connect(
        cls, port: int, connect: dict[str, Any] | bytes | None = None, host: str = "127.0.0.1"
    ) -> RawClient:
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer)
        first = await client.next_frame(5.0)
        assert first is not None and first.startswith(b"INFO "), first
        client.info = json.loads(first[5:].strip())
        if connect is not None:
            line = connect if isinstance(connect, bytes) else b"CONNECT " + json.dumps(connect).encode() + b"\r\n"
            client.send(line)
        return client

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def _fill(self, timeout: float) -> bool:
        try:
            data = await asyncio.wait_for(self.reader.read(65536), timeout)
        except TimeoutError:
            return False
        except ConnectionError:  # reset by the server: the connection is over
            self.eof = True
            return False
        if not data:
            self.eof = True
            return False
        self.frames.feed(data)
        return True

    def _take_frame(self) -> bytes | None:
        frame = self.frames.next()
        return None if frame is None else frame.raw

    async def next_frame(self, timeout: float = 2.0) -> bytes | None:
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            if self.eof or not await self._fill(timeout):
                return None

    async def exchange(self, data: bytes = b"", timeout: float = 5.0) -> list[bytes]:
        """Send ``data`` then PING; return the frames before the answering PONG.

        If the server closes the connection first, the frames up to the close are
        returned and :attr:`eof` is set.
        """
        self.send(data + b"PING\r\n")
        frames: list[bytes] = []
        while True:
            frame = await self.next_frame(timeout)
            if frame is None:
                assert self.eof, f"no PONG within {timeout}s; got {frames!r}"
                return frames
            if frame == b"PONG\r\n":
                return frames
            frames.append(frame)

    async def round_trip(self, timeout: float = 5.0) -> list[bytes]:
        """PING; the frames that came before the PONG, except server PINGs (answered).

        Ends a request in the differential harnesses: whatever a server sent besides the
        reply (a duplicate, a stray ``-ERR``) is in the list, so it can be compared.
        """
        frames = await self.exchange(timeout=timeout)
        out = []
        for frame in frames:
            if frame == b"PING\r\n":
                self.send(b"PONG\r\n")
            else:
                out.append(frame)
        if self.eof:
            out.append(b"<connection closed>")
        return out

    async def read_until_closed(self, timeout: float = 5.0) -> list[bytes]:
        """All frames until the server closes the connection (fails on timeout)."""
        frames: list[bytes] = []
        while True:
            frame = await self.next_frame(timeout)
            if frame is None:
                assert self.eof, f"connection still open after {timeout}s; got {frames!r}"
                return frames
            frames.append(frame)

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except ConnectionError:
            pass
