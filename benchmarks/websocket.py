"""Publish and Direct Get over a WebSocket connection, jsemu vs nats-server.

Each kind starts with ``websocket { port: -1, no_tls: true }``; a raw blocking client
upgrades, then sends windows of pipelined requests, each window one binary frame masked with
the all-zero key (masked as the protocol requires, so the client does no XOR work), and counts
the replies with ``bytes.count`` on the raw stream (server frames break only between protocol
ops, so a marker is never split by a frame header). Rows: acked publish into a memory stream,
and Direct Get by ``last_by_subj``.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from support.servers import RealServer

from benchmarks.client import Conn

if TYPE_CHECKING:
    from benchmarks.suite import Row, Sizes

_INBOX = b"_INBOX.ws.a"
_MARKER = b"MSG _INBOX.ws.a "
_PER_WINDOW = 1000
_SUBJECTS = 1000
_UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def _frame(payload: bytes) -> bytes:
    n = len(payload)
    if n < 126:
        head = bytes((0x82, 0x80 | n))
    elif n < 65536:
        head = struct.pack("!BBH", 0x82, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x82, 0x80 | 127, n)
    return head + b"\x00\x00\x00\x00" + payload


def _ws_connect(url: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])))
    sock.sendall(_UPGRADE)
    sock.settimeout(10)
    buf = b""
    while b"INFO " not in buf:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed during the upgrade")
        buf += data
    sock.sendall(_frame(b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB _INBOX.ws.* 1\r\nPING\r\n'))
    while b"PONG\r\n" not in buf:
        buf += sock.recv(65536)
    return sock


def _run(sock: socket.socket, build: Callable[[int], bytes], count: int, timeout: float = 120.0) -> float:
    """Windows of requests, each answered before the next; requests per second."""
    windows = [
        _frame(b"".join(build(i) for i in range(s, min(s + _PER_WINDOW, count)))) for s in range(0, count, _PER_WINDOW)
    ]
    deadline = time.monotonic() + timeout
    sock.settimeout(timeout)
    start = time.perf_counter()
    for w, window in enumerate(windows):
        sock.sendall(window)
        expected = min(_PER_WINDOW, count - w * _PER_WINDOW)
        seen, tail = 0, b""
        while seen < expected:
            data = sock.recv(1 << 20)
            if not data:
                raise ConnectionError("server closed the connection")
            chunk = tail + data
            seen += chunk.count(_MARKER)
            tail = chunk[-(len(_MARKER) - 1) :]
            if time.monotonic() > deadline:
                raise TimeoutError(f"{seen} of {expected} replies")
    return count / (time.perf_counter() - start)


def _direct_get(i: int) -> bytes:
    body = b'{"last_by_subj":"ws.%d"}' % (i % _SUBJECTS)
    return b"PUB $JS.API.DIRECT.GET.WS %b %d\r\n%b\r\n" % (_INBOX, len(body), body)


def websocket(kind: str, sizes: Sizes, rows: dict[str, Row], row_type: type[Row]) -> None:
    server = RealServer(jsemu_process=(kind == "jsemu"), websocket=True)
    try:
        conn = Conn(server.port)
        cfg = {"name": "WS", "subjects": ["ws.>"], "storage": "memory", "allow_direct": True}
        reply = conn.request("$JS.API.STREAM.CREATE.WS", json.dumps(cfg).encode())
        if "error" in reply:
            raise RuntimeError(reply)
        sock = _ws_connect(server.ws_url)
        count = sizes.requests // 2
        rate = _run(sock, lambda i: b"PUB ws.%d %b 5\r\nvalue\r\n" % (i % _SUBJECTS, _INBOX), count)
        rows.setdefault("websocket/publish", row_type("websocket", "acked publish over ws://", "msg/s", True)).values[
            kind
        ] = rate
        rate = _run(sock, _direct_get, sizes.requests)
        rows.setdefault(
            "websocket/directget", row_type("websocket", "Direct Get last_by_subj over ws://", "req/s", True)
        ).values[kind] = rate
        sock.close()
    finally:
        server.stop()
