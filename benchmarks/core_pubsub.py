"""Core publish -> deliver throughput, jsemu vs the real nats-server, on loopback.

One raw-socket subscriber and one raw-socket publisher; the publisher sends pre-built batches
of PUB frames and the subscriber counts delivered frames with ``bytes.count``, so the client
side is never the bottleneck. Both servers run as separate processes (``jsemu serve`` and
``nats-server``) so neither shares the client's CPU time.

    python -m benchmarks.core_pubsub [--messages 200000] [--size 16]
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.servers import RealServer


def pump(pub: socket.socket, sub: socket.socket, batch: bytes, messages: int, marker: bytes) -> float:
    """Messages per second: ``batch`` (1,000 PUB frames) sent ``messages / 1000`` times on
    ``pub`` while a thread counts ``marker`` in what ``sub`` receives; both sockets are closed."""
    got = 0
    done = threading.Event()

    def reader() -> None:
        nonlocal got
        tail = b""
        while got < messages:
            data = sub.recv(1 << 20)
            if not data:
                break
            chunk = tail + data
            got += chunk.count(marker)
            tail = chunk[-(len(marker) - 1) :]
        done.set()

    t = threading.Thread(target=reader, daemon=True)
    start = time.perf_counter()
    t.start()
    for _ in range(messages // 1000):
        pub.sendall(batch)
    done.wait(120)
    elapsed = time.perf_counter() - start
    pub.close()
    sub.close()
    if got < messages:
        raise RuntimeError(f"only {got} of {messages} delivered")
    return messages / elapsed


def run(port: int, messages: int, size: int) -> float:
    sub = socket.create_connection(("127.0.0.1", port))
    sub.recv(4096)
    sub.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB bench 1\r\nPING\r\n')
    buf = b""
    while b"PONG\r\n" not in buf:
        buf += sub.recv(4096)
    pub = socket.create_connection(("127.0.0.1", port))
    pub.recv(4096)
    pub.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\n')
    frame = b"PUB bench %d\r\n%b\r\n" % (size, b"x" * size)
    batch = frame * 1000
    marker = b"MSG bench 1 "
    return pump(pub, sub, batch, messages, marker)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=16)
    args = parser.parse_args()
    rows = []
    for name, jsemu_process in (("nats-server 2.15.1", False), ("jsemu", True)):
        srv = RealServer(jetstream=False, jsemu_process=jsemu_process)
        try:
            rate = run(srv.port, args.messages, args.size)
        finally:
            srv.stop()
        rows.append((name, rate))
    print(f"core pub->sub, {args.messages} msgs of {args.size} B, one publisher, one subscriber")
    print(f"{'server':<20} {'msgs/s':>12}")
    for name, rate in rows:
        print(f"{name:<20} {rate:>12,.0f}")
    print(f"{'jsemu / real':<20} {rows[1][1] / rows[0][1]:>12.2f}")


if __name__ == "__main__":
    main()
