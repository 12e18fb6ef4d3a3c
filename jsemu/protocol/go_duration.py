"""Go's ``time.Duration`` text: ``String`` (status texts, error texts) and ``ParseDuration``
(a ``-NAK`` delay)."""

from __future__ import annotations

import re

__all__ = ["format_duration", "parse_duration"]

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")


def _frac(value: int, prec: int) -> str:
    whole, rest = divmod(value, 10**prec)
    digits = str(rest).rjust(prec, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def format_duration(ns: int) -> str:
    """``time.Duration.String``."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 10**9:
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_frac(u, 3)}µs"
        return f"{sign}{_frac(u, 6)}ms"
    secs, rest = divmod(u, 10**9)
    text = _frac((secs % 60) * 10**9 + rest, 9) + "s"
    mins = secs // 60
    if mins:
        text = f"{mins % 60}m" + text
        if mins // 60:
            text = f"{mins // 60}h" + text
    return sign + text


def parse_duration(text: str) -> int:
    """``time.ParseDuration``; ValueError for what Go rejects."""
    s = text
    sign = 1
    if s[:1] in ("-", "+"):
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f"time: invalid duration {text!r}")
    total = 0
    pos = 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None or (not m.group(1) and not m.group(2)):
            raise ValueError(f"time: invalid duration {text!r}")
        unit = _UNITS[m.group(3)]
        total += int(m.group(1) or "0") * unit
        if m.group(2):
            total += int(m.group(2)) * unit // 10 ** len(m.group(2))
        pos = m.end()
    return sign * total
