"""The ``consumers`` section: a pull consumer fetching batches of 100, with explicit acks
(every message acked before the next fetch) and with ``ack_policy: none``; and a push
consumer delivering to one subscriber (explicit: each read's messages acked at once)."""

from __future__ import annotations

import json
import re
import socket
import time
from typing import TYPE_CHECKING

from benchmarks.client import Conn, build_frames

if TYPE_CHECKING:
    from benchmarks.suite import Row, Sizes

BATCH = 100
_ACK = re.compile(rb" (\$JS\.ACK\.[^ \r]+) ")


def _fetch(conn: Conn, consumer: str, batches: int, ack: bool, deadline: float) -> int:
    """``batches`` pull requests of BATCH, each read in full (and acked) before the next."""
    request = b"PUB $JS.API.CONSUMER.MSG.NEXT.BENCH.%b _INBOX.b.a 3\r\n100\r\n" % consumer.encode()
    got = 0
    sock = conn.sock
    acks = b""
    for _ in range(batches):
        # The acks of the previous batch go in the same write as the next request (two small
        # writes would meet Nagle's algorithm and the peer's delayed ACK: 40 ms a batch).
        sock.sendall(acks + request)
        buf = b""
        seen = 0
        while seen < BATCH:
            data = sock.recv(1 << 20)
            if not data:
                raise ConnectionError("server closed the connection")
            buf += data
            seen = buf.count(b" $JS.ACK.")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{seen} of {BATCH} messages")
        got += seen
        if ack:
            acks = b"".join(b"PUB %b 0\r\n\r\n" % m for m in _ACK.findall(buf))
    return got


def _push(conn: Conn, consumer: str, total: int, ack: bool, deadline: float) -> int:
    """Create a push consumer on a subscribed deliver subject; read until ``total`` came."""
    sock = conn.sock
    deliver = f"_bench.push.{consumer}"
    sub = b"SUB %b 9%d\r\n" % (deliver.encode(), ack)  # a sid per consumer
    cfg = {"durable_name": consumer, "ack_policy": "explicit" if ack else "none", "deliver_subject": deliver}
    payload = json.dumps({"stream_name": "BENCH", "config": cfg}).encode()
    subject = f"$JS.API.CONSUMER.CREATE.BENCH.{consumer}".encode()
    # The subscription and the create in one write: as two small writes the second waits
    # for the peer's delayed ACK of the first (Nagle's algorithm), about 40 ms with either
    # server, most of a 10,000-message row.
    sock.sendall(sub + b"PUB %b _INBOX.b.c %d\r\n%b\r\n" % (subject, len(payload), payload))
    got = 0
    tail = b""
    while got < total:
        data = sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        buf = tail + data
        # keep a partial line for the next read, so no ack subject is cut in two
        cut = buf.rfind(b"\n") + 1
        buf, tail = buf[:cut], buf[cut:]
        acks = _ACK.findall(buf)
        got += len(acks)
        if ack and acks:
            sock.sendall(b"".join(b"PUB %b 0\r\n\r\n" % m for m in acks))
        if time.monotonic() > deadline:
            raise TimeoutError(f"{got} of {total} messages")
    return got


def consumers(kind: str, sizes: Sizes, rows: dict[str, Row], start: object, fill: object, create: object) -> None:
    from benchmarks.suite import TIMEOUT, Row

    server = start(kind)  # type: ignore[operator]
    try:
        conn = Conn(server.port)
        # No Nagle on the client, as in Go's and asyncio's clients: a write that follows one
        # the server does not answer (acks, a SUB) would otherwise wait for its delayed ACK,
        # about 40 ms, with either server but not always the same (measured: the push ack
        # none row's first message 2.5 to 46 ms after its create).
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        create(conn, "BENCH", ["bench.>"])  # type: ignore[operator]
        total = sizes.messages // 10
        fill(conn, "BENCH", iter(build_frames(total, 1000, 7, reply=False)), total)  # type: ignore[operator]
        batches = total // BATCH
        for name, policy in (("explicit", "explicit"), ("none", "none")):
            cfg = {"durable_name": name, "ack_policy": policy}
            reply = conn.request(
                f"$JS.API.CONSUMER.CREATE.BENCH.{name}", json.dumps({"stream_name": "BENCH", "config": cfg}).encode()
            )
            if "error" in reply:
                raise RuntimeError(reply)
            t0 = time.perf_counter()
            got = _fetch(conn, name, batches, policy == "explicit", time.monotonic() + TIMEOUT)
            elapsed = time.perf_counter() - t0
            label = f"pull fetch {BATCH} per request, ack {policy} ({total:,} messages)"
            rows.setdefault(f"consumers/{name}", Row("consumers", label, "msg/s", True)).values[kind] = got / elapsed
        for name, ack in (("push_explicit", True), ("push_none", False)):
            t0 = time.perf_counter()
            got = _push(conn, name, total, ack, time.monotonic() + TIMEOUT)
            elapsed = time.perf_counter() - t0
            label = f"push to one subscriber, ack {'explicit' if ack else 'none'} ({total:,} messages)"
            rows.setdefault(f"consumers/{name}", Row("consumers", label, "msg/s", True)).values[kind] = got / elapsed
    finally:
        server.stop()
