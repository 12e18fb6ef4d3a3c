"""Times as nats-server writes them: RFC 3339 with up to nine fraction digits, UTC.

Timestamps stay integer nanoseconds everywhere; going through ``datetime`` would lose
the last three digits.
"""

from __future__ import annotations

import calendar
import re
import time

__all__ = ["ZERO_TIME", "format_ns", "go_unix_nano", "parse_rfc3339_ns", "stamp"]

ZERO_TIME = "0001-01-01T00:00:00Z"

_stamp_secs = -1
_stamp_head = b""


def stamp(ns: int) -> bytes:
    """``format_ns(ns)`` as bytes, for reply headers: the date and time up to the second
    are kept from the previous call, since neighbouring messages share them."""
    global _stamp_secs, _stamp_head
    if ns <= 0:
        return format_ns(ns).encode()
    secs, frac = divmod(ns, 1_000_000_000)
    if secs != _stamp_secs:
        t = time.gmtime(secs)
        _stamp_head = b"%04d-%02d-%02dT%02d:%02d:%02d" % (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)
        _stamp_secs = secs
    if frac:
        return _stamp_head + (b".%09d" % frac).rstrip(b"0") + b"Z"
    return _stamp_head + b"Z"


def format_ns(ns: int, offset: int = 0) -> str:
    """Go's ``time.Time.MarshalJSON``: UTC, or the wall time at ``offset`` seconds east
    of UTC with a ``±hh:mm`` zone; 0 is Go's zero time."""
    if ns == 0:
        return ZERO_TIME
    secs, frac = divmod(ns, 1_000_000_000)
    t = time.gmtime(secs + offset)
    base = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    if frac:
        base += "." + f"{frac:09d}".rstrip("0")
    if not offset:
        return base + "Z"
    sign = "-" if offset < 0 else "+"
    hours, minutes = divmod(abs(offset) // 60, 60)
    return f"{base}{sign}{hours:02d}:{minutes:02d}"


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z"
)


def parse_rfc3339_ns(text: str) -> int:
    """Parse an RFC 3339 time (as Go's ``time.Time.UnmarshalJSON`` accepts) to Unix ns.

    Raises ValueError for anything else. Times before 1970 come out negative (Go's zero
    time, year 1, included); see :func:`go_unix_nano` for what the server compares.
    """
    m = _RFC3339.match(text)
    if m is None:
        raise ValueError(f"parsing time {text!r}")
    year, month, day, hour, minute, sec = (int(g) for g in m.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and sec < 60):
        raise ValueError(f"parsing time {text!r}: out of range")
    frac = int((m.group(7) or "").ljust(9, "0") or 0)

    secs = calendar.timegm((year, month, day, hour, minute, sec, 0, 0, 0))
    if m.group(9):
        offset = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        secs -= offset if m.group(9) == "+" else -offset
    return secs * 1_000_000_000 + frac


def go_unix_nano(ns: int) -> int:
    """``time.Time.UnixNano`` wraps outside 1678..2262; requests far in the future or past
    (including Go's zero time) come out as the wrapped int64 the server compares with."""
    return ((ns + (1 << 63)) % (1 << 64)) - (1 << 63)
