"""Push parser for the client side of the NATS protocol (sans-I/O).

Theory of operation
-------------------
``Parser.feed_list(chunk)`` returns the ops that the bytes seen so far complete, in order
(``Parser.feed`` is the same as a generator). A chunk may end anywhere (inside a keyword, a ``\\r\\n`` or a payload); the unfinished tail
is kept for the next call. The rules reproduce nats-server's byte state machine
(``server/parser.go``) without walking byte by byte:

* keywords are case-insensitive and checked as soon as their bytes arrive, so ``PUX``
  fails before any newline is seen;
* ``PUB``/``HPUB``/``SUB``/``UNSUB``/``-ERR``/``HMSG`` need a space or tab after the keyword,
  ``CONNECT``/``INFO`` do not; the argument starts at the first byte that is not a space or
  tab (whatever it is) and runs to the next ``\\n``; if a ``\\r`` occurs in it, the last
  byte is dropped (the server's ``drop`` flag);
* ``PING``, ``PONG`` and ``+OK`` ignore everything up to their ``\\n``;
* an argument longer than ``max_control_line`` fails with ``maximum control line
  exceeded``, even before its newline arrives;
* a payload must be followed by exactly ``\\r\\n``.

A broken stream yields a final :class:`ProtocolError`: with the ``-ERR`` text the server
sends, or ``None`` where the server closes silently. Nothing is yielded after it.

The connection sets :attr:`Parser.headers` when it processes CONNECT, so ``feed_list``
stops after a CONNECT (``resume`` is then True and ``feed_list(b"")`` goes on): an ``HPUB``
after a ``CONNECT`` in the same chunk sees the new value.

Speed: a run of plain ``PUB`` ops (the bulk of any busy connection) is parsed by splitting a
window of the buffer on CRLF in one C call and checking each control line and payload
length; anything unusual in the run (tabs, a lone CR or LF, a payload holding CRLF, lower
case) stops the run and takes the general path, which gives the same result. The window
adapts: it doubles while runs fill it and shrinks when they break early, so mixed traffic
does not pay for splitting bytes it does not use.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import repeat

from .ops import Connect, Err, HMsg, Info, Ok, Op, Ping, Pong, ProtocolError, PubRun, Sub, Unsub
from .texts import ERR_MAX_CONTROL_LINE, ERR_MAX_PAYLOAD, ERR_UNKNOWN_OP

#: A PUB or HPUB comes out as a plain ``(subject, reply, hdr, msg)`` tuple, equal to the
#: ``Pub`` with those fields: cheaper to build and unpack on the hot path.
PubOp = tuple[bytes, bytes | None, int, bytes]
AnyOp = Op | PubOp

__all__ = ["ERR_MAX_CONTROL_LINE", "ERR_MAX_PAYLOAD", "ERR_UNKNOWN_OP", "MAX_CONTROL_LINE", "MAX_PAYLOAD", "Parser"]

MAX_CONTROL_LINE = 4096
MAX_PAYLOAD = 1024 * 1024


# Keyword -> how its argument is read.
_ARG_SPACE = 0  # needs a space/tab after the keyword, then an argument line
_ARG_OPTIONAL = 1  # optional spaces, then an argument line
_TO_NEWLINE = 2  # everything up to the newline is ignored

_KEYWORDS: dict[bytes, int] = {
    b"PUB": _ARG_SPACE,
    b"HPUB": _ARG_SPACE,
    b"HMSG": _ARG_SPACE,
    b"SUB": _ARG_SPACE,
    b"UNSUB": _ARG_SPACE,
    b"-ERR": _ARG_SPACE,
    b"CONNECT": _ARG_OPTIONAL,
    b"INFO": _ARG_OPTIONAL,
    b"PING": _TO_NEWLINE,
    b"PONG": _TO_NEWLINE,
    b"+OK": _TO_NEWLINE,
}
_BY_FIRST: dict[int, tuple[bytes, ...]] = {}
for _kw in _KEYWORDS:
    _BY_FIRST.setdefault(_kw[0], ())
    _BY_FIRST[_kw[0]] += (_kw,)
_MAX_KEYWORD = max(len(kw) for kw in _KEYWORDS)

# A complete, plainly spaced "PUB <subject> [reply] <size>\r\n" control line.
_FAST_PUB = re.compile(rb"PUB ([^ \t\r\n]+) (?:([^ \t\r\n]+) )?(\d{1,9})\r\n").match

# The size field as a client writes it (no leading zeros) for small payloads: comparing
# with it checks digits, length and value at once.
_SIZE_TEXT = [b"%d" % size for size in range(4096)]

# Bounds of the CRLF-split window for PUB runs (bytes).
_WINDOW_MIN = 1024
_WINDOW_START = 4096
_WINDOW_MAX = 1 << 18

_NEED_MORE = b""  # sentinel returned by _keyword when the chunk ends inside a keyword


def _keyword(head: bytes) -> bytes | None:
    """Match the upper-cased ``head`` against the keywords, as the byte machine would.

    Returns the keyword, ``_NEED_MORE`` if ``head`` is a proper prefix of one, or
    ``None`` for a protocol error.
    """
    candidates = _BY_FIRST.get(head[0])
    if candidates is None:
        return None
    for kw in candidates:
        if head.startswith(kw):
            return kw
    for kw in candidates:
        if kw.startswith(head):
            return _NEED_MORE
    return None


def _split_pub_args(arg: bytes) -> list[bytes]:
    """Split on spaces and tabs, as ``processPub`` does."""
    if b"\t" in arg:
        arg = arg.replace(b"\t", b" ")
    return [a for a in arg.split(b" ") if a]


def _split_args(arg: bytes) -> list[bytes]:
    """Split on spaces, tabs, CR and LF, as ``splitArg`` does for SUB and UNSUB."""
    for ch in (b"\t", b"\r", b"\n"):
        if ch in arg:
            arg = arg.replace(ch, b" ")
    return [a for a in arg.split(b" ") if a]


def parse_size(data: bytes) -> int:
    """nats-server's ``parseSize``: 1 to 9 ASCII digits, else -1."""
    if 0 < len(data) <= 9 and data.isdigit():
        return int(data)
    return -1


class Parser:
    """Incremental parser for one client connection."""

    __slots__ = ("_buf", "_dead", "_pub", "_window", "fast", "headers", "max_control_line", "max_payload", "resume")

    def __init__(
        self, max_control_line: int = MAX_CONTROL_LINE, max_payload: int = MAX_PAYLOAD, fast: bool = True
    ) -> None:
        self.max_control_line = max_control_line
        self.max_payload = max_payload
        self.headers = False
        #: Use the PUB-run fast path (tests turn it off to compare against the general path).
        self.fast = fast
        #: True when ``feed_list`` stopped after a CONNECT with bytes left to parse.
        self.resume = False
        self._buf = b""
        # A PUB/HPUB/HMSG whose control line is read, waiting for its payload:
        # (subject, reply, hdr, size) with subject None for a client HMSG.
        self._pub: tuple[bytes | None, bytes | None, int, int] | None = None
        self._dead = False
        self._window = _WINDOW_START

    def feed(self, data: bytes) -> Iterator[AnyOp]:
        """Yield every op completed by ``data``. Consume the iterator fully."""
        ops = self.feed_list(data)
        while True:
            for op in ops:
                if op.__class__ is PubRun:
                    yield from op.pubs()
                else:
                    yield op
            if not self.resume:
                return
            ops = self.feed_list(b"")

    def _pub_run(self, buf: bytes, pos: int, n: int, out: list[AnyOp]) -> int:
        """Parse the plain, complete ``PUB`` ops from ``pos`` on; returns the new position."""
        w = self._window
        window = buf[pos : pos + w] if pos or n > w else buf
        parts = window.split(b"\r\n")
        last = len(parts) - 1  # the part after the last CRLF is incomplete
        # No tab and no CR or LF outside the CRLFs anywhere in the window: no line has one.
        clean = 9 not in window and window.count(13) == last and window.count(10) == last
        mcl = self.max_control_line
        mp = self.max_payload
        if clean and last > 3:
            run = self._columns(parts, last // 2)
            if run is not None:
                out.append(run[0])
                self._grow()
                return pos + run[1]
        append = out.append
        i = 0
        while i + 1 < last:
            line = parts[i]
            f = line.split(b" ")
            k = len(f)
            if k == 4:
                verb, subject, reply, sz = f
                if not reply:
                    break
            elif k == 3:
                verb, subject, sz = f
                reply = None
            else:
                break
            payload = parts[i + 1]
            size = len(payload)
            # (``9 in line`` tests for a byte value; ``b"\t" in line`` would be far slower.)
            if (
                verb != b"PUB"
                or not subject
                or (sz != _SIZE_TEXT[size] if size < 4096 else not sz.isdigit() or len(sz) > 9 or size != int(sz))
                or (not clean and (9 in line or 13 in line or 10 in line))
                or size > mp
                or len(line) - 4 > mcl
            ):
                break
            append((subject, reply, -1, payload))
            pos += len(line) + size + 4
            i += 2
        # Grow the window while runs fill it, shrink it when they stop early.
        if i + 1 >= last:
            self._grow()
        elif w > _WINDOW_MIN:
            self._window = w // 2
        return pos

    def _grow(self) -> None:
        if self._window < _WINDOW_MAX:
            self._window *= 2

    def _columns(self, parts: list[bytes], m: int) -> tuple[PubRun, int] | None:
        """The first ``m`` (control line, payload) pairs of a clean window as one ``PubRun``,
        checked column by column (C loops); None if any pair is not a plain, valid ``PUB``
        (the per-op loop then finds where the run stops). Also returns the bytes used."""
        lines = parts[0 : 2 * m : 2]
        payloads = parts[1 : 2 * m : 2]
        # The spaces in each line (its fields less one), then every field of the run from
        # one split of the joined lines: columns are slices when all lines have as many.
        spaces = list(map(bytes.count, lines, repeat(b" ")))
        first = spaces[0]
        if spaces.count(first) != m and first in (2, 3):
            # Publishes with and without a reply (acks, then a pull request): the leading
            # ones of one form, if there are a few.
            k = 1
            while spaces[k] == first:
                k += 1
            if k < 3:
                return None
            m = k
            del lines[m:], payloads[m:], spaces[m:]
        if first not in (2, 3):
            return None
        fields = b" ".join(lines).split(b" ")
        if first == 2:
            verbs, subjects, sizes = fields[0::3], fields[1::3], fields[2::3]
            replies: list[bytes | None] = [None] * m
        else:
            verbs, subjects, reply_col, sizes = fields[0::4], fields[1::4], fields[2::4], fields[3::4]
            if b"" in reply_col:
                return None
            replies = list(reply_col)
        lens = list(map(len, payloads))
        biggest = max(lens)
        if (
            verbs.count(b"PUB") != m
            or b"" in subjects
            or biggest >= len(_SIZE_TEXT)
            or biggest > self.max_payload
            or list(map(_SIZE_TEXT.__getitem__, lens)) != sizes
            or max(map(len, lines)) - 4 > self.max_control_line
        ):
            return None
        used = sum(map(len, lines)) + sum(lens) + 4 * m
        return PubRun(subjects, replies, payloads), used

    def feed_list(self, data: bytes) -> list[AnyOp]:
        """Every op completed by ``data`` (up to and including a CONNECT; see ``resume``)."""
        out: list[AnyOp] = []
        self.resume = False
        if self._dead:
            return out
        buf = self._buf + data if self._buf else data
        self._buf = b""
        n = len(buf)
        pos = 0
        mcl = self.max_control_line
        append = out.append
        fast = self.fast
        while pos < n:
            pending = self._pub
            if pending is not None:
                subject, reply, hdr, size = pending
                end = pos + size
                if end + 2 > n:
                    # Check the terminator bytes that have already arrived.
                    if (end < n and buf[end] != 13) or (end + 1 < n and buf[end + 1] != 10):
                        append(self._fail(ERR_UNKNOWN_OP))
                        return out
                    break
                if buf[end] != 13 or buf[end + 1] != 10:
                    append(self._fail(ERR_UNKNOWN_OP))
                    return out
                self._pub = None
                if subject is None:
                    append(HMsg())
                else:
                    append((subject, reply, hdr, buf[pos:end]))
                pos = end + 2
                continue

            if fast and buf.startswith(b"PUB ", pos):
                after = self._pub_run(buf, pos, n, out)
                if after != pos:
                    pos = after
                    continue

            m = _FAST_PUB(buf, pos)
            if m is not None:
                # The common, well-formed, complete PUB; anything unusual (tabs, extra
                # spaces, a CR in the line, a partial payload) takes the general path
                # below, which gives the same result.
                start = m.end()
                end = start + int(m.group(3))
                if end + 2 <= n and buf[end] == 13 and buf[end + 1] == 10 and start - pos - 6 <= mcl:
                    size = end - start
                    if size <= self.max_payload:
                        append((m.group(1), m.group(2), -1, buf[start:end]))
                        pos = end + 2
                        continue

            head = buf[pos : pos + _MAX_KEYWORD].upper()
            kw = _keyword(head)
            if kw is None:
                append(self._fail(ERR_UNKNOWN_OP))
                return out
            if kw is _NEED_MORE:
                break
            kind = _KEYWORDS[kw]
            start = pos + len(kw)

            if kind == _TO_NEWLINE:
                nl = buf.find(b"\n", start)
                if nl < 0:
                    break
                pos = nl + 1
                if kw == b"PING":
                    append(Ping())
                elif kw == b"PONG":
                    append(Pong())
                else:
                    append(Ok())
                continue

            if kind == _ARG_SPACE:
                if start >= n:
                    break
                if buf[start] not in (32, 9):
                    append(self._fail(ERR_UNKNOWN_OP))
                    return out
                start += 1
            while start < n and buf[start] in (32, 9):
                start += 1
            if start >= n:
                break
            # The byte at `start` is the first argument byte, whatever it is.
            nl = buf.find(b"\n", start + 1)
            if nl < 0:
                # Checked before the newline arrives, so a client cannot make us buffer
                # without bound; a prefix over the limit means the whole line is too.
                if n - start - (buf.find(b"\r", start + 1) >= 0) > mcl:
                    append(self._fail(ERR_MAX_CONTROL_LINE))
                    return out
                break
            if buf.find(b"\r", start + 1, nl) >= 0:
                arg = buf[start : nl - 1]
            else:
                arg = buf[start:nl]
            if len(arg) > mcl:
                append(self._fail(ERR_MAX_CONTROL_LINE))
                return out
            pos = nl + 1

            if kw == b"PUB":
                args = _split_pub_args(arg)
                if len(args) == 2:
                    subject, reply, sizeb = args[0], None, args[1]
                elif len(args) == 3:
                    subject, reply, sizeb = args
                else:
                    append(self._fail(None))
                    return out
                size = parse_size(sizeb)
                if size < 0:
                    append(self._fail(None))
                    return out
                if size > self.max_payload:
                    append(self._fail(ERR_MAX_PAYLOAD))
                    return out
                self._pub = (subject, reply, -1, size)
            elif kw == b"HPUB":
                if not self.headers:
                    append(self._fail(None))
                    return out
                args = _split_pub_args(arg)
                if len(args) == 3:
                    subject, reply, hdrb, sizeb = args[0], None, args[1], args[2]
                elif len(args) == 4:
                    subject, reply, hdrb, sizeb = args
                else:
                    append(self._fail(None))
                    return out
                hdr = parse_size(hdrb)
                size = parse_size(sizeb)
                if hdr < 0 or size < 0 or hdr > size:
                    append(self._fail(None))
                    return out
                if size > self.max_payload:
                    failed = self._fail(ERR_MAX_PAYLOAD)
                    if hdr > 0 and pos < n:  # what of the header block came with it
                        failed.oversized = (subject, size, buf[pos : pos + hdr])
                    append(failed)
                    return out
                self._pub = (subject, reply, hdr, size)
            elif kw == b"SUB":
                args = _split_args(arg)
                if len(args) == 2:
                    append(Sub(args[0], None, args[1]))
                elif len(args) == 3:
                    append(Sub(args[0], args[1], args[2]))
                else:
                    append(self._fail(None))
                    return out
            elif kw == b"UNSUB":
                args = _split_args(arg)
                if len(args) == 1:
                    append(Unsub(args[0], -1))
                elif len(args) == 2:
                    append(Unsub(args[0], parse_size(args[1])))
                else:
                    append(self._fail(None))
                    return out
            elif kw == b"CONNECT":
                append(Connect(arg))
            elif kw == b"INFO":
                append(Info(arg))
            elif kw == b"HMSG":
                # A client HMSG is never interpreted: the server expects an empty payload.
                self._pub = (None, None, 0, 0)
            else:  # -ERR
                append(Err(arg))
                # The server closes on a client -ERR; parse nothing further.
                self._dead = True
                return out
            if kw == b"CONNECT" and pos < n:
                # Stop here: the connection must apply CONNECT (headers) before the rest is parsed.
                self._buf = buf[pos:]
                self.resume = True
                return out

        if pos < n and not self._dead:
            self._buf = buf[pos:]
        return out

    def _fail(self, error: str | None) -> ProtocolError:
        self._dead = True
        self._buf = b""
        self._pub = None
        return ProtocolError(error)
