"""The benchmarks' raw-socket NATS client: blocking, minimal, never the bottleneck."""

from __future__ import annotations

import json
import socket
from pathlib import Path


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class Conn:
    """A minimal blocking NATS client: enough for requests and pipelined publishes."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""
        self._read_until(b"\r\n")
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB _INBOX.b.* 1\r\nPING\r\n')
        self._read_until(b"PONG\r\n")
        self.n = 0

    def _read_until(self, marker: bytes) -> bytes:
        while marker not in self.buf:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed")
            self.buf += data
        head, _, self.buf = self.buf.partition(marker)
        return head

    def request(self, subject: str, payload: bytes = b"") -> dict:  # type: ignore[type-arg]
        self.n += 1
        self.sock.sendall(b"PUB %s _INBOX.b.%d %d\r\n%s\r\n" % (subject.encode(), self.n, len(payload), payload))
        while True:
            line = self._read_until(b"\r\n")
            if line.startswith(b"MSG "):
                size = int(line.split()[-1])
                while len(self.buf) < size + 2:
                    self.buf += self.sock.recv(1 << 20)
                body, self.buf = self.buf[:size], self.buf[size + 2 :]
                return json.loads(body)  # type: ignore[no-any-return]
            if line.startswith(b"PING"):
                self.sock.sendall(b"PONG\r\n")

    def count_acks(self, expected: int) -> None:
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
