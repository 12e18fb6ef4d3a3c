"""The client side of the wire, sans-I/O: feed the bytes a server sent, take whole frames.

One reader for every raw client jsemu ships or tests with (the conformance runner, the
pipeline client, the benchmark client, ``tests/support/rawclient.py``): a frame is a control line
(``INFO``, ``PING``, ``PONG``, ``+OK``, ``-ERR``, ...) or a ``MSG``/``HMSG`` with its
payload, the header block and the body kept apart. The exact bytes received stay
available (:attr:`Frame.raw`), since byte-for-byte comparison is what the tests do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Frame", "FrameReader", "parse_frame"]

_CRLF = b"\r\n"


@dataclass(frozen=True, slots=True)
class Frame:
    """One server frame. ``op`` is the control line's first word (``b"MSG"``, ``b"PING"``, ...);
    ``args`` the rest of the line split on blanks; ``header`` an HMSG's header block (``b""``
    otherwise) and ``payload`` the message body (``b""`` for control lines)."""

    op: bytes
    args: tuple[bytes, ...]
    header: bytes
    payload: bytes
    raw: bytes

    @property
    def is_msg(self) -> bool:
        return self.op == b"MSG" or self.op == b"HMSG"

    @property
    def subject(self) -> bytes:
        return self.args[0]

    @property
    def sid(self) -> bytes:
        return self.args[1]

    @property
    def reply(self) -> bytes:
        """The reply subject of a MSG/HMSG, ``b""`` when it has none."""
        n = len(self.args) - (4 if self.op == b"HMSG" else 3)
        return self.args[2] if n == 1 else b""

    @property
    def line(self) -> bytes:
        """The control line without its CRLF (``-ERR 'text'``, ``INFO {...}``)."""
        return self.raw[: self.raw.find(_CRLF)]


class FrameReader:
    """Bytes in (:meth:`feed`), frames out (:meth:`next`, :meth:`frames`)."""

    __slots__ = ("_buf", "_pos")

    def __init__(self) -> None:
        self._buf = b""
        self._pos = 0

    def feed(self, data: bytes) -> None:
        if self._pos:
            self._buf = self._buf[self._pos :] + data
            self._pos = 0
        else:
            self._buf += data

    @property
    def pending(self) -> int:
        """Bytes received that are not yet part of a whole frame."""
        return len(self._buf) - self._pos

    def next(self) -> Frame | None:
        """The next whole frame, or None until more bytes come. ValueError for a MSG/HMSG
        control line whose sizes are not numbers."""
        buf, pos = self._buf, self._pos
        nl = buf.find(_CRLF, pos)
        if nl < 0:
            return None
        line = buf[pos:nl]
        parts = line.split()
        op = parts[0] if parts else b""
        end = nl + 2
        header = payload = b""
        if op == b"MSG" or op == b"HMSG":
            size = int(parts[-1])
            if size < 0:
                raise ValueError(f"negative size in {line!r}")
            body_end = end + size
            if len(buf) < body_end + 2:
                return None
            body = buf[end:body_end]
            if op == b"HMSG":
                hlen = int(parts[-2])
                header, payload = body[:hlen], body[hlen:]
            else:
                payload = body
            end = body_end + 2
        self._pos = end
        return Frame(op, tuple(parts[1:]), header, payload, buf[pos:end])

    def window(self) -> tuple[bytes, int]:
        """The bytes received and where the next frame starts, for a caller that cuts runs
        of frames of a known shape itself (the pipeline's Arrow reader); ``skip_to`` after."""
        return self._buf, self._pos

    def skip_to(self, pos: int) -> None:
        """Frames up to ``pos`` (an offset into ``window()``'s bytes) were taken."""
        self._pos = pos

    def next_from(self, recv: Callable[[int], bytes]) -> Frame:
        """The next whole frame, calling ``recv`` (a blocking socket's) for more bytes as
        needed; ConnectionError when it returns nothing (the server closed)."""
        while (frame := self.next()) is None:
            data = recv(1 << 20)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.feed(data)
        return frame

    def frames(self) -> list[Frame]:
        """Every whole frame received so far."""
        out = []
        while (frame := self.next()) is not None:
            out.append(frame)
        return out


def parse_frame(raw: bytes) -> Frame | None:
    """The frame ``raw`` holds (exactly one whole frame), or None when it holds less."""
    reader = FrameReader()
    reader.feed(raw)
    return reader.next()
