"""The listening socket's accept queue is as long as nats-server's (Go's ``net.Listen`` uses the
kernel's ``somaxconn``), not asyncio's default of 100: with 100, clients that connect while the
server is busy beyond the 100th get their SYN dropped and wait a 1 s retransmit (500 fresh
connections took 1.1 s instead of 0.12 s in ``python -m benchmarks --only connections``)."""

from __future__ import annotations

import socket

import jsemu
from jsemu.server.server import listen_backlog

CONNECTS = 300  # well past asyncio's default backlog of 100


def test_backlog_is_the_kernels_somaxconn() -> None:
    with open("/proc/sys/net/core/somaxconn") as f:
        assert listen_backlog() == min(int(f.read()), 65535)


async def test_connects_queue_while_the_server_is_busy() -> None:
    srv = await jsemu.Server(port=0).start()
    socks: list[socket.socket] = []
    try:
        # The event loop is blocked for this whole loop (these calls are synchronous): the server
        # accepts nothing, so every connect must be completed by the kernel's accept queue alone.
        for _ in range(CONNECTS):
            socks.append(socket.create_connection(("127.0.0.1", srv.port), timeout=0.5))
    finally:
        for s in socks:
            s.close()
        await srv.stop()
    assert len(socks) == CONNECTS
