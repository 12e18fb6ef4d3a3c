"""Drive any NATS server (host, port) through a Direct Get scenario over raw sockets.

:func:`run_scenario` returns, for each :class:`~.model.Get` step, the exact reply frames as
normalised strings. Only these are normalised:

* the request's inbox and the subscription id in ``MSG``/``HMSG`` control lines become
  ``<INBOX>`` and ``<SID>`` (only when they are the expected ones);
* a ``Nats-Time-Stamp`` header value equal to the stored timestamp of seq N (read with
  STREAM.MSG.GET on the server under test) becomes ``<ts:N>``; the control line's byte counts
  then leave out the value's length and say so (``HMSG <INBOX> <SID> 84+ts 86+ts``);
  a timestamp that matches no stored message stays as it is and so shows up as a difference;
* the same for a JSON string value (in a JSON payload) that equals a stored timestamp;
* a payload longer than :data:`BIG` bytes is written as ``<N bytes sha256:...>``.

Everything else is kept byte for byte (header order, CRLFs, status lines, payload bytes); a
frame is written as its bytes decoded as latin-1, so the JSON fixture escapes binary bytes.

How the frames of one request are collected: until a status reply (any ``NATS/1.0 <code>``,
including ``204 EOB``), or a data reply when the request cannot be a batch, or else a quiet
period; then a PING/PONG round trip, whose frames before the PONG are added (they would be
extra replies). Each request has its own inbox, so a late frame is never taken for the reply
to a later request: it is kept, with its raw inbox, in the later request's frames.

The setup calls (stream create, publish, STREAM.MSG.GET for the timestamps, delete, purge) are
checked as strictly: each batch of them ends with a PING/PONG round trip, and a second reply to
an inbox, a reply to an inbox not asked for, or any other frame raises :class:`ScenarioError`.
"""

from __future__ import annotations

import asyncio
import calendar
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from ..protocol.frames import FrameReader, parse_frame
from .model import Delete, Get, Pub, Purge, Scenario, Sleep, Update

__all__ = ["CONNECTS", "ScenarioError", "format_ts", "parse_ts", "run_on", "run_scenario"]

#: Seconds to wait for the first reply frame of a request that should be answered.
FIRST_TIMEOUT = 2.0
#: Quiet period that ends a reply without a terminating frame (or an expected silence).
QUIET = 0.3
#: Longer payloads are recorded as their size and digest.
BIG = 256

CONNECTS: dict[str, dict[str, Any]] = {
    "default": {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1},
    "headers": {"verbose": False, "pedantic": False, "headers": True, "no_responders": False, "protocol": 1},
    "plain": {"verbose": False, "pedantic": False, "headers": False, "protocol": 1},
    "pedantic": {"verbose": False, "pedantic": True, "headers": True, "no_responders": True, "protocol": 1},
}
INBOX_SID = b"1"
API_SID = b"2"
_TEMPLATE = re.compile(r"\{ts:(\d+)([+-]\d+)?(!9)?(?:@([+-]\d\d:\d\d))?\}")
_TS_VALUE = re.compile(rb"^(Nats-Time-Stamp: )([^\r\n]*)$")
_JSON_TS = re.compile(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"')


class ScenarioError(AssertionError):
    """A setup step (create, publish, delete...) did not do what the scenario needs."""


# --- times ------------------------------------------------------------------------------------


def parse_ts(text: str) -> int:
    """``YYYY-MM-DDTHH:MM:SS[.f]Z`` (as the server writes) to Unix nanoseconds, exactly."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z", text)
    if m is None:
        raise ValueError(text)
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    return secs * 1_000_000_000 + int((m.group(7) or "").ljust(9, "0"))


def format_ts(ns: int, offset: str = "", pad: bool = False) -> str:
    """Go's RFC3339Nano: trimmed fraction, ``Z`` or the given ``±hh:mm`` offset."""
    shift = 0
    if offset:
        sign = 1 if offset[0] == "+" else -1
        shift = sign * (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60)
    secs, frac = divmod(ns, 1_000_000_000)
    t = time.gmtime(secs + shift)
    text = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    if pad:
        text += f".{frac:09d}"
    elif frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + (offset or "Z")


# --- connection -------------------------------------------------------------------------------


class Conn:
    """One raw client connection; frames are read whole (MSG/HMSG with their payload)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.frames = FrameReader()
        self.eof = False
        self.connected = False

    @classmethod
    async def open(cls, host: str, port: int, connect: dict[str, Any]) -> Conn:
        reader, writer = await asyncio.open_connection(host, port, limit=1 << 24)
        conn = cls(reader, writer)
        first = await conn.frame(5.0)
        if first is None or not first.startswith(b"INFO "):
            raise ScenarioError(f"no INFO from {host}:{port}: {first!r}")
        conn.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\n")
        conn.connected = True
        return conn

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    def _take(self) -> bytes | None:
        frame = self.frames.next()
        return None if frame is None else frame.raw

    async def frame(self, timeout: float) -> bytes | None:
        """The next frame (server PINGs are answered and skipped, so are INFOs after the first), or None after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            got = self._take()
            if got == b"PING\r\n":
                self.send(b"PONG\r\n")
                continue
            if got is not None and got.startswith(b"INFO ") and self.connected:
                continue  # async INFO (nats-server 2.15 sends one after CONNECT)
            if got is not None:
                return got
            left = deadline - loop.time()
            if self.eof or left <= 0:
                return None
            try:
                data = await asyncio.wait_for(self.reader.read(1 << 20), left)
            except TimeoutError:
                return None
            except ConnectionError:
                data = b""
            if not data:
                self.eof = True
            self.frames.feed(data)

    async def roundtrip(self, timeout: float = 10.0) -> list[bytes]:
        """PING; the frames that come before the PONG."""
        self.send(b"PING\r\n")
        out: list[bytes] = []
        while True:
            got = await self.frame(timeout)
            if got is None:
                out.append(b"<connection closed>" if self.eof else b"<no PONG>")
                return out
            if got == b"PONG\r\n":
                return out
            out.append(got)

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass


def pub_bytes(subject: str, reply: str | None, payload: bytes, hdr: bytes | None) -> bytes:
    rep = b" " + reply.encode() if reply else b""
    subj = subject.encode()
    if hdr is None:
        return b"PUB %s%s %d\r\n%s\r\n" % (subj, rep, len(payload), payload)
    return b"HPUB %s%s %d %d\r\n%s%s\r\n" % (subj, rep, len(hdr), len(hdr) + len(payload), hdr, payload)


def split_frame(frame: bytes) -> tuple[list[bytes], bytes, bytes] | None:
    """``(control args, header block, payload)`` of a MSG/HMSG frame (header empty for MSG)."""
    parsed = parse_frame(frame)
    if parsed is None or not parsed.is_msg:
        return None
    return list(parsed.args), parsed.header, parsed.payload


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Run:
    host: str
    port: int
    main: Conn | None = None
    conns: dict[str, Conn] = field(default_factory=dict)
    #: Stored timestamps by (stream, seq): as the server writes them, and in ns.
    ts_text: dict[tuple[str, int], str] = field(default_factory=dict)
    ts_ns: dict[tuple[str, int], int] = field(default_factory=dict)
    last_seq: dict[str, int] = field(default_factory=dict)
    #: Published (seq, rough size) whose timestamps are still to be read, by stream.
    unfetched: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    first_timeout: float = FIRST_TIMEOUT
    quiet: float = QUIET
    n_api: int = 0
    n_req: int = 0

    async def conn(self, kind: str) -> Conn:
        if kind not in self.conns:
            c = await Conn.open(self.host, self.port, CONNECTS[kind])
            c.send(b"SUB _INBOX.%s.* %s\r\n" % (kind.encode(), INBOX_SID))
            if kind == "default":
                c.send(b"SUB _API.> " + API_SID + b"\r\n")
            extra = await c.roundtrip()
            if extra:
                raise ScenarioError(f"unexpected frames on connect ({kind}): {extra!r}")
            self.conns[kind] = c
        return self.conns[kind]

    # API calls on the default connection, replies keyed by their inbox.

    async def _collect(self, inboxes: list[bytes], timeout: float = 20.0) -> list[bytes]:
        """The reply payloads to ``inboxes``, in order, then a PING/PONG round trip: a second
        reply to an inbox, a reply to no request of ours or any other frame is an error."""
        c = await self.conn("default")
        want = set(inboxes)
        got_by_inbox: dict[bytes, bytes] = {}
        while len(got_by_inbox) < len(want):
            got = await c.frame(timeout)
            if got is None:
                raise ScenarioError(f"API replies missing: {sorted(want - set(got_by_inbox))[:5]!r}")
            parts = split_frame(got)
            if parts is None:
                raise ScenarioError(f"unexpected frame on the API connection: {got!r}")
            inbox = parts[0][0]
            if inbox not in want or inbox in got_by_inbox:
                raise ScenarioError(f"unexpected API reply (duplicate or unsolicited): {got!r}")
            got_by_inbox[inbox] = parts[2]
        extra = await c.roundtrip()
        if extra:
            raise ScenarioError(f"unexpected frames after the API replies: {extra[:3]!r}")
        return [got_by_inbox[i] for i in inboxes]

    async def api_many(self, calls: list[tuple[str, bytes, bytes | None]]) -> list[bytes]:
        """Pipelined requests on the default connection; the reply payloads in order."""
        c = await self.conn("default")
        inboxes = []
        out = bytearray()
        for subject, payload, hdr in calls:
            self.n_api += 1
            inbox = f"_API.{self.n_api}"
            inboxes.append(inbox.encode())
            out += pub_bytes(subject, inbox, payload, hdr)
            if len(out) > 1 << 20:
                c.send(bytes(out))
                out.clear()
                await c.writer.drain()
        c.send(bytes(out))
        await c.writer.drain()
        return await self._collect(inboxes)

    async def api(self, subject: str, request: Any = None) -> dict[str, Any]:
        payload = b"" if request is None else json.dumps(request).encode()
        (reply,) = await self.api_many([(subject, payload, None)])
        result: dict[str, Any] = json.loads(reply)
        if "error" in result:
            raise ScenarioError(f"{subject} {payload!r}: {result['error']}")
        return result

    async def publish(self, pubs: list[Pub]) -> None:
        acks = await self.api_many([(p.subject, p.payload, p.hdr) for p in pubs])
        for pub, raw in zip(pubs, acks, strict=True):
            ack = json.loads(raw)
            if "error" in ack or "seq" not in ack or ack.get("duplicate"):
                raise ScenarioError(f"publish {pub!r} not stored: {raw!r}")
            stream, seq = ack["stream"], int(ack["seq"])
            self.last_seq[stream] = max(self.last_seq.get(stream, 0), seq)
            self.unfetched.setdefault(stream, []).append((seq, len(pub.subject) + len(pub.payload) + 100))

    async def fetch_times(self) -> None:
        """The stored timestamp of every message published since the last call.

        Pipelined, in chunks of about 256 KiB of message data, so that the replies never
        pile up to a slow-consumer cut on a server with a small ``max_pending``.
        """
        chunks: list[list[tuple[str, int]]] = [[]]
        size = 0
        for stream, seqs in self.unfetched.items():
            for seq, n in seqs:
                if chunks[-1] and size + n > 256 * 1024:
                    chunks.append([])
                    size = 0
                chunks[-1].append((stream, seq))
                size += n
        for chunk in chunks:
            await self._fetch_times(chunk)
        self.unfetched.clear()

    async def _fetch_times(self, chunk: list[tuple[str, int]]) -> None:
        calls: list[tuple[str, bytes, bytes | None]] = [
            (f"$JS.API.STREAM.MSG.GET.{stream}", b'{"seq":%d}' % seq, None) for stream, seq in chunk
        ]
        for (stream, seq), raw in zip(chunk, await self.api_many(calls), strict=True):
            reply = json.loads(raw)
            msg = reply.get("message")
            if msg is None:
                if reply.get("error", {}).get("err_code") == 10037:
                    continue  # already gone (rollup, limits): no timestamp to know
                raise ScenarioError(f"STREAM.MSG.GET {stream} {seq}: {raw!r}")
            self.ts_text[stream, seq] = msg["time"]
            self.ts_ns[stream, seq] = parse_ts(msg["time"])

    # Direct Get requests.

    def resolve(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            key = ("S", int(m.group(1)))
            if key not in self.ts_ns:
                raise ScenarioError(f"template {m.group(0)}: no timestamp for seq {key[1]} of S")
            return format_ts(self.ts_ns[key] + int(m.group(2) or 0), m.group(4) or "", bool(m.group(3)))

        return _TEMPLATE.sub(one, text)

    async def request(self, get: Get) -> list[str]:
        c = await self.conn(get.conn)
        self.n_req += 1
        inbox = f"_INBOX.{get.conn}.{self.n_req}"
        payload = get.body if isinstance(get.body, bytes) else self.resolve(get.body).encode()
        c.send(pub_bytes(get.request_subject(), inbox if get.reply else None, payload, get.hdr))
        batchy = might_batch(payload)
        frames: list[bytes] = []
        timeout = self.quiet if get.silent else self.first_timeout
        while True:
            got = await c.frame(timeout)
            if got is None:
                break
            frames.append(got)
            parts = split_frame(got)
            if parts is None:  # -ERR, +OK: a reply may still follow (nats-server sends both)
                timeout = self.quiet
                continue
            if parts[1].startswith(b"NATS/1.0 ") or get.conn == "plain":
                if get.conn == "plain":
                    timeout = self.quiet
                    continue
                break
            if not batchy:
                break
            timeout = self.quiet
        frames += await c.roundtrip()
        return [self.normalise(f, inbox.encode()) for f in frames]

    # Normalisation.

    def ts_token(self, value: bytes, prefer: tuple[str, int] | None) -> str | None:
        text = value.decode("latin-1")
        if prefer is not None and self.ts_text.get(prefer) == text:
            key = prefer
        else:
            found = [k for k in sorted(self.ts_text) if self.ts_text[k] == text]
            if not found:
                return None
            key = found[0]
        return f"<ts:{key[1]}>" if key[0] == "S" else f"<ts:{key[0]}:{key[1]}>"

    def normalise(self, frame: bytes, inbox: bytes) -> str:
        parts = split_frame(frame)
        if parts is None:
            return frame.decode("latin-1")
        args, hdr, payload = parts
        hmsg = frame.startswith(b"HMSG")
        subject = "<INBOX>" if args[0] == inbox else args[0].decode("latin-1")
        sid = "<SID>" if args[1] == INBOX_SID else args[1].decode("latin-1")
        middle = [a.decode("latin-1") for a in args[2 : len(args) - (2 if hmsg else 1)]]
        notes = []
        hcut = hts = 0
        if hmsg:
            if not hdr.endswith(b"\r\n\r\n") or hdr.find(b"\r\n\r\n") != len(hdr) - 4:
                notes.append("!BAD-HDR-LEN")
            lines = hdr.split(b"\r\n")
            stream = [ln[len(b"Nats-Stream: ") :] for ln in lines if ln.startswith(b"Nats-Stream: ")]
            seqs = [ln[len(b"Nats-Sequence: ") :] for ln in lines if ln.startswith(b"Nats-Sequence: ")]
            prefer = None
            if stream and seqs and seqs[-1].isdigit():
                prefer = (stream[-1].decode("latin-1"), int(seqs[-1]))
            for i, line in enumerate(lines):
                m = _TS_VALUE.match(line)
                token = self.ts_token(m.group(2), prefer) if m else None
                if m and token is not None:
                    hcut += len(m.group(2))
                    hts += 1
                    lines[i] = m.group(1) + token.encode()
            hdr = b"\r\n".join(lines)
        text, pcut, pts = self.normalise_payload(payload)
        raw_hlen, raw_total = len(parts[1]), len(parts[1]) + len(payload)
        sizes = [f"{raw_total - hcut - pcut}{_ts_suffix(hts + pts)}"]
        if hmsg:
            sizes.insert(0, f"{raw_hlen - hcut}{_ts_suffix(hts)}")
        control = " ".join(["HMSG" if hmsg else "MSG", subject, sid, *middle, *sizes, *notes])
        return control + "\r\n" + hdr.decode("latin-1") + text + "\r\n"

    def normalise_payload(self, payload: bytes) -> tuple[str, int, int]:
        """The payload as text, with stored timestamps in JSON replaced (and how many bytes
        and timestamps that took out)."""
        if len(payload) > BIG:
            return f"<{len(payload)} bytes sha256:{hashlib.sha256(payload).hexdigest()[:16]}>", 0, 0
        text = payload.decode("latin-1")
        if not text.startswith("{"):
            return text, 0, 0
        try:
            json.loads(payload)
        except ValueError:
            return text, 0, 0
        cut = 0
        count = 0

        def one(m: re.Match[str]) -> str:
            nonlocal cut, count
            token = self.ts_token(m.group(1).encode(), None)
            if token is None:
                return m.group(0)
            cut += len(m.group(1))
            count += 1
            return f'"{token}"'

        return _JSON_TS.sub(one, text), cut, count

    async def close(self) -> None:
        for c in self.conns.values():
            await c.close()


def _ts_suffix(n: int) -> str:
    return "" if n == 0 else "+ts" if n == 1 else f"+{n}ts"


def might_batch(payload: bytes) -> bool:
    """Whether a request body could ask for a batch or multi reply (several frames).

    Go matches JSON keys case-insensitively with Unicode folding and after unescaping, so
    look at the raw text and at the decoded keys, both case-folded.
    """
    words = ("batch", "multi_last")
    text = payload.decode("utf-8", "replace").casefold()
    if any(w in text for w in words):
        return True
    try:
        value = json.loads(payload)
    except ValueError:
        return False
    return isinstance(value, dict) and any(w in str(k).casefold() for k in value for w in words)


async def run_on(run: Run, scenario: Scenario, expected: list[list[str]] | None = None) -> list[list[str]]:
    for config in scenario.streams:
        await run.api(f"$JS.API.STREAM.CREATE.{config['name']}", config)
    results: list[list[str]] = []
    pubs: list[Pub] = []
    for step in [*scenario.steps, None]:
        if isinstance(step, Pub):
            pubs.append(step)
            continue
        if pubs:
            await run.publish(pubs)
            pubs = []
            await run.fetch_times()
        if step is None:
            break
        if isinstance(step, Get):
            got = await run.request(step)
            results.append(got)
            if expected is not None and (len(results) > len(expected) or got != expected[len(results) - 1]):
                return results  # fail fast: the caller compares and shows the difference
        elif isinstance(step, Delete):
            reply = await run.api(f"$JS.API.STREAM.MSG.DELETE.{step.stream}", {"seq": step.seq})
            if not reply.get("success"):
                raise ScenarioError(f"delete {step.seq}: {reply!r}")
        elif isinstance(step, Purge):
            await run.api(f"$JS.API.STREAM.PURGE.{step.stream}", step.request)
        elif isinstance(step, Update):
            await run.api(f"$JS.API.STREAM.UPDATE.{step.config['name']}", step.config)
        elif isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
    return results


async def run_scenario(
    host: str,
    port: int,
    scenario: Scenario,
    expected: list[list[str]] | None = None,
    first_timeout: float = FIRST_TIMEOUT,
) -> list[list[str]]:
    """Run ``scenario`` against the server at ``host:port``; the normalised reply frames of
    each request. With ``expected``, stop at the first request whose reply differs.
    ``first_timeout``: how long to wait for the first frame of a reply (an in-process jsemu
    answers at once, so a short wait there makes a missing reply cheap)."""
    run = Run(host, port, first_timeout=first_timeout)
    try:
        return await run_on(run, scenario, expected)
    finally:
        await run.close()
