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


_PART_ANY_UNIT = re.compile(r"(\d*)(?:\.(\d*))?([^\d.]*)")


def _quote(text: str) -> str:
    """Go's ``time.quote``: control and non-ASCII characters as ``\\x`` bytes (UTF-8), ``"`` and
    ``\\`` escaped, the rest as it is."""
    out: list[str] = []
    for c in text:
        if c < " " or c >= "\x80":
            out.extend(f"\\x{b:02x}" for b in c.encode())
        else:
            out.append("\\" + c if c in '"\\' else c)
    return '"' + "".join(out) + '"'


def parse_duration(text: str) -> int:
    """``time.ParseDuration`` (``1m30s``, ``-1.5h``, ``0``) in nanoseconds; ``ValueError`` with Go's
    message (``time: invalid duration "zz"``, ``time: missing unit ...``, ``time: unknown unit ...``),
    which config errors quote verbatim."""
    quoted = _quote(text)
    rest = text[1:] if text[:1] in "+-" else text
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(f"time: invalid duration {quoted}")
    total = 0
    while rest:
        m = _PART_ANY_UNIT.match(rest)
        whole, frac, unit = (m.group(1), m.group(2), m.group(3)) if m else ("", None, "")
        if not whole and not frac:
            raise ValueError(f"time: invalid duration {quoted}")
        if not unit:
            raise ValueError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration {quoted}')
        scale = _UNITS[unit]
        total += int(whole or "0") * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        assert m is not None
        rest = rest[m.end() :]
    return -total if text[:1] == "-" else total
