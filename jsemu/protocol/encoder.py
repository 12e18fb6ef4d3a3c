"""Encoders for what the server sends: INFO, MSG, HMSG, PING, PONG, +OK, -ERR.

Every frame the server writes is built here. Frames to a subject that receives many
(a requester's inbox, a consumer's delivery subject) are built in two parts: the *head*
``HMSG <subject> <sid> `` / ``MSG <subject> <sid> ``, made once per subscription
(``frame_heads``), and the *tail* ``<hdr len> <total len>\r\n<msg>\r\n`` of an HMSG, which
a Direct Get responder encodes once per stored message and reuses (``hmsg_tail``).
``head + head.join(tails)`` is then a run of HMSG frames to that subscription.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

from .gojson import dumps, go_quote
from .texts import STATUS_NO_RESPONDERS

__all__ = [
    "EMPTY_REPLY",
    "HMSG_TAIL_SPLIT",
    "OK",
    "PING",
    "PONG",
    "delivery_frames",
    "encode_err",
    "encode_hmsg",
    "encode_info",
    "encode_msg",
    "encode_no_responders",
    "frame_heads",
    "go_quote",
    "hmsg_tail",
    "join_tails",
    "message_frame",
    "message_frames",
    "payload_frames",
    "split_tail",
]

PING = b"PING\r\n"
PONG = b"PONG\r\n"
OK = b"+OK\r\n"


def encode_info(info: dict[str, Any]) -> bytes:
    """``INFO {...} \\r\\n`` -- the real server puts a space before the CRLF."""
    return b"INFO " + dumps(info).encode() + b" \r\n"


def encode_err(error: str) -> bytes:
    return b"-ERR '" + error.encode("utf-8", "surrogateescape") + b"'\r\n"


#: The reply of a message from the server's send queue: empty but there (see ``encode_msg``).
EMPTY_REPLY = b""


def encode_msg(subject: bytes, sid: bytes, reply: bytes | None, payload: bytes) -> bytes:
    """``MSG``; as nats-server's ``msgHeader``, a reply that is there (not None) is written
    with its space even when empty (:data:`EMPTY_REPLY`): two spaces before the size, the
    mark of what nats-server's own send queue delivers (advisories, ``$SYS`` replies)."""
    if reply is not None:
        head = b"MSG %b %b %b %d\r\n" % (subject, sid, reply, len(payload))
    else:
        head = b"MSG %b %b %d\r\n" % (subject, sid, len(payload))
    return head + payload + b"\r\n"


def encode_hmsg(subject: bytes, sid: bytes, reply: bytes | None, hdr_len: int, msg: bytes) -> bytes:
    """``msg`` is the header block followed by the payload; ``hdr_len`` splits them (an
    empty reply as in ``encode_msg``)."""
    if reply is not None:
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


# --- frames to one subscription, from a head made once (see the module docstring) ---------


def frame_heads(subject: bytes, sid: bytes) -> tuple[bytes, bytes]:
    """``(b"HMSG <subject> <sid> ", b"MSG <subject> <sid> ")``: the fixed start of every
    frame (without a reply subject) to subscription ``sid`` on ``subject``."""
    head = subject + b" " + sid + b" "
    return b"HMSG " + head, b"MSG " + head


def message_frame(hmsg: bytes, pmsg: bytes, headers: bool, hdr: int, msg: bytes) -> bytes:
    """One message as a frame: HMSG with headers, MSG without; a subscriber without header
    support (``headers`` False) gets the payload alone, as from nats-server."""
    if hdr <= 0:
        return b"%b%d\r\n%b\r\n" % (pmsg, len(msg), msg)
    if headers:
        return b"%b%d %d\r\n%b\r\n" % (hmsg, hdr, len(msg), msg)
    return b"%b%d\r\n%b\r\n" % (pmsg, len(msg) - hdr, msg[hdr:])


def message_frames(hmsg: bytes, pmsg: bytes, headers: bool, items: Sequence[tuple[int, bytes]]) -> list[bytes]:
    """``message_frame`` for each ``(header length or -1, message)``."""
    if headers:
        return [
            b"%b%d %d\r\n%b\r\n" % (hmsg, h, len(m), m) if h > 0 else b"%b%d\r\n%b\r\n" % (pmsg, len(m), m)
            for h, m in items
        ]
    return [b"%b%d\r\n%b\r\n" % (pmsg, len(m) - max(h, 0), m[max(h, 0) :]) for h, m in items]


#: A consumer's delivery: (subject shown, reply or None, header length or -1, message).
Delivery = tuple[bytes, bytes | None, int, bytes]


def delivery_frames(sid: bytes, headers: bool, items: Sequence[Delivery]) -> bytes:
    """Frames to subscription ``sid`` for messages that each show their own subject and
    reply (a consumer delivers a stored message with its original subject and its
    ``$JS.ACK`` reply to the deliver subject's subscribers), as one buffer. A subscriber
    without header support gets the payload alone, as from nats-server."""
    if len(items) >= 8:  # the usual run: plain messages, each with its ack reply
        subjects, replies, hdrs, msgs = zip(*items)
        if max(hdrs) <= 0 and None not in replies and b"" not in replies:
            # Every frame's pieces in one list, column by column, and one join.
            n = len(items)
            parts: list[bytes] = [b""] * (6 * n)
            parts[0::6] = subjects
            parts[1::6] = repeat(b" " + sid + b" ", n)
            parts[2::6] = replies
            lens = list(map(len, msgs))
            size = lens[0]
            parts[3::6] = repeat(b" %d\r\n" % size, n) if lens.count(size) == n else map(b" %d\r\n".__mod__, lens)
            parts[4::6] = msgs
            parts[5::6] = repeat(b"\r\nMSG ", n)
            parts[-1] = b"\r\n"
            return b"MSG " + b"".join(parts)
    out = []
    for subject, reply, hdr, msg in items:  # a reply that is there, even empty, as in encode_msg
        if hdr <= 0:
            if reply is not None:
                out.append(b"MSG %b %b %b %d\r\n%b\r\n" % (subject, sid, reply, len(msg), msg))
            else:
                out.append(b"MSG %b %b %d\r\n%b\r\n" % (subject, sid, len(msg), msg))
        elif headers:
            if reply is not None:
                out.append(b"HMSG %b %b %b %d %d\r\n%b\r\n" % (subject, sid, reply, hdr, len(msg), msg))
            else:
                out.append(b"HMSG %b %b %d %d\r\n%b\r\n" % (subject, sid, hdr, len(msg), msg))
        else:
            out.append(encode_msg(subject, sid, reply, msg[hdr:]))
    return b"".join(out)


def payload_frames(pmsg: bytes, payloads: Iterable[bytes]) -> list[bytes]:
    """A MSG frame for each header-less payload (a pipelining publisher's acks)."""
    return [b"%b%d\r\n%b\r\n" % (pmsg, len(p), p) for p in payloads]


def hmsg_tail(block: bytes, data: bytes) -> bytes:
    """The part of an HMSG after its head: header ``block`` (ending in a blank line), then
    ``data``."""
    return b"%d %d\r\n%b%b\r\n" % (len(block), len(block) + len(data), block, data)


#: ``hmsg_tail(head + lines, data)`` without joining the header block first, for loops that
#: build many: ``HMSG_TAIL_SPLIT % (len(head) + len(lines), that + len(data), head, lines, data)``.
HMSG_TAIL_SPLIT = b"%d %d\r\n%b%b%b\r\n"


def join_tails(hmsg: bytes, tails: list[bytes]) -> bytes:
    """HMSG frames for ``tails``, all to the subscription of head ``hmsg``, as one buffer."""
    return hmsg + hmsg.join(tails)


def split_tail(tail: bytes) -> tuple[int, bytes]:
    """``(header length, message)`` back from an ``hmsg_tail`` (for a subscriber that needs
    the message framed another way)."""
    line, _, rest = tail.partition(b"\r\n")
    hdr, total = line.split(b" ")
    return int(hdr), rest[: int(total)]
