"""``jsemu replay``: send a recorded session's client bytes to a server and compare its answers.

Theory of operation
-------------------
The session's records are walked in file order. A connection opens where the recording opened
it; each client chunk is sent as it was recorded (control lines with the server-chosen names
this server chose instead, :class:`~jsemu.sessions.normalise.Aliases`); a client close closes
the socket. Before any of these steps the replayer waits until every connection has received
as many server frames as it had received at that point of the recording: a reply comes
before the request that depends on it, a message before its ack, in whatever time this server
takes (``--pace fast``); ``--pace recorded`` waits as well for the recorded time since the
start, so timers (pull request expiry, heartbeats) see the recorded gaps.

Each connection's reader parses the server's bytes (:class:`~jsemu.protocol.frames.FrameReader`)
and compares each frame with the recorded frame of the same rank, as views
(:func:`~jsemu.sessions.normalise.view`). The first frame that differs, one that does not come
within ``timeout``, or one the recording does not have, is that connection's
:class:`Difference`; after it the connection is no longer compared or waited for, but its
client bytes are still sent, so the other connections see the same traffic.
"""

from __future__ import annotations

import asyncio
import json
import time
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from ..protocol.frames import Frame, FrameReader
from .format import Connection, Session, SessionFileError
from .normalise import CLOSED, Aliases, aliasable, view

__all__ = ["Difference", "ExpectedFrame", "ReplayResult", "expected_frames", "replay", "split_ops"]

#: After the last expected frame, how long to listen for frames the recording does not have.
GRACE = 0.3


@dataclass(frozen=True, slots=True)
class ExpectedFrame:
    view: str
    ts: str  # a $JS.ACK reply's time stamp token, "" otherwise
    is_info: bool
    raw: bytes
    line: int  # the session file line of the chunk that completed it
    after: str  # the client's last control line before it, "" before any
    names: frozenset[str] = frozenset()  # its words that may stand for server-chosen names


@dataclass(frozen=True, slots=True)
class Difference:
    conn: int
    frame: int  # 1-based rank among the connection's compared frames
    expected: str
    got: str
    line: int = 0
    after: str = ""

    def describe(self) -> str:
        where = f"conn {self.conn}: frame {self.frame}"
        if self.line:
            where += f" (recorded at line {self.line}"
            where += f", after client `{self.after}`)" if self.after else ")"
        out = [where, f"  expected: {_show(self.expected)}", f"  got:      {_show(self.got)}"]
        path = first_json_difference(self.expected, self.got)
        if path:
            out.append(f"  first difference: {path}")
        return "\n".join(out)


@dataclass(slots=True)
class ReplayResult:
    connections: int
    frames: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "connections": self.connections,
            "frames": self.frames,
            "differences": [
                {
                    "conn": d.conn,
                    "frame": d.frame,
                    "line": d.line,
                    "after": d.after,
                    "expected": d.expected,
                    "got": d.got,
                }
                for d in self.differences
            ],
        }


def _show(text: str, width: int = 400) -> str:
    text = text.replace("\r\n", "\\r\\n").replace("\n", " | ")
    return text if len(text) <= width else text[: width - 3] + "..."


def first_json_difference(expected: str, got: str) -> str:
    """Where two views' JSON payloads first differ (``config.max_msgs: 10 != 5``), or ""."""
    a, b = expected.rpartition("\n")[2], got.rpartition("\n")[2]
    try:
        ja, jb = json.loads(a), json.loads(b)
    except ValueError:
        return ""

    def walk(x: Any, y: Any, path: str) -> str:
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y)):
                sub = f"{path}.{key}" if path else str(key)
                if key not in y:
                    return f"{sub}: missing"
                if key not in x:
                    return f"{sub}: not expected ({json.dumps(y[key])[:80]})"
                found = walk(x[key], y[key], sub)
                if found:
                    return found
            return ""
        if isinstance(x, list) and isinstance(y, list):
            for i, (p, q) in enumerate(zip(x, y, strict=False)):
                found = walk(p, q, f"{path}[{i}]")
                if found:
                    return found
            return f"{path}: {len(x)} items != {len(y)}" if len(x) != len(y) else ""
        return "" if x == y else f"{path or '(payload)'}: {json.dumps(x)[:80]} != {json.dumps(y)[:80]}"

    return walk(ja, jb, "")


def split_ops(buf: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """Client bytes into whole ops, (control line with its newline, payload with its CRLF),
    and the bytes of an op not yet whole. A PUB/HPUB's payload is its last argument's size."""
    ops: list[tuple[bytes, bytes]] = []
    pos = 0
    while (nl := buf.find(b"\n", pos)) >= 0:
        line = buf[pos : nl + 1]
        words = line.split()
        end = nl + 1
        if words and words[0].upper() in (b"PUB", b"HPUB") and len(words) >= 3 and words[-1].isdigit():
            end += int(words[-1]) + 2
            if len(buf) < end:
                break
        ops.append((line, buf[nl + 1 : end]))
        pos = end
    return ops, buf[pos:]


def expected_frames(connection: Connection) -> list[ExpectedFrame]:
    """The recorded server frames of ``connection`` that are compared (no server PINGs), with
    a last ``CLOSED`` when the server closed it; SessionFileError when its server bytes are
    not NATS protocol or end inside a frame."""
    reader = FrameReader()
    out: list[ExpectedFrame] = []
    pending = b""
    after = ""
    for chunk in connection.chunks:
        if chunk.dir == "c2s":
            ops, pending = split_ops(pending + chunk.data)
            if ops:
                after = ops[-1][0].rstrip(b"\r\n").decode("utf-8", "backslashreplace")[:200]
            continue
        reader.feed(chunk.data)
        while True:
            try:
                frame = reader.next()
            except (ValueError, IndexError):
                raise SessionFileError(
                    f"line {chunk.line}: connection {connection.conn}: the server's bytes are not NATS protocol"
                ) from None
            if frame is None:
                break
            text, ts = view(frame)
            if text:
                is_info = frame.op.upper() == b"INFO"
                out.append(ExpectedFrame(text, ts, is_info, frame.raw, chunk.line, after, aliasable(frame)))
    if reader.pending:
        raise SessionFileError(f"connection {connection.conn}: the server's bytes end inside a frame (truncated?)")
    if connection.closed_by == "server":
        out.append(ExpectedFrame(CLOSED, "", False, b"", connection.close_line, after))
    return out


class _Conn:
    """One replayed connection: its socket, its reader, what it got so far."""

    def __init__(self, conn: int, expected: list[ExpectedFrame], aliases: Aliases) -> None:
        self.conn = conn
        self.expected = expected
        self.lines = [frame.line for frame in expected]  # never decreasing
        self.aliases = aliases
        self.received = 0
        self.diverged = False
        self.closing = False
        self.pending = b""
        self.writer: asyncio.StreamWriter | None = None
        self.task: asyncio.Task[None] | None = None

    def needed(self, line: int) -> int:
        """How many frames the recording had received before file line ``line``."""
        return bisect_left(self.lines, line)


class _Replay:
    def __init__(
        self,
        session: Session,
        expected: dict[int, list[ExpectedFrame]],
        host: str,
        port: int,
        pace: str,
        timeout: float,
    ) -> None:
        self.session = session
        self.expected = expected
        self.host, self.port = host, port
        self.pace = pace
        self.timeout = timeout
        self.aliases = Aliases()
        self.result = ReplayResult(len(session.connections))
        self.conns: dict[int, _Conn] = {}
        self.changed = asyncio.Event()

    def _differ(self, c: _Conn, got: str) -> None:
        exp = c.expected[c.received] if c.received < len(c.expected) else None
        self.result.differences.append(
            Difference(
                c.conn,
                c.received + 1,
                exp.view if exp else "(nothing: the recording has no more frames)",
                got,
                exp.line if exp else 0,
                exp.after if exp else "",
            )
        )
        c.diverged = True

    def _frame(self, c: _Conn, frame: Frame | None) -> None:
        """A frame that came (None: the server closed the connection)."""
        if frame is None:
            text, ts, is_info = CLOSED, "", False
        else:
            text, ts = view(frame)
            is_info = frame.op.upper() == b"INFO"
            if not text:
                return
        if c.diverged:
            return
        if c.received >= len(c.expected):
            self._differ(c, text)
            return
        exp = c.expected[c.received]
        if is_info and exp.is_info and frame is not None:
            raw = FrameReader()
            raw.feed(exp.raw)
            recorded = raw.next()
            if recorded is not None:
                self.aliases.learn_info(recorded, frame)
        if not self.aliases.match(exp.view, text, exp.names):
            self._differ(c, text)
            return
        if exp.ts and ts:
            self.aliases.learn(exp.ts, ts)
        c.received += 1
        self.result.frames += 1

    async def _read(self, c: _Conn, reader: asyncio.StreamReader) -> None:
        frames = FrameReader()
        try:
            while data := await reader.read(1 << 20):
                frames.feed(data)
                while True:
                    try:
                        frame = frames.next()
                    except (ValueError, IndexError):
                        self._differ(c, "(bytes that are not NATS protocol)")
                        return
                    if frame is None:
                        break
                    self._frame(c, frame)
                self.changed.set()
        except OSError:
            pass
        if not c.closing:
            self._frame(c, None)
        self.changed.set()

    async def _wait_for(self, line: int | None) -> None:
        """Until every live connection got what the recording had got before ``line``
        (None: everything), or ``timeout``."""
        deadline = time.monotonic() + self.timeout
        while True:
            behind = [
                c
                for c in self.conns.values()
                if not c.diverged and c.received < (len(c.expected) if line is None else c.needed(line))
            ]
            if not behind:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                for c in behind:
                    self._differ(c, f"(nothing within {self.timeout:g} s)")
                return
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                pass

    def _events(self) -> list[tuple[int, float, str, Connection, bytes]]:
        events: list[tuple[int, float, str, Connection, bytes]] = []
        for conn in self.session.connections.values():
            events.append((conn.open_line, conn.opened, "open", conn, b""))
            events.extend((ch.line, ch.t, "send", conn, ch.data) for ch in conn.chunks if ch.dir == "c2s")
            if conn.closed_by == "client" and conn.closed is not None:
                events.append((conn.close_line, conn.closed, "close", conn, b""))
        events.sort(key=lambda e: e[0])
        return events

    async def _send(self, c: _Conn, data: bytes) -> None:
        ops, c.pending = split_ops(c.pending + data)
        out = []
        for line, payload in ops:
            self.aliases.saw_client(line)
            if payload:
                self.aliases.saw_client(payload[:4096])
            out.append(line if line[:7].upper() == b"CONNECT" else self.aliases.rewrite_client(line))
            out.append(payload)
        if c.writer is not None and out:
            try:
                c.writer.write(b"".join(out))
                await c.writer.drain()
            except OSError:
                pass

    async def run(self) -> ReplayResult:
        start = time.monotonic()
        try:
            for line, t, kind, conn, data in self._events():
                if self.pace == "recorded":
                    delay = start + t - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                await self._wait_for(line)
                if kind == "open":
                    c = self.conns[conn.conn] = _Conn(conn.conn, self.expected[conn.conn], self.aliases)
                    reader, c.writer = await asyncio.open_connection(self.host, self.port)
                    c.task = asyncio.create_task(self._read(c, reader))
                    continue
                c = self.conns[conn.conn]
                if kind == "send":
                    await self._send(c, data)
                else:
                    await self._close(c)
            await self._wait_for(None)
            await asyncio.sleep(GRACE)
        finally:
            for c in self.conns.values():
                await self._close(c)
            await asyncio.gather(*(c.task for c in self.conns.values() if c.task), return_exceptions=True)
        self.result.differences.sort(key=lambda d: d.conn)
        return self.result

    async def _close(self, c: _Conn) -> None:
        if c.writer is None or c.closing:
            return
        c.closing = True
        if c.pending:
            c.writer.write(c.pending)
            c.pending = b""
        c.writer.close()
        try:
            await c.writer.wait_closed()
        except OSError:
            pass


async def replay(session: Session, host: str, port: int, pace: str = "fast", timeout: float = 5.0) -> ReplayResult:
    """Replay ``session`` against the server at ``host:port``; its differences, first per connection."""
    # a broken recording is refused before anything is sent
    expected = {conn.conn: expected_frames(conn) for conn in session.connections.values()}
    return await _Replay(session, expected, host, port, pace, timeout).run()
