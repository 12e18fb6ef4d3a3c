"""The ``Nats-TTL`` header: Go's ``getMessageTTL`` / ``parseMessageTTL`` (server/stream.go).

One parser for the publish path (which refuses an invalid value) and the store (which
schedules the expiry of what it keeps, and rebuilds the schedule when a log is replayed).
"""

from __future__ import annotations

from .go_duration import parse_duration
from .headers import slice_header

__all__ = ["MSG_TTL", "NEVER", "InvalidTTL", "header_ttl", "parse_msg_ttl"]

MSG_TTL = b"Nats-TTL"
#: ``parse_msg_ttl``'s answer for ``never``: the message never expires, not even by max_age.
NEVER = -1

_SECOND = 1_000_000_000
_I64_MAX = (1 << 63) - 1
_U64 = 1 << 64


class InvalidTTL(ValueError):
    """A ``Nats-TTL`` value nats-server answers with ``JSMessageTTLInvalidErr``."""


def _parse_int64(text: bytes) -> int:
    """Go's ``parseInt64``: -1 unless all digits; no overflow check (it wraps as an int64)."""
    if not text or not text.isdigit() or not text.isascii():
        return -1
    n = int(text) % _U64
    return n - _U64 if n > _I64_MAX else n


def parse_msg_ttl(value: bytes) -> int:
    """Seconds (> 0), ``NEVER``, or 0 for no TTL; raises InvalidTTL.

    A Go duration of at least one second counts in whole seconds; otherwise a plain
    integer of seconds (wrapping like Go's int64, so ``2^64`` means no TTL)."""
    if value.lower() == b"never":
        return NEVER
    try:
        text = value.decode()
        ns = parse_duration(text)
    except (UnicodeDecodeError, ValueError):
        ns = None
    if ns is not None and abs(ns) <= _I64_MAX:
        if ns < _SECOND:
            raise InvalidTTL(value)
        return ns // _SECOND
    seconds = _parse_int64(value)
    if seconds < 0:
        raise InvalidTTL(value)
    return seconds


def header_ttl(hdr: bytes) -> int:
    """``getMessageTTL``: the TTL of a header block (0 without one); raises InvalidTTL."""
    value = slice_header(MSG_TTL, hdr)
    if not value:
        return 0
    return parse_msg_ttl(value)
