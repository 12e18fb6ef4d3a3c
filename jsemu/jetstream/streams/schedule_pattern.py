"""The ``Nats-Schedule`` patterns of nats-server 2.15.1 (``parseMsgSchedule``, ``cron.go``).

A pattern is ``@at <RFC 3339 time>`` (fires once), ``@every <Go duration of at least 1s>``
(repeats), a predefined ``@yearly``/``@annually``/``@monthly``/``@weekly``/``@daily``/
``@midnight``/``@hourly``, or a six-field cron line (seconds first; ``*``, ``?``, ``a-b``,
``/step``, lists, month and weekday names), optionally in the zone of
``Nats-Schedule-Time-Zone`` (refused for ``@at`` and ``@every``). All times are Unix
nanoseconds on the server's clock, so a test moves a frozen clock instead of sleeping.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from ...protocol.go_duration import parse_duration
from ...timefmt import parse_rfc3339_ns

__all__ = ["InvalidZone", "load_zone", "next_fire"]

_SECOND = 1_000_000_000
_UTC = UTC

_PREDEFINED = {
    "@yearly": "0 0 0 1 1 *",
    "@annually": "0 0 0 1 1 *",
    "@monthly": "0 0 0 1 * *",
    "@weekly": "0 0 0 * * 0",
    "@daily": "0 0 0 * * *",
    "@midnight": "0 0 0 * * *",
    "@hourly": "0 0 * * * *",
}
_MONTHS = {
    n: i + 1 for i, n in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
}
_DAYS = {n: i for i, n in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
#: (min, max, names) of the six fields, seconds first.
_BOUNDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None),
    (0, 59, None),
    (0, 23, None),
    (1, 31, None),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_STAR = 1 << 63
_ATOI = re.compile(r"[+-]?[0-9]+\Z")


class InvalidZone(ValueError):
    """``Nats-Schedule-Time-Zone`` names no zone Go's ``time.LoadLocation`` knows."""


def load_zone(name: str) -> tzinfo:
    """``time.LoadLocation`` for a header that is present (empty is refused, as the server does)."""
    if not name or ".." in name or name[0] in "/\\":
        raise InvalidZone(name)
    if name == "UTC":
        return _UTC
    if name == "Local":
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else _UTC
    try:
        return ZoneInfo(name)
    except (ValueError, OSError) as exc:  # ZoneInfoNotFoundError is a KeyError; see below
        raise InvalidZone(name) from exc
    except KeyError as exc:
        raise InvalidZone(name) from exc


def _round_second(ns: int) -> int:
    """Go ``Time.Round(time.Second)``: halves round up."""
    r = ns % _SECOND
    return ns - r if r + r < _SECOND else ns + (_SECOND - r)


def next_fire(pattern: str, zone: tzinfo | None, ts: int, now: int) -> tuple[int, bool] | None:
    """``parseMsgSchedule``: (when it fires next after ``ts``, whether it repeats), or None
    for an invalid pattern. An empty pattern gives (0, False): no schedule. A repeating
    schedule that would have fired before ``now`` (after a restart) fires once, from now."""
    if not pattern:
        return 0, False
    if pattern.startswith("@at "):
        if zone is not None:
            return None
        try:
            return _parse_rfc3339(pattern[4:]), False
        except ValueError:
            return None
    if pattern.startswith("@every "):
        if zone is not None:
            return None
        try:
            every = parse_duration(pattern[7:])
        except ValueError:
            return None
        if every < _SECOND:
            return None
        fire = _round_second(ts) + every
        if fire < now:
            fire = _round_second(now) + every
        return fire, True
    pattern = _PREDEFINED.get(pattern, pattern)
    cron = _parse_cron(pattern)
    if cron is None:
        return None
    found = _next_cron(cron, zone or _UTC, ts)
    if found is not None and found < now:
        found = _next_cron(cron, zone or _UTC, _round_second(now))
    if found is None:
        return None
    return found, True


def _parse_rfc3339(text: str) -> int:
    """Go ``time.Parse(time.RFC3339, ...)``: also checks the day exists in its month."""
    ns = parse_rfc3339_ns(text)
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    if day > calendar.monthrange(year, month)[1]:
        raise ValueError(f"parsing time {text!r}: day out of range")
    return ns


# --- cron (robfig/cron as nats-server's cron.go has it) ---------------------------------------


def _parse_cron(pattern: str) -> tuple[int, ...] | None:
    fields = pattern.split()
    if len(fields) != 6:
        return None
    bits: list[int] = []
    for field, bounds in zip(fields, _BOUNDS, strict=True):
        value = _field(field, bounds)
        if value is None or not value & ~_STAR:
            # No value at all (e.g. ","): Go searches five years (or forever) and fails.
            return None
        bits.append(value)
    return tuple(bits)


def _field(field: str, bounds: tuple[int, int, dict[str, int] | None]) -> int | None:
    bits = 0
    for expr in field.split(","):
        if expr:
            value = _range(expr, bounds)
            if value is None:
                return None
            bits |= value
    return bits


def _int(expr: str, names: dict[str, int] | None) -> int | None:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    if not _ATOI.match(expr):
        return None
    num = int(expr)
    return num if 0 <= num < 1 << 63 else None


def _range(expr: str, bounds: tuple[int, int, dict[str, int] | None]) -> int | None:
    lo, hi, names = bounds
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = lo, hi, _STAR
    else:
        first = _int(low_and_high[0], names)
        if first is None or len(low_and_high) > 2:
            return None
        start = end = first
        if len(low_and_high) == 2:
            last = _int(low_and_high[1], names)
            if last is None:
                return None
            end = last
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        parsed = _int(range_and_step[1], None)
        if parsed is None:
            return None
        step = parsed
        if len(low_and_high) == 1:
            end = hi  # "N/step" means "N-max/step"
        if step > 1:
            extra = 0
    else:
        return None
    if start < lo or end > hi or start > end or step == 0:
        return None
    return sum(1 << i for i in range(start, end + 1, step)) | extra


def _day_matches(dom: int, dow: int, t: datetime) -> bool:
    dom_match = bool(1 << t.day & dom)
    dow_match = bool(1 << ((t.weekday() + 1) % 7) & dow)
    if dom & _STAR or dow & _STAR:
        return dom_match and dow_match
    return dom_match or dow_match


def _wall(zone: tzinfo, year: int, month: int, day: int, hour: int = 0) -> datetime:
    """Go ``time.Date`` with a month past 12 carried into the year."""
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return datetime(year, month, day, hour, tzinfo=zone)


def _add(t: datetime, delta: timedelta) -> datetime:
    """Go ``Time.Add``: absolute time, not wall clock."""
    return (t.astimezone(_UTC) + delta).astimezone(t.tzinfo)


def _ns(t: datetime) -> int:
    return calendar.timegm(t.astimezone(_UTC).timetuple()) * _SECOND


def _next_cron(cron: tuple[int, ...], zone: tzinfo, ts: int) -> int | None:
    """``parseCron``'s search: the first matching second after ``ts``, within five years."""
    second, minute, hour, dom, month, dow = cron
    start = ts - ts % _SECOND + _SECOND
    t = datetime.fromtimestamp(start // _SECOND, zone)
    truncated = False
    year_limit = t.year + 5
    while True:
        if t.year > year_limit:
            return None
        wrapped = False
        while not 1 << t.month & month:
            if not truncated:
                truncated = True
                t = _wall(zone, t.year, t.month, 1)
            t = _wall(zone, t.year, t.month + 1, 1)
            if t.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not _day_matches(dom, dow, t):
            if not truncated:
                truncated = True
                t = _wall(zone, t.year, t.month, t.day)
            d = date(t.year, t.month, t.day) + timedelta(days=1)
            t = datetime(d.year, d.month, d.day, t.hour, t.minute, t.second, tzinfo=zone)
            if t.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not 1 << t.hour & hour:
            if not truncated:
                truncated = True
                t = _wall(zone, t.year, t.month, t.day, t.hour)
            t = _add(t, timedelta(hours=1))
            if t.hour == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not 1 << t.minute & minute:
            if not truncated:
                truncated = True
                t = _add(t, -timedelta(seconds=_ns(t) // _SECOND % 60))
            t = _add(t, timedelta(minutes=1))
            if t.minute == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not 1 << t.second & second:
            truncated = True
            t = _add(t, timedelta(seconds=1))
            if t.second == 0:
                wrapped = True
                break
        if wrapped:
            continue
        return _ns(t)
