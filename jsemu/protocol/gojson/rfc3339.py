"""``time.Time.UnmarshalText``: an RFC 3339 string to Unix nanoseconds, or Go's ``time.ParseError``.

A ``time.Time`` field of a request (a consumer's ``opt_start_time``, a pause deadline) arrives as
a string that Go parses with ``time.Parse(time.RFC3339, s)``. That function tries a fast
fixed-width parse (:func:`_parse_rfc3339_fast`, ``time.parseRFC3339``) and, when it does
not apply, the general layout parser, whose error texts name the layout element that
failed (:func:`_parse_rfc3339_layout`): both are reproduced, because a bad time comes
back to the client as ``invalid JSON: parsing time "..." as "2006-01-02T15:04:05Z07:00":
cannot parse ...``. The result remembers a non-UTC zone (:class:`GoTime`), because Go
echoes a time back in the zone it was written with.
"""

from __future__ import annotations

import re

from .errors import GoJSONError
from .runes import RUNE_ERROR, decode_rune, go_bytes

__all__ = ["GoTime", "parse_go_time"]


_RFC3339 = "2006-01-02T15:04:05Z07:00"
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in(month: int, year: int) -> int:
    if month == 2 and _is_leap(year):
        return 29
    return _DAYS[month - 1]


def _days_from_civil(year: int, month: int, day: int) -> int:
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _unix_ns(year: int, month: int, day: int, hour: int, minute: int, sec: int, nsec: int, offset: int) -> int:
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec - offset
    return seconds * 1_000_000_000 + nsec


def _time_quote(b: bytes) -> str:
    """The time package's own quote()."""
    out = ['"']
    i, n = 0, len(b)
    while i < n:
        r, size = decode_rune(b, i, n)
        if r >= 0x80 or r < 0x20:
            if r == RUNE_ERROR:
                width = 3 if i + 2 < n and b[i : i + 3] == b"\xef\xbf\xbd" else 1
            else:
                width = size
            out.extend(f"\\x{b[i + j]:02x}" for j in range(width))
            i += width
            continue
        if r in (0x22, 0x5C):
            out.append("\\")
        out.append(chr(r))
        i += size
    out.append('"')
    return "".join(out)


class _TimeParseError(Exception):
    def __init__(self, value: bytes, layout_elem: str, value_elem: bytes, message: str = "") -> None:
        super().__init__()
        if message:
            self.text = "parsing time " + _time_quote(value) + message
        else:
            self.text = (
                f"parsing time {_time_quote(value)} as {_time_quote(_RFC3339.encode())}: "
                f"cannot parse {_time_quote(value_elem)} as {_time_quote(layout_elem.encode())}"
            )


def _isdigit(b: bytes, i: int) -> bool:
    return i < len(b) and 0x30 <= b[i] <= 0x39


def _nanos(b: bytes, nbytes: int) -> int:
    """parseNanoseconds for b = '.ddd...' (or ','), nbytes long; at most 9 digits count."""
    nbytes = min(nbytes, 10)
    return int(b[1:nbytes] + b"0" * (10 - nbytes))


def _parse_rfc3339_fast(b: bytes) -> int | None:
    """time.parseRFC3339: None when it does not apply."""
    if len(b) < 19:
        return None
    ok = True

    def num(s: bytes, lo: int, hi: int) -> int:
        nonlocal ok
        if not s.isdigit():
            ok = False
            return lo
        x = int(s)
        if not lo <= x <= hi:
            ok = False
            return lo
        return x

    year = num(b[0:4], 0, 9999)
    month = num(b[5:7], 1, 12)
    day = num(b[8:10], 1, _days_in(month, year))
    hour = num(b[11:13], 0, 23)
    minute = num(b[14:16], 0, 59)
    sec = num(b[17:19], 0, 59)
    if not ok or b[4:5] != b"-" or b[7:8] != b"-" or b[10:11] != b"T" or b[13:14] != b":" or b[16:17] != b":":
        return None
    s = b[19:]
    nsec = 0
    if len(s) >= 2 and s[0] == 0x2E and _isdigit(s, 1):
        n = 2
        while n < len(s) and _isdigit(s, n):
            n += 1
        nsec = _nanos(s, n)
        s = s[n:]
    offset = 0
    if s != b"Z":
        if len(s) != 6:
            return None
        hr = num(s[1:3], 0, 23)
        mm = num(s[4:6], 0, 59)
        if not ok or s[0] not in b"+-" or s[3] != 0x3A:
            return None
        offset = (hr * 60 + mm) * 60 * (-1 if s[0] == 0x2D else 1)
    return _unix_ns(year, month, day, hour, minute, sec, nsec, offset)


def _getnum(s: bytes, fixed: bool) -> tuple[int, bytes, bool]:
    if not _isdigit(s, 0):
        return 0, s, False
    if not _isdigit(s, 1):
        if fixed:
            return 0, s, False
        return s[0] - 0x30, s[1:], True
    return (s[0] - 0x30) * 10 + s[1] - 0x30, s[2:], True


def _parse_rfc3339_layout(avalue: bytes) -> int:
    """time.parse(RFC3339, value): the slow path, with its error texts."""
    value = avalue
    year = month = day = hour = minute = sec = nsec = 0
    offset = 0
    chunks = (
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", "Z07:00"),
    )
    for prefix, std in chunks:
        if prefix:
            if not value or value[0] != ord(prefix):
                raise _TimeParseError(avalue, prefix, value)
            value = value[1:]
        hold = value
        ok = True
        range_err = ""
        if std == "2006":
            if len(value) < 4 or not _isdigit(value, 0):
                ok = False
            else:
                p, value = value[:4], value[4:]
                if p.isdigit():
                    year = int(p)
                else:
                    ok = False
        elif std == "01":
            month, value, ok = _getnum(value, True)
            if ok and not 1 <= month <= 12:
                range_err = "month"
        elif std == "02":
            day, value, ok = _getnum(value, True)
        elif std == "15":
            hour, value, ok = _getnum(value, False)
            if hour >= 24:
                range_err = "hour"
        elif std == "04":
            minute, value, ok = _getnum(value, True)
            if minute >= 60:
                range_err = "minute"
        elif std == "05":
            sec, value, ok = _getnum(value, True)
            if ok:
                if sec >= 60:
                    range_err = "second"
                elif len(value) >= 2 and value[0] in b".," and _isdigit(value, 1):
                    n = 2
                    while n < len(value) and _isdigit(value, n):
                        n += 1
                    nsec = _nanos(value, n)
                    value = value[n:]
        else:  # Z07:00
            if value[:1] == b"Z":
                value = value[1:]
            elif len(value) < 6 or value[3] != 0x3A:
                ok = False
            else:
                sign, hh, mm = value[0:1], value[1:3], value[4:6]
                value = value[6:]
                hr, _, ok = _getnum(hh, True)
                mi = 0
                if ok:
                    mi, _, ok = _getnum(mm, True)
                if hr > 24:
                    range_err = "time zone offset hour"
                if mi > 60:
                    range_err = "time zone offset minute"
                offset = (hr * 60 + mi) * 60
                if sign == b"-":
                    offset = -offset
                elif sign != b"+":
                    ok = False
        if range_err:
            raise _TimeParseError(avalue, std, value, ": " + range_err + " out of range")
        if not ok:
            raise _TimeParseError(avalue, std, hold)
    if value:
        raise _TimeParseError(avalue, "", value, ": extra text: " + _time_quote(value))
    if day < 1 or day > _days_in(month, year):
        raise _TimeParseError(avalue, "", value, ": day out of range")
    return _unix_ns(year, month, day, hour, minute, sec, nsec, offset)


class GoTime(int):
    """Unix nanoseconds that remember the UTC offset they were written with (seconds),
    because a ``time.Time`` echoed back keeps its zone: ``...T00:00:00+02:00``."""

    offset: int = 0


_ZONE_TAIL = re.compile(rb"([+-])(\d\d):(\d\d)\Z")


def parse_go_time(text: str) -> int:
    """``time.Time.UnmarshalText`` (RFC 3339, as Go parses it) to Unix nanoseconds (a
    :class:`GoTime` when the zone is not UTC); raises :class:`GoJSONError` with Go's
    ``time.ParseError`` text."""
    b = go_bytes(text)
    ns = _parse_rfc3339_fast(b)
    if ns is None:
        try:
            ns = _parse_rfc3339_layout(b)
        except _TimeParseError as exc:
            raise GoJSONError(exc.text) from None
    zone = _ZONE_TAIL.search(b)
    if zone is not None:
        offset = (int(zone.group(2)) * 60 + int(zone.group(3))) * 60 * (-1 if zone.group(1) == b"-" else 1)
        if offset:
            t = GoTime(ns)
            t.offset = offset
            return t
    return ns
