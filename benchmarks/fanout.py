"""Fan-out to many subscribers that come and go: replies to a shared wildcard inbox while
the clients that receive them close.

Each of N clients (500, 2,000) connects and sends in one write CONNECT, ``SUB _INBOX.f.>``
(one wildcard every client shares, as clients with one inbox prefix pattern do), 20 Direct
Gets by sequence and 5 acknowledged publishes with reply subjects ``_INBOX.f.<k>.<i>``, then
PING. Every reply goes to every client subscribed at the time, so each reply subject is
new and fans out to hundreds of connections; a client closes as soon as 25 answers (anybody's)
are in, so replies keep being written to connections that are closing. All run at once (one
selector); the row is the wall time from the first connect to the last close. Errors are
``-ERR``s and clients cut off before their 25 answers (must be 0), and, for jsemu, the lines
the server wrote to stderr meanwhile (asyncio's ``socket.send() raised exception.`` is one
per write to a lost connection: must stay a constant few).
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.servers import CountedServer

GETS = 20
PUBS = 5
ANSWERS = GETS + PUBS
MARKER = b"MSG _INBOX.f."  # also inside "HMSG _INBOX.f."


_HELLO = b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB _INBOX.f.> 1\r\n'


def _work(k: int) -> bytes:
    out = []
    for i in range(GETS):
        body = b'{"seq":%d}' % (1 + (k + i) % 100)
        out.append(b"PUB $JS.API.DIRECT.GET.F _INBOX.f.%d.%d %d\r\n%b\r\n" % (k, i, len(body), body))
    for i in range(PUBS):
        out.append(b"PUB f.%d _INBOX.f.%d.p%d 5\r\nvalue\r\n" % (k % 50, k, i))
    out.append(b"PING\r\n")
    return b"".join(out)


def _subscribed(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(_HELLO + b"PING\r\n")
    buf = b""
    while b"PONG\r\n" not in buf:
        data = sock.recv(1 << 16)
        if not data:
            raise ConnectionError("closed before its PONG")
        buf += data
    return sock


def fan_out(port: int, connections: int, subscribed_first: bool = False) -> tuple[float, int]:
    """Wall seconds and error count for ``connections`` clients sharing one wildcard inbox.
    Fresh (default): each connects, subscribes and sends its requests in one write, the
    next one after it. ``subscribed_first``: all are connected and subscribed (each has its
    PONG) before the clock starts, then all send their requests at once, so the first
    replies go to every client and the clients close while the rest fan out."""
    work = [_work(k) for k in range(connections)]
    sel = selectors.DefaultSelector()
    seen: dict[int, int] = {}
    tails: dict[int, bytes] = {}
    errors = 0
    keep = len(MARKER) - 1
    ready = [_subscribed(port) for _ in range(connections)] if subscribed_first else []
    t0 = time.perf_counter()
    for k in range(connections):
        if subscribed_first:
            sock = ready[k]
            sock.sendall(work[k])
        else:
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(_HELLO + work[k])
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ, k)
        seen[k] = 0
        tails[k] = b""
    pending = connections
    deadline = time.monotonic() + 120
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(1.0):
            sock: Any = key.fileobj
            k = key.data
            try:
                data = sock.recv(1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            chunk = tails[k] + data
            errors += chunk.count(b"-ERR")
            seen[k] += chunk.count(MARKER)
            tails[k] = chunk[-keep:]
            if not data or seen[k] >= ANSWERS:
                if not data:
                    errors += 1
                sel.unregister(sock)
                sock.close()
                pending -= 1
    wall = time.perf_counter() - t0
    errors += pending
    for key in list(sel.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    sel.close()
    return wall, errors


def wide_replies(port: int, subscribers: int, requests: int) -> tuple[float, int]:
    """Wall seconds and error count for ``requests`` Direct Gets, each with its own reply
    subject, answered to ``subscribers`` clients that all stay subscribed to the wildcard
    (every answer is a new subject that fans out to all of them): from the requests' one
    write until every subscriber has every answer."""
    subs = [_subscribed(port) for _ in range(subscribers)]
    requester = _subscribed(port)
    body = b'{"seq":1}'
    work = b"".join(
        b"PUB $JS.API.DIRECT.GET.F _INBOX.f.r.%d %d\r\n%b\r\n" % (i, len(body), body) for i in range(requests)
    )
    sel = selectors.DefaultSelector()
    for k, sock in enumerate(subs):
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ, k)
    seen = [0] * subscribers
    tails = [b""] * subscribers
    keep = len(MARKER) - 1
    errors = 0
    pending = subscribers
    t0 = time.perf_counter()
    requester.sendall(work)
    deadline = time.monotonic() + 120
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(1.0):
            k = key.data
            try:
                data = subs[k].recv(1 << 20)
            except BlockingIOError:
                continue
            chunk = tails[k] + data
            errors += chunk.count(b"-ERR")
            seen[k] += chunk.count(MARKER)
            tails[k] = chunk[-keep:]
            if not data or seen[k] >= requests:
                errors += 0 if data else 1
                sel.unregister(subs[k])
                pending -= 1
    wall = time.perf_counter() - t0
    sel.close()
    for sock in (*subs, requester):
        sock.close()
    return wall, errors + pending


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prepare(conn: Any) -> None:
    """A memory stream ``F`` (Direct Get on) holding 100 messages."""
    cfg = {"name": "F", "subjects": ["f.>"], "storage": "memory", "allow_direct": True}
    reply = conn.request("$JS.API.STREAM.CREATE.F", json.dumps(cfg).encode())
    if "error" in reply:
        raise RuntimeError(reply)
    for i in range(100):
        conn.request(f"f.{i % 50}", b"value")


#: (subscribers, replies) of the wide rows; the fresh rows run 500 and 2,000 clients.
WIDE = ((500, 200), (2000, 100))
FRESH = (500, 2000)
ROUNDS = 3


def fanout(kind: str, rows: dict[str, Any]) -> None:
    """The ``fanout`` section of ``python -m benchmarks``: median of ``ROUNDS`` rounds on one
    server, with their spread, and the lines the server logged meanwhile."""
    from benchmarks.client import Conn
    from benchmarks.suite import Row

    server = CountedServer(jsemu_process=(kind == "jsemu"))
    try:
        prepare(Conn(server.port))
        for n in FRESH:
            walls, errors = [], 0
            for _ in range(ROUNDS):
                wall, errs = fan_out(server.port, n)
                walls.append(wall * 1e3)
                errors += errs
            name = f"{n:,} fresh on one wildcard inbox, close at {ANSWERS}"
            rows.setdefault(f"fanout/fresh{n}", Row("fanout", name, "ms", False)).values[kind] = statistics.median(
                walls
            )
            spread = Row("fanout", "  spread of its rounds ((max-min)/median)", "%", False, compared=False)
            rows.setdefault(f"fanout/fresh{n}/spread", spread).values[kind] = (
                (max(walls) - min(walls)) / statistics.median(walls) * 100
            )
            rows.setdefault(f"fanout/fresh{n}/errors", Row("fanout", "  errors (must be 0)", "count", False)).values[
                kind
            ] = errors
        for n, replies in WIDE:
            rates, errors = [], 0
            for _ in range(ROUNDS):
                wall, errs = wide_replies(server.port, n, replies)
                rates.append(n * replies / wall)
                errors += errs
            name = f"{replies} replies, each to {n:,} on the wildcard"
            rows.setdefault(f"fanout/wide{n}", Row("fanout", name, "msg/s", True)).values[kind] = statistics.median(
                rates
            )
            rows.setdefault(f"fanout/wide{n}/errors", Row("fanout", "  errors (must be 0)", "count", False)).values[
                kind
            ] = errors
        time.sleep(0.5)  # the last lines reach the counter
        logged = Row("fanout", "lines logged meanwhile (must be a few)", "count", False, compared=False)
        rows.setdefault("fanout/logged", logged).values[kind] = server.lines.total
        if server.lines.total:
            print(f"  {kind} fanout logged {server.lines.total} lines, first: {server.lines.sample}", file=sys.stderr)
    finally:
        server.stop()
