"""The route protocol between the servers of a cluster: parsing its ops and encoding them.

Theory of operation
-------------------
Servers of one cluster talk over *route* connections (nats-server's ``route.go``). jsemu
speaks the form nats-server keeps for servers without route pooling: a single connection per
pair of servers, and the account named in every interest and message op:

* ``RS+ <account> <subject>`` and ``RS+ <account> <subject> <queue> <weight>``: the sender
  has interest (a queue group's weight is how many members it has there); ``RS- <account>
  <subject> [<queue>]``: the interest is gone;
* ``RMSG <account> <subject> [<reply>] <size>`` and, when the message goes to queue groups
  too, ``RMSG <account> <subject> + <reply> <queue>... <size>`` or ``RMSG <account>
  <subject> | <queue>... <size>``; ``HMSG`` is the same with a header length before the
  size;
* ``INFO``, ``CONNECT``, ``PING``, ``PONG``, ``+OK``, ``-ERR`` as on the client port.

A JetStream delivery (a message matched on a consumer's deliver subject or a pull request's
inbox but shown to the client with the stored message's subject) crosses a route as ``RMSG
<account> <deliver subject> <reply>@<shown subject> <size>``; the receiving server matches the
deliver subject and shows the part after the ``@``, but only for a ``$JS.ACK`` reply whose
``@`` follows its eight dots (:func:`js_ack_deliver_index`, nats-server's ``jsAckDeliverIdx``).

:class:`RouteParser` is sans-I/O: ``feed(bytes)`` returns the ops that are complete and
keeps the rest (a message split across reads waits for its payload). A line longer than
``max_control_line`` or an unknown op gives a final :class:`RouteError` with nats-server's
``-ERR`` text (``Unknown Protocol Operation``), malformed arguments a final one without
text (nats-server closes those routes silently); nothing after a ``RouteError`` is parsed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from .texts import ERR_UNKNOWN_OP

__all__ = [
    "OK_OP",
    "PING_OP",
    "PONG_OP",
    "ROUTE_MAX_CONTROL_LINE",
    "RouteConnect",
    "RouteErr",
    "RouteError",
    "RouteInfo",
    "RouteMsg",
    "RouteOp",
    "RouteParser",
    "RouteSub",
    "RouteUnsub",
    "encode_rmsg_head",
    "encode_rs_minus",
    "encode_rs_plus",
    "js_ack_deliver_index",
    "split_js_deliver",
]

#: nats-server allows routes 16 times a client's control line (``overMaxControlLineLimit``).
ROUTE_MAX_CONTROL_LINE = 16 * 4096


class RouteInfo(NamedTuple):
    info: bytes


class RouteConnect(NamedTuple):
    options: bytes


class RouteErr(NamedTuple):
    """``-ERR`` from the remote (its text, quotes included)."""

    text: bytes


class RouteSub(NamedTuple):
    """``RS+``: ``queue`` None for plain interest; ``weight`` members of a queue group."""

    account: bytes
    subject: bytes
    queue: bytes | None
    weight: int


class RouteUnsub(NamedTuple):
    account: bytes
    subject: bytes
    queue: bytes | None


class RouteMsg(NamedTuple):
    """``RMSG``/``HMSG``: ``hdr`` -1 without headers; ``queues`` the queue groups it is for."""

    account: bytes
    subject: bytes
    reply: bytes | None
    queues: tuple[bytes, ...]
    hdr: int
    msg: bytes


class RouteError(NamedTuple):
    """The stream cannot go on: ``text`` is the ``-ERR`` to send first (None: close silently)."""

    text: str | None


class _Keyword(NamedTuple):
    name: bytes


#: ``RMSG <account> <subject> [<reply>] <size>``: the shape of most routed messages.
_FAST_RMSG = re.compile(rb"RMSG ([^ \t\r\n]+) ([^ \t\r\n]+) (?:([^ \t\r\n|+]+) )?(\d{1,10})\r\n").match

PING_OP = _Keyword(b"PING")
PONG_OP = _Keyword(b"PONG")
OK_OP = _Keyword(b"+OK")

RouteOp = RouteInfo | RouteConnect | RouteErr | RouteSub | RouteUnsub | RouteMsg | RouteError | _Keyword


def _size(text: bytes) -> int:
    if not text.isdigit() or len(text) > 10:
        raise ValueError(text)
    return int(text)


def _msg_args(args: list[bytes], headers: bool) -> tuple[bytes, bytes, bytes | None, tuple[bytes, ...], int, int]:
    """``processRoutedMsgArgs`` / ``processRoutedHeaderMsgArgs`` of a route without pooling."""
    tail = 2 if headers else 1
    sizes = args[-tail:]
    head = args[:-tail]
    if len(head) < 2:
        raise ValueError("too few arguments")
    account, subject = head[0], head[1]
    reply: bytes | None = None
    queues: tuple[bytes, ...] = ()
    if len(head) == 3:
        reply = head[2]
    elif len(head) > 3:
        marker = head[2]
        if marker == b"+":
            reply = head[3]
            queues = tuple(head[4:])
        elif marker == b"|":
            queues = tuple(head[3:])
        else:
            raise ValueError("bad queue marker")
    size = _size(sizes[-1])
    hdr = _size(sizes[0]) if headers else -1
    if hdr > size:
        raise ValueError("header longer than message")
    return account, subject, reply, queues, hdr, size


#: The bytes a bulk parse looks at (one split), and the frames that must be left for it.
_BULK_WINDOW = 1 << 16
_BULK_MIN = 8


def _bulk_frames(buf: bytearray, pos: int, plen: int, max_payload: int, run: list[bytes]) -> int:
    """The complete ``RMSG`` frames from ``pos`` on whose control line is the one at
    ``pos`` up to its size (``plen`` bytes, ``RMSG <account> <subject> [<reply>] ``, which
    the caller's regex matched), read from one split of a window on CRLF: their payloads
    appended to ``run``, the bytes they take returned (0: fewer than ``_BULK_MIN``).

    The split gives the frames a sequential parse would exactly when every control line is
    the prefix and a size in digits and every payload part is that size long: then each
    payload is the ``size`` bytes after its control line and a CRLF follows it."""
    window = bytes(buf[pos : pos + _BULK_WINDOW])
    parts = window.split(b"\r\n")
    pairs = (len(parts) - 1) // 2  # complete (control line, payload) pairs
    lines = parts[0 : 2 * pairs : 2]
    if not lines:
        return 0
    first = lines[0]
    k = pairs
    same = lines.count(first) == pairs
    if same:  # one control line, one size: the usual run
        digits = first[plen:]
        payloads = parts[1 : 2 * k : 2]
        if digits.isdigit() and len(digits) <= 10:
            size = int(digits)
            if size <= max_payload and min(map(len, payloads)) == size == max(map(len, payloads)):
                run += payloads
                return k * (len(first) + size + 4)
    prefix = first[:plen]
    if not same:  # not all one size: how many share the prefix
        k = 0
        for line in lines:
            if line[:plen] != prefix:
                break
            k += 1
    if k < _BULK_MIN:
        return 0
    if k < pairs:
        lines = lines[:k]
    sizes = [line[plen:] for line in lines]
    if not b"".join(sizes).isdigit() or min(map(len, sizes)) < 1 or max(map(len, sizes)) > 10:
        return 0
    payloads = parts[1 : 2 * k : 2]
    lengths = list(map(len, payloads))
    wanted = list(map(int, sizes))
    if lengths != wanted:  # a payload holds a CRLF (or the window cut one): up to there
        k = 0
        while lengths[k] == wanted[k]:
            k += 1
        if k < _BULK_MIN:
            return 0
        lines, payloads, lengths = lines[:k], payloads[:k], lengths[:k]
    if max(lengths) > max_payload:
        return 0
    run += payloads
    return sum(map(len, lines)) + sum(lengths) + 4 * k


class RouteParser:
    """Bytes from a route in, route ops out (see the module docstring)."""

    __slots__ = ("_buf", "_failed", "max_control_line", "max_payload")

    def __init__(self, max_control_line: int = ROUTE_MAX_CONTROL_LINE, max_payload: int = 64 * 1024 * 1024) -> None:
        self._buf = bytearray()
        self._failed = False
        self.max_control_line = max_control_line
        self.max_payload = max_payload

    def feed(self, data: bytes) -> list[RouteOp]:
        """The ops complete in what has arrived so far, in order."""
        ops: list[RouteOp] = []
        add = ops.append

        def on_run(account: bytes, subject: bytes, reply: bytes | None, payloads: list[bytes]) -> bool:
            for msg in payloads:
                add(RouteMsg(account, subject, reply, (), -1, msg))
            return False

        def on_op(op: RouteOp) -> bool:
            add(op)
            return False

        self.feed_to(data, on_run, on_op)
        return ops

    def feed_to(
        self,
        data: bytes,
        on_run: Callable[[bytes, bytes, bytes | None, list[bytes]], object],
        on_op: Callable[[RouteOp], object],
    ) -> None:
        """:meth:`feed` without the list, for the receiving hot path: consecutive common
        ``RMSG`` frames (no queues, no headers) with one account, subject and reply go to
        ``on_run(account, subject, reply, payloads)`` as one run with no op built (a read of
        a busy route is mostly such runs), every other op to ``on_op``, in the order they
        came. A callback that returns true stops the parse (its connection closed)."""
        if self._failed:
            return
        buf = self._buf
        buf += data
        pos = 0
        n = len(buf)
        fast = _FAST_RMSG
        max_payload = self.max_payload
        key: tuple[bytes, bytes, bytes | None] | None = None  # the open run's
        run: list[bytes] = []
        bulk = True
        while pos < n:
            m = fast(buf, pos)
            if m is not None:  # the common op: RMSG without queues or headers (one regex call)
                size = int(m[4])
                start = m.end()
                if size > max_payload or (n >= start + size + 2 and buf[start + size : start + size + 2] != b"\r\n"):
                    if key is not None:  # what came before the bad frame still counts
                        on_run(*key, run)
                    self._fail(on_op, None)
                    return
                if n < start + size + 2:
                    break
                head = m.group(1, 2, 3)  # (account, subject, reply)
                if head != key:
                    if key is not None and on_run(*key, run):
                        key = None
                        break
                    key = head  # type: ignore[assignment]
                    run = []
                if bulk and n - pos > _BULK_MIN * (start - pos + size + 2):
                    taken = _bulk_frames(buf, pos, m.start(4) - pos, max_payload, run)
                    if taken:
                        pos += taken
                        continue
                    bulk = False  # this read is not made of runs: frame by frame from here on
                pos = start + size + 2
                run.append(bytes(buf[start : start + size]))
                continue
            if key is not None:  # the run ends before any other op
                stop = on_run(*key, run)
                key = None
                if stop:
                    break
            end = buf.find(b"\n", pos)
            if end < 0:
                if n - pos > self.max_control_line:
                    self._fail(on_op, ERR_UNKNOWN_OP)
                    return
                break
            line = bytes(buf[pos:end]).rstrip(b"\r")
            if len(line) > self.max_control_line:
                self._fail(on_op, ERR_UNKNOWN_OP)
                return
            keyword, _, rest = line.partition(b" ")
            kw = keyword.upper()
            if kw in (b"RMSG", b"HMSG"):
                try:
                    account, subject, reply, queues, hdr, size = _msg_args(rest.split(), kw == b"HMSG")
                except (ValueError, IndexError):
                    self._fail(on_op, None)
                    return
                if size > max_payload:
                    self._fail(on_op, None)
                    return
                start = end + 1
                if n < start + size + 2:
                    break  # the payload has not all arrived: keep the control line too
                if buf[start + size : start + size + 2] != b"\r\n":
                    self._fail(on_op, None)
                    return
                pos = start + size + 2
                if on_op(RouteMsg(account, subject, reply, queues, hdr, bytes(buf[start : start + size]))):
                    break
                continue
            pos = end + 1
            op = self._control(kw, rest)
            if op is None:
                self._fail(on_op, ERR_UNKNOWN_OP)
                return
            if isinstance(op, RouteError):
                self._failed = True
                buf.clear()
                on_op(op)
                return
            if on_op(op):
                break
        del buf[:pos]
        if key is not None:
            on_run(*key, run)

    def _fail(self, on_op: Callable[[RouteOp], object], text: str | None) -> None:
        self._failed = True
        self._buf.clear()
        on_op(RouteError(text))

    @staticmethod
    def _control(kw: bytes, rest: bytes) -> RouteOp | None:
        if kw == b"RS+":
            args = rest.split()
            if len(args) == 2:
                return RouteSub(args[0], args[1], None, 0)
            if len(args) == 4:
                try:
                    weight = _size(args[3])
                except ValueError:
                    return RouteError(None)
                return RouteSub(args[0], args[1], args[2], max(weight, 1))
            return RouteError(None)
        if kw == b"RS-":
            args = rest.split()
            if len(args) in (2, 3):
                return RouteUnsub(args[0], args[1], args[2] if len(args) == 3 else None)
            return RouteError(None)
        if kw == b"PING":
            return PING_OP
        if kw == b"PONG":
            return PONG_OP
        if kw == b"+OK":
            return OK_OP
        if kw == b"-ERR":
            return RouteErr(rest.strip())
        if kw == b"INFO":
            return RouteInfo(rest.strip())
        if kw == b"CONNECT":
            return RouteConnect(rest.strip())
        return None


def encode_rs_plus(account: bytes, subject: bytes, queue: bytes | None = None, weight: int = 0) -> bytes:
    if queue is None:
        return b"RS+ %b %b\r\n" % (account, subject)
    return b"RS+ %b %b %b %d\r\n" % (account, subject, queue, weight)


def encode_rs_minus(account: bytes, subject: bytes, queue: bytes | None = None) -> bytes:
    if queue is None:
        return b"RS- %b %b\r\n" % (account, subject)
    return b"RS- %b %b %b\r\n" % (account, subject, queue)


def encode_rmsg_head(
    account: bytes, subject: bytes, reply: bytes | None, queues: list[bytes], hdr: int, size: int, headers: bool
) -> bytes:
    """The control line of a message sent over a route (``msgHeaderForRouteOrLeaf``): to a
    route without header support, a message's headers are dropped (the caller sends only the
    payload, ``size`` minus ``hdr``)."""
    if not queues and hdr <= 0:
        if reply:
            return b"RMSG %b %b %b %d\r\n" % (account, subject, reply, size)
        return b"RMSG %b %b %d\r\n" % (account, subject, size)
    parts = [b"HMSG" if hdr > 0 and headers else b"RMSG", account, subject]
    if queues:
        if reply:
            parts += (b"+", reply)
        else:
            parts.append(b"|")
        parts += queues
    elif reply:
        parts.append(reply)
    if hdr > 0 and headers:
        parts.append(b"%d" % hdr)
        parts.append(b"%d" % size)
    elif hdr > 0:
        parts.append(b"%d" % (size - hdr))
    else:
        parts.append(b"%d" % size)
    return b" ".join(parts) + b"\r\n"


_JS_ACK = b"$JS.ACK."


def js_ack_deliver_index(reply: bytes) -> int:
    """Where the ``@`` of ``$JS.ACK.<stream>.<consumer>.<5 tokens>@<subject>`` is, or -1: the
    first ``@`` after eight dots (stream, consumer and subject tokens may hold ``@`` too)."""
    if len(reply) <= len(_JS_ACK) or not reply.startswith(_JS_ACK):
        return -1
    at = reply.find(b"@")
    while at >= 0:
        if reply.count(b".", 0, at) >= 8:
            return at
        at = reply.find(b"@", at + 1)
    return -1


def split_js_deliver(reply: bytes) -> tuple[bytes, bytes] | None:
    """A routed reply ``<ack reply>@<shown subject>`` as its two parts (None: not one), as
    ``processMsgResults`` takes it apart for a message from a route."""
    at = js_ack_deliver_index(reply)
    if at < 0 or at == len(reply) - 1:
        return None
    return reply[:at], reply[at + 1 :]
