"""Stream ingest rate and memory per stored message, jsemu vs the real nats-server.

Both servers run as their own processes (``jsemu serve -js`` and ``nats-server -js``). A
memory stream captures ``bench.>``; a raw-socket client pipelines N ``PUB`` frames of a
small payload spread over K subjects (no reply subject, so no acks), then polls
``$JS.API.STREAM.INFO`` until all N are stored. Reported: the ingest rate (first PUB
written to N stored) and the server's RSS growth divided by N (from ``/proc/<pid>/status``).
A second, smaller run measures acknowledged publishes (each PUB with a reply subject,
pipelined, waiting for every PubAck).

    python -m benchmarks.stream_ingest [--messages 1000000] [--subjects 100000] [--size 7]
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from conftest import RealServer


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


def measure(kind: str, messages: int, subjects: int, size: int, acked: int) -> dict[str, float]:
    server = RealServer(jsemu_process=(kind == "jsemu"))
    try:
        conn = Conn(server.port)
        cfg = {"name": "BENCH", "subjects": ["bench.>"], "storage": "memory"}
        conn.request("$JS.API.STREAM.CREATE.BENCH", json.dumps(cfg).encode())
        chunks = build_frames(messages, subjects, size, reply=False)
        rss0 = rss_bytes(server.proc.pid)
        start = time.perf_counter()
        for chunk in chunks:
            conn.sock.sendall(chunk)
        while True:
            info = conn.request("$JS.API.STREAM.INFO.BENCH")
            if info["state"]["messages"] >= messages:
                break
            time.sleep(0.005)
        elapsed = time.perf_counter() - start
        rss1 = rss_bytes(server.proc.pid)
        result = {"rate": messages / elapsed, "bytes_per_msg": (rss1 - rss0) / messages, "seconds": elapsed}

        conn.request("$JS.API.STREAM.PURGE.BENCH")
        ack_chunks = build_frames(acked, subjects, size, reply=True)
        start = time.perf_counter()
        for chunk in ack_chunks:
            conn.sock.sendall(chunk)
        conn.count_acks(acked)
        result["acked_rate"] = acked / (time.perf_counter() - start)
        return result
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--subjects", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=7)
    parser.add_argument("--acked", type=int, default=100_000, help="publishes with a reply subject (acked run)")
    args = parser.parse_args()
    rows = {kind: measure(kind, args.messages, args.subjects, args.size, args.acked) for kind in ("real", "jsemu")}
    print(f"{args.messages:,} x {args.size}-byte messages on {args.subjects:,} subjects (memory stream)")
    print(f"{'server':<12}{'ingest msg/s':>16}{'RSS bytes/msg':>16}{'acked msg/s':>16}")
    for kind, row in rows.items():
        name = "nats-server" if kind == "real" else "jsemu"
        print(f"{name:<12}{row['rate']:>16,.0f}{row['bytes_per_msg']:>16,.0f}{row['acked_rate']:>16,.0f}")
    ratio = rows["jsemu"]["rate"] / rows["real"]["rate"]
    mem = rows["jsemu"]["bytes_per_msg"] / rows["real"]["bytes_per_msg"]
    print(f"jsemu / nats-server: ingest {ratio:.2f}x, memory {mem:.2f}x")


if __name__ == "__main__":
    main()
