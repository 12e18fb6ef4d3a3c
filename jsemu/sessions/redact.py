"""Credentials kept out of a recording: the values of CONNECT's ``pass``, ``auth_token``,
``sig`` and ``jwt``.

A client sends CONNECT first; the recorder holds the start of the client's bytes back from the
file (never from the server) until that first line is whole, replaces each secret's JSON string
value by ``"[REDACTED]"`` and leaves every other byte as it was. Keys match case-insensitively
(Go's ``json.Unmarshal`` does, so ``"PASS"`` authenticates too). The user name and the public
``nkey`` are not secrets and stay: they say who connected.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "SECRET_KEYS", "ConnectRedactor", "redact_connect"]

REDACTED = "[REDACTED]"
SECRET_KEYS = ("pass", "auth_token", "sig", "jwt")
_SECRET = re.compile(
    rb'("(?:' + b"|".join(k.encode() for k in SECRET_KEYS) + rb')"\s*:\s*)"(?:[^"\\]|\\.)*"', re.IGNORECASE
)
#: Past this many bytes without a newline the first line is no CONNECT a server would take
#: (nats-server's control line limit is 4 KiB; CONNECT is exempt, but a JWT is a few KiB).
_LIMIT = 1 << 20


def redact_connect(line: bytes) -> bytes:
    """``line`` with its secrets' values replaced, when it is a CONNECT; else as it is."""
    if not line[:8].upper().startswith(b"CONNECT"):
        return line
    return _SECRET.sub(lambda m: m.group(1) + b'"' + REDACTED.encode() + b'"', line)


class ConnectRedactor:
    """Client bytes in, bytes to record out: the first line redacted, the rest as it came."""

    __slots__ = ("_done", "_held")

    def __init__(self) -> None:
        self._held = b""
        self._done = False

    def feed(self, data: bytes) -> bytes:
        if self._done:
            return data
        self._held += data
        nl = self._held.find(b"\n")
        if nl < 0 and len(self._held) < _LIMIT:
            return b""
        self._done = True
        held, self._held = self._held, b""
        if nl < 0:
            return redact_connect(held)
        return redact_connect(held[: nl + 1]) + held[nl + 1 :]

    def flush(self) -> bytes:
        """What is still held (the client closed before its first newline)."""
        held, self._held, self._done = self._held, b"", True
        return redact_connect(held)
