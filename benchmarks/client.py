"""The benchmarks' raw-socket NATS client: blocking, minimal, never the bottleneck."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from jsemu.protocol.frames import Frame, FrameReader


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class Conn:
    """A minimal blocking NATS client: enough for requests and pipelined publishes."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.reader = FrameReader()
        self._next()  # INFO
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB _INBOX.b.* 1\r\nPING\r\n')
        self.wait_pong()
        self.n = 0

    def _next(self) -> Frame:
        return self.reader.next_from(self.sock.recv)

    def wait_pong(self) -> None:
        while self._next().op != b"PONG":
            pass

    def request(self, subject: str, payload: bytes = b"") -> dict:  # type: ignore[type-arg]
        self.n += 1
        self.sock.sendall(b"PUB %s _INBOX.b.%d %d\r\n%s\r\n" % (subject.encode(), self.n, len(payload), payload))
        while True:
            frame = self._next()
            if frame.op == b"MSG":
                return json.loads(frame.payload)  # type: ignore[no-any-return]
            if frame.op == b"PING":
                self.sock.sendall(b"PONG\r\n")

    def count_acks(self, expected: int) -> None:
        """Counts ack frames with ``bytes.count`` on purpose, not through the frame reader:
        parsing 100,000 acks would make the client the bottleneck of the measurement."""
        seen = 0
        tail = b""
        marker = b"MSG _INBOX.b."
        while seen < expected:
            data = self.sock.recv(1 << 20)
            chunk = tail + data
            seen += chunk.count(marker)
            tail = chunk[-(len(marker) - 1) :]


def build_frames(messages: int, subjects: int, size: int, reply: bool) -> list[bytes]:
    payload = b"x" * size
    chunks = []
    step = 10_000
    for start in range(0, messages, step):
        if reply:
            frames = [
                b"PUB bench.%d _INBOX.b.a %d\r\n%s\r\n" % (i % subjects, size, payload)
                for i in range(start, min(start + step, messages))
            ]
        else:
            frames = [
                b"PUB bench.%d %d\r\n%s\r\n" % (i % subjects, size, payload)
                for i in range(start, min(start + step, messages))
            ]
        chunks.append(b"".join(frames))
    return chunks
