"""Many fresh connections, each doing a little work: the cost of connection set-up and of a
new connection's first requests (INFO, CONNECT, the first SUB, per-connection state).

Each of ``CONNECTIONS`` clients connects, sends in one write CONNECT, a SUB on its own inbox,
20 Direct Gets by sequence and 5 acknowledged publishes, then PING, and is done when its 25
replies and the PONG are in (in any order). All run at once (one selector); the row is the wall time from
the first connect to the last PONG, and the errors (``-ERR``, missing replies) must be 0.
"""

from __future__ import annotations

import json
import selectors
import socket
import time
from typing import Any

CONNECTIONS = 500
GETS = 20
PUBS = 5


def _work(k: int) -> bytes:
    inbox = b"_INBOX.c.%d" % k
    out = [b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\n', b"SUB %b 1\r\n" % inbox]
    for i in range(GETS):
        body = b'{"seq":%d}' % (1 + (k + i) % 100)
        out.append(b"PUB $JS.API.DIRECT.GET.C %b %d\r\n%b\r\n" % (inbox, len(body), body))
    for _ in range(PUBS):
        out.append(b"PUB c.%d %b 5\r\nvalue\r\n" % (k % 50, inbox))
    out.append(b"PING\r\n")
    return b"".join(out)


def many_connections(port: int, connections: int = CONNECTIONS) -> tuple[float, int]:
    """Wall seconds and error count for ``connections`` fresh clients doing their work."""
    work = [_work(k) for k in range(connections)]
    sel = selectors.DefaultSelector()
    bufs: dict[int, bytes] = {}
    t0 = time.perf_counter()
    for k in range(connections):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(work[k])
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ, k)
        bufs[k] = b""
    errors = 0
    pending = connections
    deadline = time.monotonic() + 60
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(1.0):
            sock: Any = key.fileobj
            k = key.data
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                continue
            buf = bufs[k] + data
            bufs[k] = buf
            # Replies come from JetStream after the PONG may have: done when all are in.
            replies = buf.count(b"MSG _INBOX.c.%d " % k) if b"PONG\r\n" in buf else -1
            if not data or replies == GETS + PUBS:
                errors += buf.count(b"-ERR") + (0 if data else 1 + GETS + PUBS - max(0, replies))
                sel.unregister(sock)
                sock.close()
                pending -= 1
    wall = time.perf_counter() - t0
    errors += pending
    for key in list(sel.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    return wall, errors


def prepare(conn: Any) -> None:
    """A memory stream ``C`` (Direct Get on) holding 100 messages."""
    cfg = {"name": "C", "subjects": ["c.>"], "storage": "memory", "allow_direct": True}
    reply = conn.request("$JS.API.STREAM.CREATE.C", json.dumps(cfg).encode())
    if "error" in reply:
        raise RuntimeError(reply)
    for i in range(100):
        conn.request(f"c.{i % 50}", b"value")
