"""jsemu against the real nats-server, side by side, in one run: ``python -m benchmarks``.

Both servers run as their own processes on loopback (``nats-server -js`` and ``jsemu serve``)
and are driven by the same lean raw-socket client: request bytes are built before the clock
starts and replies are counted with ``bytes.count`` on their subject, so the client is
never the bottleneck. Sections (``--only`` picks some):

* ``directget``: Direct Get throughput on one connection, pipelined in windows of 1,000
  replies: ``last_by_subj``, ``seq``, subject-appended (a KV get), ``batch`` of 100 and
  ``multi_last`` over 100 subjects.
* ``directget16``: the same forms over 16 connections at once.
* ``ingest``: 1M plain publishes on 100k subjects into a memory stream (first PUB sent to
  the stream holding all of them), then 1M acknowledged ones (every PubAck counted);
  ``memory``: the server's RSS growth per stored message in the plain run.
* ``consumers``: a pull consumer fetching batches of 100 from a stream of ``messages / 10``,
  acking every message (``explicit``) or not (``none``).
* ``scaling``: one-at-a-time latency of ``last_by_subj``, ``next_by_subj`` with a wildcard
  and ``multi_last`` at 10^3 .. 10^6 stored messages (it should stay flat).
* ``connections``: 500 fresh connections at once, each 20 Direct Gets and 5 acknowledged
  publishes (``benchmarks/connections.py``): wall time and errors.
* ``fanout``: clients sharing one wildcard inbox, 500 and 2,000, each sending 20 Direct
  Gets and 5 acknowledged publishes and closing after 25 answers (anybody's), and replies
  each fanning out to all of them (``benchmarks/fanout.py``): wall time, rates, errors and
  the lines the server logged.
* ``routes``: a message routed across a two-node cluster, publisher on node A and subscriber
  on node B (``benchmarks/routes.py``): the median rate of three rounds and their spread.
* ``startup``: an in-process ``jsemu.Server`` to its first PONG and to a created stream,
  against spawning ``nats-server``.
* ``restart``: a file stream's restart to its first ``STREAM.INFO`` answer with ``messages``
  kept, after as many publishes and after ten times as many (``benchmarks/restart_rows.py``):
  the median of five starts and their spread.

Every ratio is oriented so that >= 1.0 means jsemu meets the target: jsemu / nats-server
for rates, nats-server / jsemu for latencies, bytes and start-up times.

``--runs N`` runs each section N times (both servers each time, in the same order), then
reports every row as the median of its N figures per server; its ratio is the median of
the N ratios (each from one run, the two servers measured side by side) and its spread the
lowest and highest of them (``merge_runs``). ``--json`` keeps every run's figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.servers import RealServer, nats_server_binary

from benchmarks.client import Conn, build_frames, rss_bytes
from benchmarks.connections import CONNECTIONS, GETS, PUBS, many_connections
from benchmarks.connections import prepare as prepare_connections
from benchmarks.consumers import consumers
from benchmarks.fanout import fanout
from benchmarks.first_lookup import first_lookup_rows
from benchmarks.restart_rows import restart_rows
from benchmarks.routes import routed
from benchmarks.websocket import websocket

KINDS = ("real", "jsemu")
INBOX = b"_INBOX.b.a"
MARKER = b"MSG _INBOX.b.a "  # also inside "HMSG _INBOX.b.a "
TIMEOUT = 60.0


@dataclass
class Row:
    """One line of the table: a figure per server and how to read it."""

    section: str
    name: str
    unit: str
    higher_is_better: bool
    values: dict[str, float] = field(default_factory=dict)
    #: False for a figure about the measurement itself (a spread of rounds): shown per
    #: server, no ratio (a wider spread on one server is no target to meet).
    compared: bool = True
    #: With ``--runs``: each run's figure per server, in run order (``values`` holds their
    #: medians) and each run's ratio where both servers gave a figure.
    runs: dict[str, list[float]] = field(default_factory=dict)
    ratios: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.ratios:
            return statistics.median(self.ratios)
        return self.run_ratio

    @property
    def run_ratio(self) -> float | None:
        """The ratio of the figures in ``values`` (one run's)."""
        real, emu = self.values.get("real"), self.values.get("jsemu")
        if not self.compared or not real or not emu:
            return None
        return emu / real if self.higher_is_better else real / emu

    @property
    def spread(self) -> tuple[float, float] | None:
        """The lowest and highest ratio of the runs (None for fewer than two)."""
        if len(self.ratios) < 2:
            return None
        return min(self.ratios), max(self.ratios)


@dataclass
class Sizes:
    requests: int = 200_000
    batches: int = 2_000
    messages: int = 1_000_000
    subjects: int = 100_000
    scaling_max: int = 1_000_000
    latency_samples: int = 1_000
    startups: int = 50
    spawns: int = 10


QUICK = Sizes(
    requests=20_000,
    batches=200,
    messages=100_000,
    subjects=10_000,
    scaling_max=10_000,
    latency_samples=200,
    startups=10,
    spawns=3,
)


# --- the load generator ------------------------------------------------------------------


def count_replies(sock: socket.socket, expected: int, deadline: float, marker: bytes = MARKER) -> None:
    """Read until ``expected`` replies to the bench inbox have arrived."""
    seen = 0
    tail = b""
    keep = len(marker) - 1
    sock.settimeout(max(0.1, deadline - time.monotonic()))
    while seen < expected:
        data = sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        chunk = tail + data
        seen += chunk.count(marker)
        tail = chunk[-keep:]
        if time.monotonic() > deadline:
            raise TimeoutError(f"{seen} of {expected} replies")


def windows(build: Callable[[int, bytes], bytes], count: int, per_window: int, inbox: bytes = INBOX) -> list[bytes]:
    return [
        b"".join(build(i, inbox) for i in range(s, min(s + per_window, count))) for s in range(0, count, per_window)
    ]


def pipelined(conn: Conn, frames: list[bytes], replies_per_window: list[int]) -> float:
    """Send each window and wait for its replies; returns elapsed seconds."""
    deadline = time.monotonic() + TIMEOUT
    start = time.perf_counter()
    for frame, expected in zip(frames, replies_per_window, strict=True):
        conn.sock.sendall(frame)
        count_replies(conn.sock, expected, deadline)
    return time.perf_counter() - start


def own_inbox(conn: Conn, k: int) -> bytes:
    """Give connection ``k`` an inbox of its own (they all start on ``_INBOX.b.*``)."""
    inbox = b"_INBOX.c%d.a" % k
    conn.sock.sendall(b"UNSUB 1\r\nSUB _INBOX.c%d.* 2\r\n" % k)
    return inbox


def pipelined_many(conns: list[Conn], frames: list[list[bytes]], replies: list[int], markers: list[bytes]) -> float:
    """Connection ``k`` runs through its windows ``frames[k]``, starting the next as soon as
    the previous one is answered; returns elapsed seconds until all are done."""
    sel = selectors.DefaultSelector()
    done = [0] * len(conns)  # windows answered
    seen = [0] * len(conns)  # replies towards the current window
    tails = [b""] * len(conns)
    for k, conn in enumerate(conns):
        sel.register(conn.sock, selectors.EVENT_READ, k)
    deadline = time.monotonic() + TIMEOUT
    start = time.perf_counter()
    for k, conn in enumerate(conns):
        conn.sock.sendall(frames[k][0])
    running = len(conns)
    while running:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{running} connections still running")
        for key, _ in sel.select(timeout=1.0):
            k = key.data
            sock = conns[k].sock
            data = sock.recv(1 << 20)
            if not data:
                raise ConnectionError("server closed a connection")
            marker = markers[k]
            chunk = tails[k] + data
            tails[k] = chunk[-(len(marker) - 1) :]
            seen[k] += chunk.count(marker)
            while done[k] < len(replies) and seen[k] >= replies[done[k]]:
                seen[k] -= replies[done[k]]
                done[k] += 1
                if done[k] == len(replies):
                    running -= 1
                else:
                    sock.sendall(frames[k][done[k]])
    elapsed = time.perf_counter() - start
    sel.close()
    return elapsed


def start(kind: str) -> RealServer:
    return RealServer(jsemu_process=(kind == "jsemu"))


def fill(conn: Conn, stream: str, pubs: Iterator[bytes], total: int) -> None:
    """Publish pre-built PUB frames and wait until the stream holds ``total`` messages."""
    for chunk in pubs:
        conn.sock.sendall(chunk)
    deadline = time.monotonic() + TIMEOUT
    while conn.request(f"$JS.API.STREAM.INFO.{stream}")["state"]["messages"] < total:
        if time.monotonic() > deadline:
            raise TimeoutError(f"stream {stream} never got {total} messages")
        time.sleep(0.01)


def fill_acked(conn: Conn, stream: str, subjects: Iterator[bytes], total: int) -> None:
    """Publish ``total`` messages with acks, 10,000 at a time (nats-server drops some of a
    fast publisher's messages without flow control)."""
    deadline = time.monotonic() + TIMEOUT * 5
    batch: list[bytes] = []
    for subject in subjects:
        batch.append(b"PUB %b %b 5\r\nvalue\r\n" % (subject, INBOX))
        if len(batch) == 10_000:
            conn.sock.sendall(b"".join(batch))
            count_replies(conn.sock, len(batch), deadline)
            batch = []
    if batch:
        conn.sock.sendall(b"".join(batch))
        count_replies(conn.sock, len(batch), deadline)
    if conn.request(f"$JS.API.STREAM.INFO.{stream}")["state"]["messages"] != total:
        raise RuntimeError(f"stream {stream} does not hold {total} messages")


def create(conn: Conn, name: str, subjects: list[str]) -> None:
    cfg = {"name": name, "subjects": subjects, "storage": "memory", "allow_direct": True}
    reply = conn.request(f"$JS.API.STREAM.CREATE.{name}", json.dumps(cfg).encode())
    if "error" in reply:
        raise RuntimeError(reply)


# --- sections ----------------------------------------------------------------------------

KV_SUBJECTS = 10_000
ML_SUBJECTS = 100


def _dg_forms(sizes: Sizes) -> list[tuple[str, Callable[[int, bytes], bytes], int, int]]:
    """(row, request builder (index, inbox), requests, replies per request)."""

    def payload(body: bytes, inbox: bytes, subject: bytes = b"$JS.API.DIRECT.GET.KV") -> bytes:
        return b"PUB %b %b %d\r\n%b\r\n" % (subject, inbox, len(body), body)

    return [
        ("last_by_subj", lambda i, r: payload(b'{"last_by_subj":"kv.%d"}' % (i % KV_SUBJECTS), r), sizes.requests, 1),
        ("seq", lambda i, r: payload(b'{"seq":%d}' % (i % KV_SUBJECTS + 1), r), sizes.requests, 1),
        (
            "subject-appended (KV get)",
            lambda i, r: b"PUB $JS.API.DIRECT.GET.KV.kv.%d %b 0\r\n\r\n" % (i % KV_SUBJECTS, r),
            sizes.requests,
            1,
        ),
        (
            "batch 100",
            lambda i, r: payload(b'{"seq":%d,"batch":100}' % (i % (KV_SUBJECTS - 100) + 1), r),
            sizes.batches,
            101,
        ),
        (
            "multi_last 100 subjects",
            lambda i, r: payload(b'{"multi_last":["ml.>"]}', r, b"$JS.API.DIRECT.GET.ML"),
            sizes.batches,
            ML_SUBJECTS + 1,
        ),
    ]


def _dg_setup(conn: Conn) -> None:
    create(conn, "KV", ["kv.>"])
    create(conn, "ML", ["ml.>"])
    kv = b"".join(b"PUB kv.%d 5\r\nvalue\r\n" % i for i in range(KV_SUBJECTS))
    fill(conn, "KV", iter([kv]), KV_SUBJECTS)
    ml = b"".join(b"PUB ml.%d 5\r\nvalue\r\n" % (i % ML_SUBJECTS) for i in range(ML_SUBJECTS * 10))
    fill(conn, "ML", iter([ml]), ML_SUBJECTS * 10)


def directget(kind: str, sizes: Sizes, connections: int, rows: dict[str, Row], section: str) -> None:
    server = start(kind)
    try:
        conns = [Conn(server.port) for _ in range(connections)]
        _dg_setup(conns[0])
        inboxes = [INBOX] if connections == 1 else [own_inbox(c, k) for k, c in enumerate(conns)]
        for conn in conns[1:] if connections == 1 else conns:
            conn.sock.sendall(b"PING\r\n")
            conn.wait_pong()  # the inbox change has been applied
        markers = [b"MSG " + inbox + b" " for inbox in inboxes]
        for name, build, count, per in _dg_forms(sizes):
            per_window = max(1, 1000 // per)
            frames = [windows(build, count, per_window, inbox) for inbox in inboxes]
            replies = [len(w) * per for w in _chunks(count, per_window)]
            row = rows.setdefault(f"{section}/{name}", Row(section, name, "req/s", True))
            try:
                if connections == 1:
                    elapsed = pipelined(conns[0], frames[0], replies)
                else:
                    elapsed = pipelined_many(conns, frames, replies, markers)
                row.values[kind] = count * connections / elapsed
            except (TimeoutError, OSError) as exc:
                print(f"  {kind} {section} {name}: {exc!r}", file=sys.stderr)
    finally:
        server.stop()


def _chunks(count: int, size: int) -> list[range]:
    return [range(s, min(s + size, count)) for s in range(0, count, size)]


def ingest(kind: str, sizes: Sizes, rows: dict[str, Row]) -> None:
    server = start(kind)
    try:
        conn = Conn(server.port)
        create(conn, "BENCH", ["bench.>"])
        frames = build_frames(sizes.messages, sizes.subjects, 7, reply=False)
        rss0 = rss_bytes(server.proc.pid)
        t0 = time.perf_counter()
        fill(conn, "BENCH", iter(frames), sizes.messages)
        elapsed = time.perf_counter() - t0
        grown = rss_bytes(server.proc.pid) - rss0
        label = f"{sizes.messages:,} on {sizes.subjects:,} subjects"
        rows.setdefault("ingest/plain", Row("ingest", f"publish {label}", "msg/s", True)).values[kind] = (
            sizes.messages / elapsed
        )
        rows.setdefault("memory/rss", Row("memory", f"RSS per stored message ({label})", "bytes", False)).values[
            kind
        ] = grown / sizes.messages
        conn.request("$JS.API.STREAM.PURGE.BENCH")
        acked = build_frames(sizes.messages, sizes.subjects, 7, reply=True)
        t0 = time.perf_counter()
        deadline = time.monotonic() + TIMEOUT
        for chunk in acked:
            conn.sock.sendall(chunk)
        count_replies(conn.sock, sizes.messages, deadline)
        rows.setdefault("ingest/acked", Row("ingest", f"acked publish {label}", "msg/s", True)).values[kind] = (
            sizes.messages / (time.perf_counter() - t0)
        )
    finally:
        server.stop()


def _scaling_subject(i: int) -> bytes:
    return b"s.%d.%b" % (i % 1000, b"x" if i % 10 == 0 else b"y")


def _latency(conn: Conn, requests: list[bytes]) -> tuple[float, float]:
    """Median and 99th percentile round trip (µs) of requests sent one at a time."""
    times = []
    deadline = time.monotonic() + TIMEOUT
    for req in requests:
        t0 = time.perf_counter()
        conn.sock.sendall(req)
        expected = 1 if b"multi_last" not in req else 101
        count_replies(conn.sock, expected, deadline)
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def scaling(kind: str, sizes: Sizes, rows: dict[str, Row]) -> None:
    rng = random.Random(7)
    size = 1000
    while size <= sizes.scaling_max:
        server = start(kind)
        try:
            conn = Conn(server.port)
            create(conn, "SC", ["s.>"])
            fill_acked(conn, "SC", (_scaling_subject(i) for i in range(size)), size)
            n = sizes.latency_samples
            last = [
                b"PUB $JS.API.DIRECT.GET.SC.s.%d.x %b 0\r\n\r\n" % (rng.randrange(100) * 10, INBOX) for _ in range(n)
            ]
            nxt = []
            for _ in range(n):
                body = b'{"seq":%d,"next_by_subj":"s.7.*"}' % rng.randrange(1, max(2, size - 2000))
                nxt.append(b"PUB $JS.API.DIRECT.GET.SC %b %d\r\n%b\r\n" % (INBOX, len(body), body))
            body = b'{"multi_last":["s.*.x"]}'
            # As many as the other forms: with a tenth of them (100) a "p99" was the second
            # slowest request, one pause or the first request's cold caches on either server.
            multi = [b"PUB $JS.API.DIRECT.GET.SC %b %d\r\n%b\r\n" % (INBOX, len(body), body)] * n
            for name, reqs in (("last_by_subj", last), ("next_by_subj s.7.*", nxt), ("multi_last s.*.x", multi)):
                median, p99 = _latency(conn, reqs)
                key = f"scaling/{name}/{size}"
                rows.setdefault(key, Row("scaling", f"{name} @ {size:,} msgs, median", "µs", False)).values[kind] = (
                    median
                )
                rows.setdefault(key + "/p99", Row("scaling", f"{name} @ {size:,} msgs, p99", "µs", False)).values[
                    kind
                ] = p99
        finally:
            server.stop()
        size *= 10


async def _read_until(loop: asyncio.AbstractEventLoop, sock: socket.socket, marker: bytes, buf: bytes) -> bytes:
    while marker not in buf:
        buf += await loop.sock_recv(sock, 65536)
    return buf[buf.index(marker) + len(marker) :]


async def _jsemu_startup() -> tuple[float, float]:
    """A server in this event loop, and a raw non-blocking socket client (the leanest
    asyncio client: what the clock sees is the server and the loop)."""
    import jsemu

    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    async with jsemu.Server(port=0) as srv:
        sock = socket.socket()
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", srv.port))
        rest = await _read_until(loop, sock, b"\r\n", b"")  # INFO
        await loop.sock_sendall(sock, b'CONNECT {"verbose":false}\r\nPING\r\n')
        rest = await _read_until(loop, sock, b"PONG\r\n", rest)
        pong = time.perf_counter() - t0
        body = b'{"name":"X","subjects":["x"],"storage":"memory"}'
        await loop.sock_sendall(sock, b"SUB r 1\r\nPUB $JS.API.STREAM.CREATE.X r %d\r\n%s\r\n" % (len(body), body))
        await _read_until(loop, sock, b"MSG r", rest)
        created = time.perf_counter() - t0
        sock.close()
    return pong, created


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _real_startup() -> tuple[float, float]:
    port = _free_port()
    store = tempfile.mkdtemp(prefix="bench-ns-")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [nats_server_binary(), "-js", "-a", "127.0.0.1", "-p", str(port), "--store_dir", store],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError("nats-server did not start") from None
                time.sleep(0.0005)
        f = sock.makefile("rb")
        f.readline()
        sock.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
        while f.readline() != b"PONG\r\n":
            pass
        pong = time.perf_counter() - t0
        body = b'{"name":"X","subjects":["x"],"storage":"memory"}'
        sock.sendall(b"SUB r 1\r\nPUB $JS.API.STREAM.CREATE.X r %d\r\n%s\r\n" % (len(body), body))
        while not f.readline().startswith(b"MSG r"):
            pass
        created = time.perf_counter() - t0
        sock.close()
        return pong, created
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(store, ignore_errors=True)


def connections(kind: str, rows: dict[str, Row]) -> None:
    server = start(kind)
    try:
        conn = Conn(server.port)
        prepare_connections(conn)
        wall, errors = many_connections(server.port)
    finally:
        server.stop()
    name = f"{CONNECTIONS} fresh, each {GETS} gets + {PUBS} acked pubs"
    rows.setdefault("connections/wall", Row("connections", name, "ms", False)).values[kind] = wall * 1e3
    rows.setdefault("connections/errors", Row("connections", "  errors (must be 0)", "count", False)).values[kind] = (
        errors
    )


def startup(sizes: Sizes, rows: dict[str, Row]) -> None:
    emu = [asyncio.run(_jsemu_startup()) for _ in range(sizes.startups)]
    real = [_real_startup() for _ in range(sizes.spawns)]
    for i, name in enumerate(("start to first PONG", "start to a created stream")):
        row = rows.setdefault(f"startup/{i}", Row("startup", f"{name} (median)", "ms", False))
        row.values["real"] = statistics.median(r[i] for r in real) * 1e3
        row.values["jsemu"] = statistics.median(r[i] for r in emu) * 1e3


# --- output ------------------------------------------------------------------------------


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    version = subprocess.run(
        [nats_server_binary(), "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return (
        f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()} "
        f"({platform.python_implementation()}, default asyncio loop); {version}"
    )


def table(rows: dict[str, Row]) -> str:
    """The rows as text: a ``spread`` column (lowest-highest ratio) when any row has several runs."""
    spreads = any(row.spread for row in rows.values())
    width = max([46, *(len(row.name) + 2 for row in rows.values())])
    head = f"{'section':<12}{'row':<{width}}{'unit':>7}{'nats-server':>14}{'jsemu':>14}{'ratio':>8}"
    out = [head + (f"{'spread':>13}" if spreads else "")]

    def cell(v: float | None) -> str:
        return "-" if v is None else f"{v:,.3f}" if v < 10 else f"{v:,.0f}"

    for row in rows.values():
        real, emu, ratio, spread = row.values.get("real"), row.values.get("jsemu"), row.ratio, row.spread
        line = (
            f"{row.section:<12}{row.name:<{width}}{row.unit:>7}{cell(real):>14}{cell(emu):>14}"
            f"{'-' if ratio is None else f'{ratio:.2f}':>8}"
        )
        if spreads:
            line += f"{'-' if spread is None else f'{spread[0]:.2f}-{spread[1]:.2f}':>13}"
        out.append(line.rstrip())
    out.append("ratio: jsemu/nats-server for rates, nats-server/jsemu for µs, ms and bytes; >= 1.00 meets the target")
    if spreads:
        runs = max(len(r.ratios) for r in rows.values())
        out.append(f"each figure the median of {runs} runs; spread: the lowest and highest ratio of those runs")
    return "\n".join(out)


def merge_runs(per_run: list[dict[str, Row]]) -> dict[str, Row]:
    """One row per key of the runs' tables (in order of first appearance): the median of
    each server's figures, every figure kept in ``runs``, and each run's own ratio (the two
    servers of one run were measured side by side) in ``ratios``."""
    merged: dict[str, Row] = {}
    for rows in per_run:
        for key, row in rows.items():
            into = merged.setdefault(
                key, Row(row.section, row.name, row.unit, row.higher_is_better, compared=row.compared)
            )
            for kind, value in row.values.items():
                into.runs.setdefault(kind, []).append(value)
            ratio = row.run_ratio
            if ratio is not None:
                into.ratios.append(ratio)
    for row in merged.values():
        row.values = {kind: statistics.median(values) for kind, values in row.runs.items()}
    return merged


def run_repeated(only: list[str], sizes: Sizes, runs: int = 1) -> dict[str, Row]:
    """Each section ``runs`` times in a row (``run``), merged (``merge_runs``)."""
    rows: dict[str, Row] = {}
    for section in only:
        per_run = []
        for n in range(runs):
            if runs > 1:
                print(f"run {n + 1} of {runs}:", file=sys.stderr, flush=True)
            per_run.append(run([section], sizes))
        rows.update(merge_runs(per_run))
    return rows


SECTIONS = (
    "directget",
    "directget16",
    "ingest",
    "consumers",
    "scaling",
    "connections",
    "fanout",
    "startup",
    "routes",
    "restart",
    "websocket",
    "firstlookup",
)


def run(only: list[str], sizes: Sizes) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for section in only:
        print(f"running {section} ...", file=sys.stderr, flush=True)
        if section == "startup":
            startup(sizes, rows)
            continue
        for kind in KINDS:
            try:
                if section == "directget":
                    directget(kind, sizes, 1, rows, section)
                elif section == "directget16":
                    directget(kind, sizes, 16, rows, section)
                elif section == "ingest":
                    ingest(kind, sizes, rows)
                elif section == "consumers":
                    consumers(kind, sizes, rows, start, fill, create)
                elif section == "scaling":
                    scaling(kind, sizes, rows)
                elif section == "connections":
                    connections(kind, rows)
                elif section == "fanout":
                    fanout(kind, rows)
                elif section == "routes":
                    routed(kind, sizes, rows)
                elif section == "restart":
                    restart_rows(kind, sizes, rows)
                elif section == "websocket":
                    websocket(kind, sizes, rows, Row)
                elif section == "firstlookup":
                    first_lookup_rows(kind, sizes, rows)
            except (OSError, RuntimeError) as exc:  # TimeoutError is an OSError
                print(f"  {kind} {section} failed: {exc!r}", file=sys.stderr)
    return rows
