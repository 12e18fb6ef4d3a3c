"""The session file: what ``jsemu record`` writes and ``jsemu replay`` reads (format version 1).

Theory of operation
-------------------
One file holds every connection of a recorded session, as JSON lines (UTF-8, one JSON object
per line, ``\\n`` after each, the last one included):

* line 1, the header: ``{"format": "jsemu-session", "version": 1, "created": RFC 3339,
  "upstream": URL, "redacted": bool, "jsemu": VERSION}`` (readers ignore keys they do not know);
* then records in the order they happened, each with ``conn`` (1, 2, ... in accept order) and
  ``t`` (seconds since the recording started, a float that never decreases):

  - ``{"conn": 1, "t": 0.0, "ev": "open", "peer": "127.0.0.1:50412"}``: a client connected;
  - ``{"conn": 1, "t": 0.01, "dir": "c2s" | "s2c", "data": TEXT}``: bytes as one read took
    them (client to server, server to client). ``data`` is the bytes as text when they are
    UTF-8, else base64 with ``"enc": "base64"``;
  - ``{"conn": 1, "t": 2.5, "ev": "close", "by": "client" | "server"}``: who closed first.

A reader trusts nothing: a file that is not this format (not JSON, another ``format`` or
``version``, a record of the wrong shape, bytes for a connection that never opened, a line
longer than :data:`MAX_LINE`, more than :data:`MAX_CONNECTIONS` connections, a last line
without its ``\\n``) is refused with one
:class:`SessionFileError` naming the line, and nothing of it is replayed.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

__all__ = [
    "FORMAT",
    "MAX_CONNECTIONS",
    "MAX_LINE",
    "VERSION",
    "Chunk",
    "Connection",
    "Session",
    "SessionFileError",
    "encode_record",
    "header",
    "read_session",
]

FORMAT = "jsemu-session"
VERSION = 1
#: The longest line a reader takes (a record holds one read of a socket, at most 1 MiB of bytes
#: in ``jsemu record``; base64 and JSON escapes grow that by at most 6x).
MAX_LINE = 8 * 1024 * 1024
#: The most connections a session may hold: a replay opens each of them.
MAX_CONNECTIONS = 1024
_DIRS = ("c2s", "s2c")


class SessionFileError(ValueError):
    """A session file that can not be replayed; ``str()`` is the one line to show."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """Bytes one way at ``t``."""

    dir: str
    t: float
    data: bytes
    #: The line of the session file it was read from (orders records across connections).
    line: int = 0


@dataclass(slots=True)
class Connection:
    """One recorded connection: its chunks in order, and how it ended."""

    conn: int
    opened: float
    peer: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    closed: float | None = None
    closed_by: str = ""
    open_line: int = 0
    close_line: int = 0


@dataclass(slots=True)
class Session:
    header: dict[str, Any]
    connections: dict[int, Connection]


def header(upstream: str, redacted: bool, created: str, jsemu_version: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "created": created,
        "upstream": upstream,
        "redacted": redacted,
        "jsemu": jsemu_version,
    }


def encode_record(conn: int, t: float, direction: str, data: bytes) -> dict[str, Any]:
    """The record of bytes ``data`` one way: as text when they are UTF-8, else base64."""
    record: dict[str, Any] = {"conn": conn, "t": round(t, 6), "dir": direction}
    try:
        record["data"] = data.decode("utf-8")
    except UnicodeDecodeError:
        record["data"] = base64.b64encode(data).decode("ascii")
        record["enc"] = "base64"
    return record


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    number = 0
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE:
            raise SessionFileError(f"line {number}: longer than {MAX_LINE} bytes")
        if not line.endswith(b"\n"):
            raise SessionFileError(f"line {number}: truncated (no newline at the end of the file)")
        yield number, line


def _object(number: int, line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        raise SessionFileError(f"line {number}: not JSON") from None
    if not isinstance(value, dict):
        raise SessionFileError(f"line {number}: not a JSON object")
    return value


def _check_header(value: dict[str, Any]) -> None:
    if value.get("format") != FORMAT:
        raise SessionFileError(f'line 1: not a jsemu session file (no "format": "{FORMAT}" header)')
    version = value.get("version")
    if version != VERSION:
        raise SessionFileError(
            f"line 1: session format version {version!r} is not supported (this jsemu reads {VERSION})"
        )


def _data(number: int, record: dict[str, Any]) -> bytes:
    data, enc = record.get("data"), record.get("enc")
    if not isinstance(data, str):
        raise SessionFileError(f'line {number}: "data" must be a string')
    if enc is None:
        try:
            return data.encode("utf-8")
        except UnicodeEncodeError:
            raise SessionFileError(f'line {number}: "data" is not valid text') from None
    if enc != "base64":
        raise SessionFileError(f'line {number}: unknown "enc" {enc!r}')
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise SessionFileError(f'line {number}: "data" is not valid base64') from None


def parse_session(stream: IO[bytes]) -> Session:
    lines = _lines(stream)
    first = next(lines, None)
    if first is None:
        raise SessionFileError("empty file (no header line)")
    head = _object(*first)
    _check_header(head)
    conns: dict[int, Connection] = {}
    last_t = 0.0
    for number, line in lines:
        record = _object(number, line)
        conn, seconds = record.get("conn"), record.get("t")
        if type(conn) is not int or conn < 1:
            raise SessionFileError(f'line {number}: "conn" must be a positive integer')
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not last_t <= seconds < 1e9:
            raise SessionFileError(f'line {number}: "t" must be seconds that never decrease')
        t = last_t = float(seconds)
        ev, direction = record.get("ev"), record.get("dir")
        known = conns.get(conn)
        if ev == "open":
            if known is not None:
                raise SessionFileError(f"line {number}: connection {conn} opened twice")
            if len(conns) == MAX_CONNECTIONS:
                raise SessionFileError(f"line {number}: more than {MAX_CONNECTIONS} connections")
            peer = record.get("peer", "")
            conns[conn] = Connection(conn, t, peer if isinstance(peer, str) else "", open_line=number)
            continue
        if known is None:
            raise SessionFileError(f"line {number}: connection {conn} was never opened")
        if known.closed is not None:
            raise SessionFileError(f"line {number}: connection {conn} is already closed")
        if ev == "close":
            by = record.get("by")
            if by not in ("client", "server"):
                raise SessionFileError(f'line {number}: "by" must be "client" or "server"')
            known.closed, known.closed_by, known.close_line = t, by, number
        elif direction in _DIRS and ev is None:
            known.chunks.append(Chunk(direction, t, _data(number, record), number))
        else:
            raise SessionFileError(f'line {number}: neither "ev": "open"|"close" nor "dir": "c2s"|"s2c"')
    return Session(head, conns)


def read_session(path: str | Path) -> Session:
    """The session in ``path``; :class:`SessionFileError` (one line) for anything else."""
    try:
        with open(path, "rb") as stream:
            return parse_session(stream)
    except OSError as exc:
        raise SessionFileError(exc.strerror or str(exc)) from None
