"""Stress scenario 4: seeded random and mutated protocol frames and JetStream API bodies.

The corpus is the frames a client such as nats-py sends (CONNECT, PUB, HPUB, SUB, UNSUB, PING,
PONG and JetStream API requests with their JSON bodies). An input is one to four frames, each
possibly mutated: bytes flipped, inserted, cut or repeated, a control-line token replaced by an
odd value, the declared size changed, a JSON body's value replaced or its key dropped (the size
then fixed so the body reaches the API), or plain random bytes.
"""

from __future__ import annotations

import json
import random
import selectors
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from benchmarks.stress_util import CONNECT, BlockingClient, ServerProc, status_of
from jsemu.protocol.frames import FrameReader

_API_BODIES: list[tuple[str, Any]] = [
    ("INFO", None),
    ("STREAM.CREATE.FZ2", {"name": "FZ2", "subjects": ["fz2.>"], "storage": "memory", "max_msgs": 100}),
    ("STREAM.UPDATE.FZ", {"name": "FZ", "subjects": ["fz.>"], "storage": "memory", "allow_direct": True}),
    ("STREAM.INFO.FZ", {"subjects_filter": ">", "deleted_details": True}),
    ("STREAM.NAMES", {"offset": 0, "subject": "fz.a"}),
    ("STREAM.LIST", {"offset": 0}),
    ("STREAM.MSG.GET.FZ", {"seq": 1}),
    ("STREAM.MSG.GET.FZ", {"last_by_subj": "fz.a"}),
    ("STREAM.MSG.DELETE.FZ", {"seq": 3, "no_erase": True}),
    ("STREAM.PURGE.FZ", {"filter": "fz.zz", "keep": 1}),
    ("DIRECT.GET.FZ", {"seq": 2}),
    ("DIRECT.GET.FZ", {"next_by_subj": "fz.*", "seq": 1, "batch": 3}),
    ("DIRECT.GET.FZ", {"multi_last": ["fz.a", "fz.b"], "up_to_seq": 5}),
    ("CONSUMER.CREATE.FZ.C2", {"stream_name": "FZ", "config": {"durable_name": "C2", "ack_policy": "explicit"}}),
    ("CONSUMER.CREATE.FZ", {"stream_name": "FZ", "config": {"ack_policy": "none", "deliver_policy": "last"}}),
    ("CONSUMER.INFO.FZ.FC", None),
    ("CONSUMER.NAMES.FZ", {"offset": 0}),
    ("CONSUMER.LIST.FZ", {"offset": 0}),
    ("CONSUMER.MSG.NEXT.FZ.FC", {"batch": 2, "no_wait": True}),
    ("CONSUMER.MSG.NEXT.FZ.FC", {"batch": 1, "expires": 50_000_000, "max_bytes": 1000}),
    ("CONSUMER.DELETE.FZ.C2", None),
    ("CONSUMER.PAUSE.FZ.FC", {"pause_until": "2000-01-01T00:00:00Z"}),
    ("STREAM.DELETE.FZ2", None),
    ("ACCOUNT.PURGE.X", None),
]

_ODD_TOKENS = [b"", b"-1", b"0", b"99999999999999999999", b"*", b">", b"a..b", b"\x00", b"x" * 300, b"1e3", b"$JS.API"]
_ODD_VALUES: list[Any] = [None, -1, 0, 2**63, 2**64, "", "*", ">", [], {}, "x" * 500, True, 1.5, "fz.>", [1, "a"]]
_KEYS = [
    "name",
    "seq",
    "batch",
    "subjects",
    "config",
    "durable_name",
    "filter_subject",
    "max_bytes",
    "expires",
    "storage",
]


def _frame(subject: bytes, body: bytes, reply: bytes = b"_R.z", header: bytes = b"") -> bytes:
    if header:
        return b"HPUB %s %s %d %d\r\n%s%s\r\n" % (subject, reply, len(header), len(header) + len(body), header, body)
    return b"PUB %s %s %d\r\n%s\r\n" % (subject, reply, len(body), body)


def corpus() -> list[tuple[bytes, Any]]:
    """(frame, JSON body or None) pairs: the frames a JetStream client sends."""
    out: list[tuple[bytes, Any]] = [
        (
            (
                b'CONNECT {"verbose":false,"pedantic":false,"tls_required":false,"name":"nats-py","lang":"python3",'
                b'"version":"2.9.0","protocol":1,"headers":true,"no_responders":true}\r\n'
            ),
            None,
        ),
        (b"PUB fz.a 5\r\nhello\r\n", None),
        (b"PUB fz.b _INBOX.x 5\r\nhello\r\n", None),
        (_frame(b"fz.a", b"hello", header=b"NATS/1.0\r\nNats-Msg-Id: abc\r\n\r\n"), None),
        (_frame(b"fz.c", b"v", header=b"NATS/1.0\r\nNats-Expected-Last-Sequence: 3\r\n\r\n"), None),
        (b"SUB _INBOX.> 7\r\n", None),
        (b"SUB fz.* q 8\r\n", None),
        (b"UNSUB 7\r\n", None),
        (b"UNSUB 8 5\r\n", None),
        (b"PING\r\n", None),
        (b"PONG\r\n", None),
    ]
    for suffix, body in _API_BODIES:
        raw = b"" if body is None else json.dumps(body).encode()
        out.append((_frame(b"$JS.API." + suffix.encode(), raw), body))
    return out


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(4)
        at = rng.randrange(len(b) + 1)
        if choice == 0 and b:
            b[min(at, len(b) - 1)] = rng.randrange(256)
        elif choice == 1:
            b[at:at] = bytes([rng.choice([0, 9, 10, 13, 32, 34, 42, 46, 62, 123, 255])])
        elif choice == 2:
            b[at : at + rng.randint(1, 8)] = b""
        else:
            b[at:at] = b[at : at + rng.randint(1, 16)] * rng.randint(1, 4)
    return bytes(b)


def _mutate_json(rng: random.Random, body: Any) -> Any:
    if not isinstance(body, dict):
        return rng.choice(_ODD_VALUES)
    body = json.loads(json.dumps(body))
    target = body["config"] if "config" in body and rng.random() < 0.5 and isinstance(body["config"], dict) else body
    keys = list(target)
    roll = rng.random()
    if keys and roll < 0.5:
        target[rng.choice(keys)] = rng.choice(_ODD_VALUES)
    elif keys and roll < 0.7:
        del target[rng.choice(keys)]
    else:
        target[rng.choice(_KEYS)] = rng.choice(_ODD_VALUES)
    return body


def _mutate_frame(rng: random.Random, frame: bytes, body: Any) -> bytes:
    roll = rng.random()
    if roll < 0.3:
        return frame
    line, _, rest = frame.partition(b"\r\n")
    if roll < 0.55 and body is not None and line.startswith(b"PUB $JS.API."):
        new = json.dumps(_mutate_json(rng, body)).encode()
        subject = line.split()[1]
        return _frame(subject, new)
    if roll < 0.75:
        tokens = line.split(b" ")
        tokens[rng.randrange(len(tokens))] = rng.choice(_ODD_TOKENS)
        return b" ".join(tokens) + b"\r\n" + rest
    if roll < 0.8 and line.split(b" ")[-1].isdigit():
        tokens = line.split(b" ")
        tokens[-1] = b"%d" % max(0, int(tokens[-1]) + rng.choice([-2, -1, 1, 3]))
        return b" ".join(tokens) + b"\r\n" + rest
    return _mutate_bytes(rng, frame)


def inputs(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    frames = corpus()
    out = []
    for _ in range(count):
        if rng.random() < 0.05:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))))
            continue
        picked = [rng.choice(frames) for _ in range(rng.randint(1, 4))]
        out.append(b"".join(_mutate_frame(rng, f, b) for f, b in picked))
    return out


#: A subscription of each fuzzing connection for the sentinel that ends an input (a PING would
#: not do: an input may hold PINGs of its own).
SENTINEL_SUB = b"SUB _S.* 424242\r\n"


def _with_sentinel(item: bytes, n: int) -> bytes:
    """The input, ended by a CRLF if it has none, then a message to the sentinel subject:
    its delivery (``sentinel(n)``) comes after everything the input caused on the connection."""
    end = b"" if item.endswith(b"\r\n") else b"\r\n"
    return item + end + b"PUB _S.%d 0\r\n\r\n" % n


def sentinel(n: int) -> bytes:
    return b"MSG _S.%d 424242 " % n


def setup(port: int) -> None:
    c = BlockingClient.connect(port)
    cfg = {"name": "FZ", "subjects": ["fz.>"], "storage": "memory", "allow_direct": True}
    c.request("$JS.API.STREAM.CREATE.FZ", json.dumps(cfg).encode())
    cons = {"stream_name": "FZ", "config": {"durable_name": "FC", "ack_policy": "explicit"}}
    c.request("$JS.API.CONSUMER.CREATE.FZ.FC", json.dumps(cons).encode())
    for i in range(10):
        c.request(f"fz.{'abc'[i % 3]}", b"m%d" % i)
    c.sock.close()


@dataclass
class _Lane:
    nxt: int = 0
    sock: socket.socket | None = None
    index: int = -1
    sent_at: float = 0.0
    got_err: bool = False
    buf: bytes = b""


@dataclass
class FuzzResult:
    inputs: int = 0
    seconds: float = 0.0
    err_closes: int = 0
    silent_drops: int = 0
    stalls: int = 0
    server_died: bool = False
    internal: list[str] = field(default_factory=list)
    drop_samples: list[bytes] = field(default_factory=list)
    drops: set[int] = field(default_factory=set)
    code_500: int = 0
    resets: int = 0


def fuzz(srv: ServerProc, items: list[bytes], lanes: int = 32, timeout: float = 0.3) -> FuzzResult:
    """Each input on one of ``lanes`` connections, followed by a sentinel message: done when it
    is delivered; a close after ``-ERR`` is an answer, a close without one a silent drop; no
    sentinel in ``timeout`` (an input waiting for bytes that never come) closes the connection
    and moves on."""
    setup(srv.port)
    res = FuzzResult()
    sel = selectors.DefaultSelector()
    # Lane k takes inputs k, k + lanes, ... in order: what a connection carries from one input to
    # the next (CONNECT options, subscriptions) is the same on every server and every run.
    pool = [_Lane(nxt=k) for k in range(lanes)]
    t0 = time.monotonic()

    def open_lane(lane: _Lane) -> None:
        sock = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        sock.sendall(CONNECT + b"SUB _R.> 99\r\n" + SENTINEL_SUB + b"PING\r\n")
        buf = b""
        while b"PONG\r\n" not in buf:
            data = sock.recv(65536)
            if not data:
                raise ConnectionError("closed at connect")
            buf += data
        sock.setblocking(False)
        lane.sock = sock
        sel.register(sock, selectors.EVENT_READ, lane)

    def close_lane(lane: _Lane) -> None:
        if lane.sock is not None:
            sel.unregister(lane.sock)
            lane.sock.close()
            lane.sock = None

    def start_next(lane: _Lane) -> None:
        nxt = lane.nxt
        if nxt >= len(items):
            lane.index = -1
            return
        if lane.sock is None:
            open_lane(lane)
        assert lane.sock is not None
        lane.index, lane.got_err, lane.buf = nxt, False, b""
        lane.nxt += lanes
        lane.sent_at = time.monotonic()
        lane.sock.setblocking(True)
        try:
            lane.sock.sendall(_with_sentinel(items[lane.index], lane.index))
        except OSError:
            pass
        lane.sock.setblocking(False)

    try:
        for lane in pool:
            start_next(lane)
        while any(lane.index >= 0 for lane in pool):
            for key, _ in sel.select(0.05):
                lane = key.data
                if lane.sock is None:
                    continue
                try:
                    data = lane.sock.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:  # a reset (nats-server's close with unread input): a close too
                    data = b""
                    res.resets += 1
                if not data:
                    if lane.got_err or b"-ERR" in lane.buf:
                        res.err_closes += 1
                    elif lane.index >= 0:
                        res.silent_drops += 1
                        res.drops.add(lane.index)
                        if len(res.drop_samples) < 5:
                            res.drop_samples.append(items[lane.index])
                    close_lane(lane)
                    res.inputs += lane.index >= 0
                    start_next(lane)
                    continue
                lane.buf = lane.buf[-64:] + data
                if b"-ERR" in data:
                    lane.got_err = True
                res.code_500 += data.count(b'"code":500')
                if b"PING\r\n" in data:
                    try:
                        lane.sock.setblocking(True)
                        lane.sock.sendall(b"PONG\r\n")
                        lane.sock.setblocking(False)
                    except OSError:
                        pass
                if lane.index >= 0 and sentinel(lane.index) in lane.buf:
                    res.inputs += 1
                    if lane.got_err:  # nats-server closes after most -ERRs: start afresh
                        close_lane(lane)
                    start_next(lane)
            now = time.monotonic()
            for lane in pool:
                if lane.index >= 0 and now - lane.sent_at > timeout:
                    res.stalls += 1
                    res.inputs += 1
                    close_lane(lane)
                    start_next(lane)
            if not srv.alive():
                res.server_died = True
                break
    finally:
        for lane in pool:
            close_lane(lane)
    res.seconds = time.monotonic() - t0
    res.server_died = res.server_died or not srv.alive()
    res.internal = srv.internal_errors()
    return res


# --- the same inputs, both servers, answers compared ---------------------------------------


def _answer(port: int, item: bytes, quiet: float) -> tuple[str, ...]:
    """What a fresh connection gets for ``item``: -ERR lines, status lines and JSON errors, in
    order of kind, and whether the server closed the connection."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    reader = FrameReader()
    out: list[str] = []
    closed = False
    try:
        reader.next_from(sock.recv)  # INFO
        sock.sendall(CONNECT + b"SUB _R.> 99\r\n" + SENTINEL_SUB + _with_sentinel(item, 0))
        deadline = time.monotonic() + 0.5
        ended = False
        sock.settimeout(0.05)
        while time.monotonic() < deadline:
            try:
                data = sock.recv(1 << 16)
            except TimeoutError:
                if ended:
                    break
                continue
            if not data:
                closed = True
                break
            reader.feed(data)
            while True:
                try:
                    f = reader.next()
                except ValueError:
                    out.append("unparsable frame")
                    break
                if f is None:
                    break
                if f.is_msg and f.subject == b"_S.0":
                    ended = True
                    deadline = min(deadline, time.monotonic() + quiet)
                elif f.op == b"-ERR":
                    out.append(f.line.decode(errors="replace"))
                elif f.is_msg:
                    st = status_of(f)
                    if st:
                        out.append("status " + f.header.split(b"\r\n", 1)[0].decode(errors="replace"))
                    elif f.payload.startswith(b"{") and b'"error"' in f.payload:
                        try:
                            err = json.loads(f.payload)["error"]
                            out.append(f"json error {err.get('code')} {err.get('err_code')} {err.get('description')}")
                        except (ValueError, KeyError, AttributeError):
                            out.append("bad json error")
    except OSError:
        closed = True
    finally:
        sock.close()
    if closed:
        # A JetStream reply racing the close of the connection: not compared.
        out = [o for o in out if not o.startswith(("json error", "status"))]
    return (*sorted(out), "closed" if closed else "open")


def compare(real: ServerProc, emu: ServerProc, items: list[bytes]) -> tuple[int, list[str]]:
    """How many inputs get different answers; a few of them, described."""
    setup(real.port)
    setup(emu.port)
    differ = 0
    samples: list[str] = []
    kinds: Counter[str] = Counter()
    for item in items:
        quiet = 0.03 if b"$JS" in item else 0.005
        a, b = _answer(real.port, item, quiet), _answer(emu.port, item, quiet)
        if a != b:
            differ += 1
            kinds[a[0][:40] if a else ""] += 1
            if len(samples) < 5:
                samples.append(f"input {item[:160]!r}\n    nats-server: {list(a)}\n    jsemu:       {list(b)}")
    return differ, samples
