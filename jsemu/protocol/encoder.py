"""Encoders for what the server sends: INFO, MSG, HMSG, PING, PONG, +OK, -ERR."""

from __future__ import annotations

from typing import Any

from .gojson import dumps
from .texts import STATUS_NO_RESPONDERS

__all__ = [
    "OK",
    "PING",
    "PONG",
    "encode_err",
    "encode_hmsg",
    "encode_info",
    "encode_msg",
    "encode_no_responders",
    "go_quote",
]

PING = b"PING\r\n"
PONG = b"PONG\r\n"
OK = b"+OK\r\n"


def encode_info(info: dict[str, Any]) -> bytes:
    """``INFO {...} \\r\\n`` -- the real server puts a space before the CRLF."""
    return b"INFO " + dumps(info).encode() + b" \r\n"


def encode_err(error: str) -> bytes:
    return b"-ERR '" + error.encode("utf-8", "surrogateescape") + b"'\r\n"


def encode_msg(subject: bytes, sid: bytes, reply: bytes | None, payload: bytes) -> bytes:
    if reply:
        head = b"MSG %b %b %b %d\r\n" % (subject, sid, reply, len(payload))
    else:
        head = b"MSG %b %b %d\r\n" % (subject, sid, len(payload))
    return head + payload + b"\r\n"


def encode_hmsg(subject: bytes, sid: bytes, reply: bytes | None, hdr_len: int, msg: bytes) -> bytes:
    """``msg`` is the header block followed by the payload; ``hdr_len`` splits them."""
    if reply:
        head = b"HMSG %b %b %b %d %d\r\n" % (subject, sid, reply, hdr_len, len(msg))
    else:
        head = b"HMSG %b %b %d %d\r\n" % (subject, sid, hdr_len, len(msg))
    return head + msg + b"\r\n"


def status_header(code: int, description: str = "") -> bytes:
    """A header-only status block, ``NATS/1.0 <code>[ <description>]``."""
    line = f"NATS/1.0 {code} {description}".rstrip() if description else f"NATS/1.0 {code}"
    return line.encode() + b"\r\n\r\n"


def encode_no_responders(inbox: bytes, sid: bytes, subject: bytes) -> bytes:
    """The 503 status a requester gets when nobody is subscribed (2.12+ adds Nats-Subject)."""
    hdr = STATUS_NO_RESPONDERS + b"Nats-Subject: " + subject + b"\r\n\r\n"
    return b"HMSG %b %b %d %d\r\n%b\r\n" % (inbox, sid, len(hdr), len(hdr), hdr)


_GO_ESCAPES = {
    0x07: "\\a",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
    0x0B: "\\v",
    0x5C: "\\\\",
    0x22: '\\"',
}


def go_quote(data: bytes) -> str:
    """Go's ``%q`` for a byte slice: a double-quoted string with Go escapes."""
    text = data.decode("utf-8", errors="surrogateescape")
    out = ['"']
    for ch in text:
        code = ord(ch)
        if code in _GO_ESCAPES:
            out.append(_GO_ESCAPES[code])
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
