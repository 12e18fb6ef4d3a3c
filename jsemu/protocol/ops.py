"""Client operations produced by the parser.

Plain ``__slots__`` classes rather than dataclasses: one is built per protocol op on the
hot path, so construction cost matters.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "Connect",
    "Err",
    "HMsg",
    "Info",
    "Ok",
    "Op",
    "Ping",
    "Pong",
    "ProtocolError",
    "Pub",
    "PubRun",
    "Sub",
    "Unsub",
]


class Op:
    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, name) for name in self.__slots__)))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Connect(Op):
    """``CONNECT <json>``; the JSON is decoded by the connection, which owns the options."""

    __slots__ = ("options",)

    def __init__(self, options: bytes) -> None:
        self.options = options


class Info(Op):
    """``INFO <json>`` sent by a client: only checked for being decodable."""

    __slots__ = ("info",)

    def __init__(self, info: bytes) -> None:
        self.info = info


class Pub(NamedTuple):
    """PUB or HPUB. ``msg`` is the header block followed by the payload; ``hdr`` is the
    header length, -1 for PUB (HPUB with a zero header length gives 0).

    A named tuple, not an ``Op``: the parser hands out plain ``(subject, reply, hdr, msg)``
    tuples (equal to the ``Pub``), which cost least to build and unpack.
    """

    subject: bytes
    reply: bytes | None
    hdr: int
    msg: bytes


class PubRun(Op):
    """Consecutive plain ``PUB`` ops (no headers) of one read, as columns: what a busy
    publisher sends, handed over without a tuple per message. ``pubs()`` gives the ops."""

    __slots__ = ("payloads", "replies", "subjects")

    def __init__(self, subjects: list[bytes], replies: list[bytes | None], payloads: list[bytes]) -> None:
        self.subjects = subjects
        self.replies = replies
        self.payloads = payloads

    def pubs(self) -> list[tuple[bytes, bytes | None, int, bytes]]:
        return [(s, r, -1, p) for s, r, p in zip(self.subjects, self.replies, self.payloads)]


class HMsg(Op):
    """``HMSG ...`` from a client. The server parses it as a zero-length message with no
    subject: nothing is delivered, but a verbose client still gets ``+OK``."""

    __slots__ = ()


class Sub(Op):
    __slots__ = ("queue", "sid", "subject")

    def __init__(self, subject: bytes, queue: bytes | None, sid: bytes) -> None:
        self.subject = subject
        self.queue = queue
        self.sid = sid


class Unsub(Op):
    """``max`` is -1 when absent or unparseable (which unsubscribes at once, like Go)."""

    __slots__ = ("max", "sid")

    def __init__(self, sid: bytes, max: int) -> None:
        self.sid = sid
        self.max = max


class Ping(Op):
    __slots__ = ()


class Pong(Op):
    __slots__ = ()


class Ok(Op):
    __slots__ = ()


class Err(Op):
    """``-ERR`` from a client: the server closes the connection."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text


class ProtocolError(Op):
    """The stream is broken: send ``-ERR '<error>'`` if ``error`` is set, then close.

    The parser yields nothing after this op.
    """

    __slots__ = ("error", "oversized")

    def __init__(self, error: str | None) -> None:
        self.error = error
        #: An HPUB over the maximum payload: its subject, its size and the header bytes that
        #: came with its control line (a trace request there is answered; ``server/msg_trace.py``).
        self.oversized: tuple[bytes, int, bytes] | None = None
