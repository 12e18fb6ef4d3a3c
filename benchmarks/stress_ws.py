"""Stress scenario 5: hostile input on the WebSocket port while good clients keep working.

Each seeded input is one socket of the ``websocket {}`` port doing one of: garbage before any
upgrade; a mutated upgrade request; a handshake never finished (held open past the
``handshake_timeout``); an upgrade and then random frames (any opcode, FIN, RSV bits, mask or
none, a payload length that lies, control frames inside fragments, oversized control frames,
a 2 MB frame); a compressed message that inflates to 50 MB. The bytes go out in random
pieces. ``--ws-lanes`` sockets at a time.

All along, bystanders: a TCP client and a WebSocket client each publish numbered messages
every few milliseconds to ``by.tcp`` / ``by.ws``, and a TCP and a WebSocket subscriber of
``by.>`` must get every one, in order (``lost``: missing or out of order), with the longest
gap between two of them (``max_gap_ms``). Counted per server: inputs, the server's answers
(HTTP refusals, close frames by status, silent closes), inputs we gave up on, internal
errors in the log, whether it died. With both servers, ``--ws-compare`` of the inputs are
sent to each on fresh sockets one at a time and the reactions (HTTP status, close or not,
the close status when nats-server's gets out) compared.
"""

from __future__ import annotations

import asyncio
import random
import struct
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from benchmarks.stress_util import ServerProc, free_port
from tests.support.wsclient import frame, split_frames

_KEY = "dGhlIHNhbXBsZSBub25jZQ=="
_CONNECT = b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"protocol":1}\r\n'
_NATS = [_CONNECT, b"PING\r\n", b"SUB a 1\r\n", b"PUB a 2\r\nhi\r\n", b"HPUB a 12 14\r\nNATS/1.0\r\n\r\nho\r\n"]
_NATS += [b"UNSUB 1\r\n", b"PUB a 99999999\r\n", b"PUB by.x 1\r\nx\r\n", b"SUB by.> 9\r\n"]
_OFFER = "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; server_no_context_takeover\r\n"
#: The ``websocket {}`` block both servers get.
WS_BLOCK = '{ port: %d, no_tls: true, compression: true, handshake_timeout: "1s" }'


def upgrade(extra: str = "", host: str = "127.0.0.1") -> bytes:
    return (
        f"GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {_KEY}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    ).encode()


def client_frame(opcode: int, payload: bytes, fin: bool = True, mask: bool = True, rsv: int = 0) -> bytes:
    """A client frame masked with the all-zero key (nothing to XOR in a 2 MB payload)."""
    return frame(opcode, payload, fin=fin, mask=mask, rsv=rsv, key=b"\0\0\0\0")


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return (c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH))[:-4]


_BOMB = _deflate(_CONNECT + b"\0" * (50 << 20))


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(b) + 1)
        op = rng.randrange(4)
        if op == 0 and b:
            b[min(at, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[at:at] = bytes([rng.choice([0, 10, 13, 32, 58, 255])])
        elif op == 2:
            b[at : at + rng.randint(1, 8)] = b""
        else:
            b[at:at] = b[at : at + rng.randint(1, 16)] * rng.randint(1, 3)
    return bytes(b)


def _random_frame(rng: random.Random) -> bytes:
    payload = rng.choice(_NATS) if rng.random() < 0.7 else rng.randbytes(rng.randrange(40))
    if rng.random() < 0.3:
        payload = _mutate(rng, payload) if payload else payload
    opcode = rng.choice([0, 0, 1, 2, 2, 2, 8, 9, 9, 10, rng.randrange(16)])
    if opcode == 8 and rng.random() < 0.7:
        payload = struct.pack("!H", rng.choice([1000, 1001, 1005, 999, 3000, 5000])) + payload[:20]
    if opcode in (9, 10) and rng.random() < 0.1:
        payload = b"p" * 126  # too long for a control frame
    rsv = rng.choice([0] * 20 + [0x40, 0x20, 0x10])
    data = client_frame(opcode, payload, fin=rng.random() < 0.8, mask=rng.random() < 0.93, rsv=rsv)
    if rng.random() < 0.05:  # a length that lies (more than will ever come, or the top bit set)
        data = bytes((data[0], 0x80 | 127)) + struct.pack("!Q", rng.choice([1 << 40, 1 << 63, 70000])) + data[2:]
    return data


@dataclass
class WsInput:
    kind: str
    head: bytes  # what is sent first (an upgrade request or not)
    frames: bytes = b""  # after a 101
    cuts: list[int] = field(default_factory=list)  # where ``frames`` is cut into pieces
    hold: float = 0.0  # seconds to keep a silent socket open


def ws_inputs(seed: int, count: int) -> list[WsInput]:
    rng = random.Random(seed)
    out: list[WsInput] = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.1:
            out.append(WsInput("garbage", rng.randbytes(rng.randrange(1, 200)) + b"\r\n\r\n"))
        elif roll < 0.22:
            out.append(WsInput("bad upgrade", _mutate(rng, upgrade(_OFFER if rng.random() < 0.5 else ""))))
        elif roll < 0.27:
            request = upgrade()
            out.append(WsInput("never finished", request[: rng.randrange(len(request) - 2)], hold=1.5))
        elif roll < 0.3:
            big = client_frame(2, _CONNECT + b"PUB a 2000000\r\n" + b"x" * 2_000_000 + b"\r\n")
            out.append(WsInput("2 MB frame", upgrade(), big, [rng.randrange(len(big)) for _ in range(3)]))
        elif roll < 0.32:
            out.append(WsInput("inflates to 50 MB", upgrade(_OFFER), client_frame(2, _BOMB, rsv=0x40)))
        else:
            frames = client_frame(2, _CONNECT) + b"".join(_random_frame(rng) for _ in range(rng.randint(1, 6)))
            cuts = [rng.randrange(len(frames)) for _ in range(rng.randrange(4))]
            out.append(WsInput("frames", upgrade(), frames, cuts))
    return out


@dataclass
class Reaction:
    http: str = ""  # the status line of an HTTP answer other than 101
    status: int | None = None  # the close frame's status (1005: none given)
    closed: bool = False
    gave_up: bool = False


async def react(port: int, item: WsInput, quiet: float = 0.3) -> Reaction:
    """One hostile socket: what it got."""
    out = Reaction()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        out.closed = True
        return out
    try:
        writer.write(item.head)
        if item.hold:
            await asyncio.sleep(item.hold)
        buf = b""
        if item.frames:
            try:
                buf = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 3)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                out.closed = True
                return out
            except TimeoutError:
                out.gave_up = True
                return out
            if not buf.startswith(b"HTTP/1.1 101"):
                out.http = buf.split(b"\r\n", 1)[0].decode(errors="replace")
            at = 0
            for cut in sorted(set(item.cuts)):
                writer.write(item.frames[at:cut])
                await asyncio.sleep(0.002)
                at = cut
            writer.write(item.frames[at:])
            buf = b""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                data = await asyncio.wait_for(reader.read(1 << 16), quiet)
            except TimeoutError:
                break
            except ConnectionError:
                out.closed = True
                break
            if not data:
                out.closed = True
                break
            buf += data
        else:
            out.gave_up = True
    finally:
        writer.close()
    if not item.frames:
        if buf.startswith(b"HTTP/"):
            out.http = buf.split(b"\r\n", 1)[0].decode(errors="replace")
        return out
    out.status = _close_status(buf)
    return out


def _close_status(data: bytes) -> int | None:
    """The status of the first close frame among the server's frames in ``data``."""
    while len(data) >= 2:
        n, off = data[1] & 0x7F, 2
        if n == 126:
            n, off = struct.unpack("!H", data[2:4])[0], 4
        elif n == 127:
            n, off = struct.unpack("!Q", data[2:10])[0], 10
        if data[0] & 0x0F == 8:
            body = data[off : off + n]
            return struct.unpack("!H", body[:2])[0] if len(body) >= 2 else 1005
        if len(data) < off + n:
            return None
        data = data[off + n :]
    return None


class _Ws:
    """A bystander WebSocket client (asyncio streams): frames out, payload bytes in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.pending = b""

    @classmethod
    async def connect(cls, port: int) -> _Ws:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(upgrade())
        await reader.readuntil(b"\r\n\r\n")
        return cls(reader, writer)

    def send(self, data: bytes) -> None:
        self.writer.write(client_frame(2, data))

    async def read(self) -> bytes:
        """Payload bytes of the next whole frames (control frames dropped)."""
        while True:
            frames, data = split_frames(self.pending)
            out = b"".join(f.payload for f in frames if f.opcode in (0, 1, 2))
            self.pending = data
            if out:
                return out
            chunk = await self.reader.read(1 << 16)
            if not chunk:
                raise ConnectionError("bystander closed")
            self.pending += chunk


@dataclass
class _Receiver:
    """A subscriber of ``by.>``: the last number seen per subject, gaps, the longest silence."""

    last: dict[bytes, int] = field(default_factory=dict)
    lost: int = 0
    got: int = 0
    max_gap: float = 0.0
    seen_at: float = 0.0
    tail: bytes = b""

    def feed(self, data: bytes) -> None:
        now = time.monotonic()
        if self.seen_at:
            self.max_gap = max(self.max_gap, now - self.seen_at)
        self.seen_at = now
        data = self.tail + data
        *lines, self.tail = data.split(b"\r\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith((b"MSG by.tcp ", b"MSG by.ws ")):  # (hostile sockets publish to by.x)
                subject = line.split()[1]
                body = lines[i + 1] if i + 1 < len(lines) else None
                if body is None:  # the body is in the next read
                    self.tail = line + b"\r\n" + self.tail
                    break
                n = int(body)
                if n != self.last.get(subject, 0) + 1:
                    self.lost += 1
                self.last[subject] = n
                self.got += 1
                i += 2
                continue
            i += 1


async def _bystanders(srv: ServerProc, ws_port: int, stop: asyncio.Event, out: dict[str, Any]) -> None:
    """Publish numbered messages from a TCP and a WebSocket client until ``stop``, then check
    the TCP and the WebSocket subscriber got them all, in order."""
    tcp_sub_r, tcp_sub_w = await asyncio.open_connection("127.0.0.1", srv.port)
    await tcp_sub_r.readuntil(b"\r\n")
    tcp_sub_w.write(_CONNECT + b"SUB by.> 1\r\nPING\r\n")
    await tcp_sub_r.readuntil(b"PONG\r\n")
    ws_sub = await _Ws.connect(ws_port)
    ws_sub.send(_CONNECT + b"SUB by.> 1\r\nPING\r\n")
    while b"PONG\r\n" not in await ws_sub.read():
        pass
    tcp_pub_r, tcp_pub_w = await asyncio.open_connection("127.0.0.1", srv.port)
    await tcp_pub_r.readuntil(b"\r\n")
    tcp_pub_w.write(_CONNECT)
    ws_pub = await _Ws.connect(ws_port)
    ws_pub.send(_CONNECT)
    receivers = {"tcp": _Receiver(), "ws": _Receiver()}

    async def read_tcp() -> None:
        while True:
            data = await tcp_sub_r.read(1 << 16)
            if not data:
                raise ConnectionError("TCP bystander closed")
            if b"PING\r\n" in data:
                tcp_sub_w.write(b"PONG\r\n")
            receivers["tcp"].feed(data)

    async def read_ws() -> None:
        while True:
            data = await ws_sub.read()
            if b"PING\r\n" in data:
                ws_sub.send(b"PONG\r\n")
            receivers["ws"].feed(data)

    async def drain(reader: asyncio.StreamReader) -> None:
        while await reader.read(1 << 16):
            pass

    readers = [asyncio.ensure_future(f) for f in (read_tcp(), read_ws(), drain(tcp_pub_r), drain(ws_pub.reader))]
    sent = 0
    while not stop.is_set():
        sent += 1
        tcp_pub_w.write(b"PUB by.tcp %d\r\n%d\r\n" % (len(str(sent)), sent))
        ws_pub.send(b"PUB by.ws %d\r\n%d\r\n" % (len(str(sent)), sent))
        await asyncio.sleep(0.004)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(
        r.last.get(s, 0) == sent for r in receivers.values() for s in (b"by.tcp", b"by.ws")
    ):
        if any(t.done() for t in readers):
            break
        await asyncio.sleep(0.05)
    for task in readers:
        task.cancel()
    for w in (tcp_sub_w, tcp_pub_w, ws_sub.writer, ws_pub.writer):
        w.close()
    out["bystander_sent"] = 2 * sent
    out["tcp_sub_got"] = receivers["tcp"].got
    out["ws_sub_got"] = receivers["ws"].got
    out["bystander_lost"] = sum(
        r.lost + (sent - r.last.get(s, 0)) for r in receivers.values() for s in (b"by.tcp", b"by.ws")
    )
    out["max_gap_ms"] = 1000 * max(r.max_gap for r in receivers.values())


def ws_server(kind: str) -> tuple[ServerProc, int]:
    port = free_port()
    return ServerProc(kind, config={"websocket": WS_BLOCK % port, "max_payload": 1 << 20}), port


def ws_fuzz(srv: ServerProc, ws_port: int, items: list[WsInput], lanes: int = 32) -> dict[str, Any]:
    """Every input on its own socket, ``lanes`` at a time, bystanders publishing throughout."""
    return asyncio.run(_ws_fuzz(srv, ws_port, items, lanes))


async def _ws_fuzz(srv: ServerProc, ws_port: int, items: list[WsInput], lanes: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stop = asyncio.Event()
    bystanders = asyncio.ensure_future(_bystanders(srv, ws_port, stop, out))
    await asyncio.sleep(0.2)
    counts: Counter[str] = Counter()
    queue = list(enumerate(items))
    t0 = time.monotonic()

    async def lane() -> None:
        while queue:
            _, item = queue.pop()
            r = await react(ws_port, item)
            if r.gave_up:
                counts["gave_up"] += 1
            elif r.http:
                counts["http_" + r.http.split()[1] if len(r.http.split()) > 1 else "http"] += 1
            elif r.status is not None:
                counts[f"close_{r.status}"] += 1
            elif r.closed:
                counts["silent_close"] += 1
            else:
                counts["kept_open"] += 1

    await asyncio.gather(*(lane() for _ in range(lanes)))
    seconds = time.monotonic() - t0
    stop.set()
    try:
        await bystanders
    except ConnectionError as exc:
        out["bystander_error"] = str(exc)
    out |= {"inputs": len(items), "per_s": len(items) / seconds}
    out["answers"] = dict(sorted(counts.items()))
    out["internal"] = len(srv.internal_errors())
    out["died"] = not srv.alive()
    return out


def ws_compare(
    real: tuple[ServerProc, int], emu: tuple[ServerProc, int], items: list[WsInput]
) -> tuple[int, list[str]]:
    """How many inputs got a different reaction (HTTP status, closed or not, the close status
    where nats-server's close frame got out); a few described."""

    async def run() -> tuple[int, list[str]]:
        differ, samples = 0, []
        for item in items:
            if item.hold or item.kind == "inflates to 50 MB":
                continue  # timing-bound and slow: counted by the fuzz, not compared
            a, b = await asyncio.gather(react(real[1], item), react(emu[1], item))
            same = a.http == b.http and a.closed == b.closed and (a.status is None or a.status == b.status)
            if not same:
                differ += 1
                if len(samples) < 5:
                    samples.append(f"{item.kind}: nats-server {a}, jsemu {b}, sent {(item.head + item.frames)[:120]!r}")
        return differ, samples

    return asyncio.run(run())
