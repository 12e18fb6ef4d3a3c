"""A message routed across a cluster: publisher on node A, subscriber on node B.

Two server processes of one kind form a cluster as client harnesses start them
(``tests/support/cluster.py``); a raw-socket subscriber on B and a raw-socket publisher on A,
the publisher sending pre-built batches of ``PUB`` frames and the subscriber counting
``MSG`` frames with ``bytes.count`` (the client is never the bottleneck). Each kind runs
``ROUNDS`` times on a fresh cluster; the row is the median rate, the next row the spread
((max - min) / median) of the rounds.
"""

from __future__ import annotations

import socket
import statistics
import time
from typing import TYPE_CHECKING

from support.cluster import start_cluster, stop_cluster

from benchmarks.core_pubsub import pump

if TYPE_CHECKING:
    from benchmarks.suite import Row, Sizes

ROUNDS = 3
SIZE = 16
MARKER = b"MSG bench 1 "


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.recv(4096)
    sock.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\n')
    return sock


def _until(sock: socket.socket, marker: bytes, timeout: float = 10.0) -> None:
    sock.settimeout(timeout)
    buf = b""
    while marker not in buf:
        data = sock.recv(65536)
        if not data:
            raise RuntimeError("connection closed")
        buf += data


def one_round(kind: str, messages: int) -> float:
    nodes = start_cluster([kind, kind])
    try:
        sub = _connect(nodes[1].port)
        sub.sendall(b"SUB bench 1\r\nSUB ready 2\r\nPING\r\n")
        _until(sub, b"PONG\r\n")
        pub = _connect(nodes[0].port)
        deadline = time.monotonic() + 10
        sub.settimeout(0.05)
        while True:  # until the subscriber's interest has crossed the route
            pub.sendall(b"PUB ready 0\r\n\r\n")
            try:
                if b"MSG ready" in sub.recv(65536):
                    break
            except TimeoutError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("interest did not cross the route")
        time.sleep(0.1)
        try:
            while sub.recv(65536):  # drain the probes
                pass
        except TimeoutError:
            pass
        sub.settimeout(60)
        batch = (b"PUB bench %d\r\n%b\r\n" % (SIZE, b"x" * SIZE)) * 1000
        return pump(pub, sub, batch, messages, MARKER)
    finally:
        stop_cluster(nodes)


def routed(kind: str, sizes: Sizes, rows: dict[str, Row]) -> None:
    from benchmarks.suite import Row

    messages = max(20_000, sizes.messages // 10 // 1000 * 1000)
    rates = [one_round(kind, messages) for _ in range(ROUNDS)]
    median = statistics.median(rates)
    name = f"pub on A -> sub on B, {messages:,} x {SIZE} B, median of {ROUNDS}"
    rows.setdefault("routes/rate", Row("routes", name, "msg/s", True)).values[kind] = median
    spread = (max(rates) - min(rates)) / median * 100
    spread_row = Row("routes", "  spread of its rounds ((max-min)/median)", "%", False, compared=False)
    rows.setdefault("routes/spread", spread_row).values[kind] = spread
