"""Stress scenarios 1 and 2: many connections at once, and slow consumers among fast ones."""

from __future__ import annotations

import json
import random
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from benchmarks.stress_util import CONNECT, BlockingClient, ServerProc, header_value, percentile, status_of
from jsemu.protocol.frames import Frame, FrameReader

STREAM = "STRESS"
DURABLE = "PULL"
OPS = ("pub", "get", "fetch", "core")
WEIGHTS = (35, 30, 20, 15)
REQUEST_TIMEOUT = 10.0


@dataclass
class _Client:
    k: int
    sock: socket.socket
    reader: FrameReader = field(default_factory=FrameReader)
    op: str = ""
    sent_at: float = 0.0
    n: int = 0
    msg_id: str = ""
    ready: bool = False
    done: bool = False
    closed: bool = False


def setup_stream(port: int) -> None:
    c = BlockingClient.connect(port)
    cfg = {"name": STREAM, "subjects": ["st.>"], "storage": "file", "allow_direct": True}
    reply = c.request(f"$JS.API.STREAM.CREATE.{STREAM}", json.dumps(cfg).encode())
    if "error" in reply:
        raise RuntimeError(reply)
    cons = {
        "stream_name": STREAM,
        "config": {"durable_name": DURABLE, "ack_policy": "explicit", "ack_wait": 5_000_000_000},
    }
    reply = c.request(f"$JS.API.CONSUMER.CREATE.{STREAM}.{DURABLE}", json.dumps(cons).encode())
    if "error" in reply:
        raise RuntimeError(reply)
    for i in range(100):
        c.request(f"st.pre.{i % 10}", b"prefill %d" % i)
    c.sock.close()


def many_connections(srv: ServerProc, connections: int, duration: float, seed: int) -> dict[str, Any]:
    """``connections`` clients at once for ``duration`` seconds, each one request at a time:
    acked publishes with a Msg-Id, Direct Gets, pull fetches (acked with a reply), core
    publishes (each followed by a PING) received by the others' plain subscriptions."""
    setup_stream(srv.port)
    rng = random.Random(seed)
    cpu0 = srv.cpu_seconds()
    sel = selectors.DefaultSelector()
    clients: list[_Client] = []
    for k in range(connections):
        sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        sock.sendall(CONNECT + b"SUB _I.%d.* 1\r\nSUB core.%d 2\r\nPING\r\n" % (k, k % 50))
        sock.setblocking(False)
        cl = _Client(k, sock)
        clients.append(cl)
        sel.register(sock, selectors.EVENT_READ, cl)
    errors: list[str] = []
    latencies: list[float] = []
    counts = dict.fromkeys(("pub", "get", "fetch", "fetched", "ack", "core", "core_received", "no_msgs"), 0)
    acked: dict[str, int] = {}
    fanout = [sum(1 for k in range(connections) if k % 50 == j) for j in range(50)]
    core_expected = [0]

    def send(cl: _Client, data: bytes) -> None:
        try:
            cl.sock.sendall(data)
        except BlockingIOError:
            cl.sock.setblocking(True)
            cl.sock.sendall(data)
            cl.sock.setblocking(False)

    def issue(cl: _Client, now: float) -> None:
        cl.op = rng.choices(OPS, WEIGHTS)[0]
        cl.n += 1
        cl.sent_at = now
        reply = b"_I.%d.%d" % (cl.k, cl.n)
        if cl.op == "pub":
            cl.msg_id = f"m-{cl.k}-{cl.n}"
            hdr = b"NATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n" % cl.msg_id.encode()
            body = b"payload %s" % cl.msg_id.encode()
            data = b"HPUB st.c.%d %s %d %d\r\n%s%s\r\n" % (cl.k % 100, reply, len(hdr), len(hdr) + len(body), hdr, body)
        elif cl.op == "get":
            body = b'{"seq":%d}' % rng.randint(1, 100)
            data = b"PUB $JS.API.DIRECT.GET.%s %s %d\r\n%s\r\n" % (STREAM.encode(), reply, len(body), body)
        elif cl.op == "fetch":
            body = b'{"batch":1,"no_wait":true}'
            subj = f"$JS.API.CONSUMER.MSG.NEXT.{STREAM}.{DURABLE}".encode()
            data = b"PUB %s %s %d\r\n%s\r\n" % (subj, reply, len(body), body)
        else:
            j = rng.randrange(50)
            core_expected[0] += fanout[j]
            data = b"PUB core.%d 16\r\ncore message 16b\r\nPING\r\n" % j
        send(cl, data)

    def on_frame(cl: _Client, f: Frame, now: float) -> None:
        op = f.op
        if op == b"PING":
            send(cl, b"PONG\r\n")
            return
        if op == b"-ERR":
            errors.append(f"client {cl.k}: {f.line.decode(errors='replace')}")
            return
        if op == b"PONG":
            if not cl.ready:
                cl.ready = True
            elif cl.op == "core":
                done(cl, now)
            elif cl.op == "drain":
                cl.op = ""
            return
        if not f.is_msg:
            return
        if f.sid == b"2":
            counts["core_received"] += 1
            return
        if not cl.op or cl.op == "core":
            errors.append(f"client {cl.k}: unexpected {f.line.decode(errors='replace')}")
            return
        status = status_of(f)
        if cl.op == "pub":
            reply = json.loads(f.payload)
            if "error" in reply or reply.get("duplicate"):
                errors.append(f"client {cl.k}: publish {reply}")
            else:
                acked[cl.msg_id] = int(reply["seq"])
        elif cl.op == "get":
            if status:
                errors.append(f"client {cl.k}: direct get status {f.header[:40]!r}")
        elif cl.op == "fetch":
            if status in (b"404", b"408"):
                counts["no_msgs"] += 1
            elif status:
                errors.append(f"client {cl.k}: fetch status {f.header[:40]!r}")
            elif not f.reply.startswith(b"$JS.ACK."):
                errors.append(f"client {cl.k}: fetched message without an ack subject")
            else:
                counts["fetched"] += 1
                latencies.append(now - cl.sent_at)
                counts["fetch"] += 1
                cl.op = "ack"
                cl.n += 1
                cl.sent_at = now
                send(cl, b"PUB %s _I.%d.%d 4\r\n+ACK\r\n" % (f.reply, cl.k, cl.n))
                return
        elif cl.op == "ack" and (status or f.payload):
            errors.append(f"client {cl.k}: ack reply {f.raw[:60]!r}")
        done(cl, now)

    stop_at = 0.0

    def done(cl: _Client, now: float) -> None:
        latencies.append(now - cl.sent_at)
        counts[cl.op] += 1
        cl.op = ""
        if now < stop_at:
            issue(cl, now)
        else:
            cl.done = True

    # All connected and subscribed before the clock starts.
    deadline = time.monotonic() + 60
    while not all(c.ready for c in clients) and time.monotonic() < deadline:
        for key, _ in sel.select(0.5):
            _pump(sel, key.data, on_frame, errors)
    if not all(c.ready for c in clients):
        errors.append(f"{sum(not c.ready for c in clients)} connections never got their PONG")
    t0 = time.monotonic()
    stop_at = t0 + duration
    for cl in clients:
        issue(cl, t0)
    while True:
        now = time.monotonic()
        for key, _ in sel.select(0.2):
            _pump(sel, key.data, on_frame, errors)
        waiting = [c for c in clients if not c.done and c.op]
        if not waiting:
            break
        now = time.monotonic()
        if now > stop_at + REQUEST_TIMEOUT:
            errors.append(
                f"{len(waiting)} requests unanswered after {REQUEST_TIMEOUT}s (ops {sorted({c.op for c in waiting})})"
            )
            break
    wall = time.monotonic() - t0
    # A PING to each: its PONG comes after every core message sent to it before.
    for cl in clients:
        if not cl.op and cl.ready and not cl.closed:
            cl.op = "drain"
            send(cl, b"PING\r\n")
    drain_until = time.monotonic() + REQUEST_TIMEOUT
    while any(c.op == "drain" for c in clients) and time.monotonic() < drain_until:
        for key, _ in sel.select(0.2):
            _pump(sel, key.data, on_frame, errors)
    for cl in clients:
        if not cl.closed:
            sel.unregister(cl.sock)
        cl.sock.close()
    cpu = srv.cpu_seconds() - cpu0
    missing = verify_acked(srv.port, acked)
    return {
        "connections": connections,
        "wall_s": wall,
        "errors": len(errors),
        "error_samples": errors[:5],
        "acked_pubs": len(acked),
        "missing": missing,
        "gets": counts["get"],
        "fetched": counts["fetched"],
        "acks": counts["ack"],
        "core_pubs": counts["core"],
        "core_received": counts["core_received"],
        "core_lost": core_expected[0] - counts["core_received"],
        "requests": len(latencies),
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "peak_rss_mb": srv.peak_rss() / 1e6,
        "cpu_s": cpu,
    }


def _pump(sel: selectors.BaseSelector, cl: _Client, on_frame: Any, errors: list[str]) -> None:
    try:
        data = cl.sock.recv(1 << 18)
    except BlockingIOError:
        return
    except OSError as e:
        data = b""
        errors.append(f"client {cl.k}: {e}")
    now = time.monotonic()
    if not data:
        if not cl.closed:
            cl.closed = True
            sel.unregister(cl.sock)
        if not cl.done:
            errors.append(f"client {cl.k}: connection closed by the server")
            cl.done = True
            cl.op = ""
        return
    cl.reader.feed(data)
    while (f := cl.reader.next()) is not None:
        on_frame(cl, f, now)


def verify_acked(port: int, acked: dict[str, int]) -> int:
    """How many acknowledged publishes are not in the stream at their sequence."""
    if not acked:
        return 0
    c = BlockingClient.connect(port, timeout=30)
    by_seq = {seq: mid for mid, seq in acked.items()}
    frames = c.direct_get_many(STREAM, sorted(by_seq))
    c.sock.close()
    missing = 0
    for seq, mid in by_seq.items():
        f = frames.get(seq)
        if f is None or status_of(f) or header_value(f.header, b"Nats-Msg-Id") != mid.encode():
            missing += 1
    return missing


# --- slow consumers ------------------------------------------------------------------------


def slow_consumers(srv: ServerProc, fast: int, slow: int, duration: float, rate: int, size: int) -> dict[str, Any]:
    """``slow`` subscribers that never read (SO_RCVBUF 4 KiB) among ``fast`` ones that read all,
    while two publishers send ``rate`` messages a second of ``size`` bytes to one subject."""
    varz0 = srv.varz().get("slow_consumers", 0)
    subs: list[socket.socket] = []
    slow_socks: list[socket.socket] = []
    for i in range(fast + slow):
        sock = socket.socket()
        if i < slow:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", srv.port))
        sock.settimeout(10)
        c = BlockingClient(sock)  # CONNECT, PING/PONG
        sock.sendall(b"SUB flood 7\r\nPING\r\n")
        while c.next().op != b"PONG":
            pass
        (slow_socks if i < slow else subs).append(sock)
    stop = threading.Event()
    gaps: dict[int, list[float]] = {i: [] for i in range(fast)}
    received = [0] * fast
    cut_fast = [0]

    def read_fast() -> None:
        sel = selectors.DefaultSelector()
        last: dict[int, float] = {}
        for i, s in enumerate(subs):
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, i)
        tails = [b""] * fast
        open_ = set(range(fast))
        while open_ and not (stop.is_set() and all(received[i] >= sent_total[0] for i in open_)):
            for key, _ in sel.select(0.2):
                i = key.data
                try:
                    data = subs[i].recv(1 << 20)
                except BlockingIOError:
                    continue
                now = time.monotonic()
                if not data:
                    cut_fast[0] += 1
                    sel.unregister(subs[i])
                    open_.discard(i)
                    continue
                chunk = tails[i] + data
                n = chunk.count(b"MSG flood 7 ")
                tails[i] = chunk[-11:]
                if n:
                    if i in last:
                        gaps[i].append(now - last[i])
                    last[i] = now
                    received[i] += n
                if b"PING\r\n" in data:
                    subs[i].setblocking(True)
                    subs[i].sendall(b"PONG\r\n")
                    subs[i].setblocking(False)
            if stop.is_set() and time.monotonic() > stop_time[0] + 10:
                break

    sent_total = [0]
    stop_time = [0.0]
    reader = threading.Thread(target=read_fast, daemon=True)
    reader.start()
    pubs = [BlockingClient.connect(srv.port) for _ in range(2)]
    payload = b"x" * size
    batch = max(1, rate // 200)  # one batch per publisher every 10 ms
    frame = b"PUB flood %d\r\n%s\r\n" % (size, payload)
    t0 = time.monotonic()
    next_at = next_check = t0
    # The flood goes on for ``duration``, and then (10 s at most) until the slow ones are cut.
    cut_seen = varz0
    while time.monotonic() < t0 + duration or (cut_seen - varz0 < slow and time.monotonic() < t0 + duration + 10):
        if time.monotonic() > next_check:
            cut_seen = srv.varz().get("slow_consumers", 0)
            next_check = time.monotonic() + 0.5
        for p in pubs:
            p.sock.sendall(frame * batch)
            sent_total[0] += batch
        next_at += 0.01
        pause = next_at - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    for p in pubs:
        p.sock.sendall(b"PING\r\n")
        while p.next().op != b"PONG":
            pass
    stop_time[0] = time.monotonic()
    stop.set()
    reader.join(30)
    time.sleep(0.5)
    # Were the slow ones cut? Drain each: the server's close ends it with EOF.
    cut = 0
    for s in slow_socks:
        s.settimeout(0.5)
        try:
            while s.recv(1 << 20):
                pass
            cut += 1
        except OSError:
            pass
    varz = srv.varz()
    for s in subs + slow_socks:
        s.close()
    for p in pubs:
        p.sock.close()
    max_gaps = [max(g) for g in gaps.values() if g]
    return {
        "published": sent_total[0],
        "flood_s": stop_time[0] - t0,
        "slow_cut": cut,
        "slow": slow,
        "varz_slow_consumers": varz.get("slow_consumers", 0) - varz0,
        "fast_cut": cut_fast[0],
        "fast_complete": sum(r >= sent_total[0] for r in received),
        "fast": fast,
        "max_stall_ms": max(max_gaps, default=float("nan")) * 1000,
        "median_max_stall_ms": percentile(max_gaps, 0.5) * 1000,
    }
