"""Text the way Go sees it: ``unicode/utf8`` decoding, ``strconv`` quoting, ``strings.EqualFold``.

Go's strings are bytes that may hold invalid UTF-8; Python's are code points. The
decoder needs Go's view twice over: its error texts quote the offending input
(``strconv.Quote``, ``%q``) rune by rune, where an invalid byte is one ``RUNE_ERROR``
of width 1; and the decoded values turn invalid bytes into U+FFFD exactly where
``string(b)`` does. A str that must keep the raw bytes carries them as surrogate
escapes (:func:`raw_text`), and :func:`go_bytes` gives them back.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = [
    "RUNE_ERROR",
    "decode_rune",
    "full_rune",
    "go_bytes",
    "go_fold",
    "go_quote",
    "go_quote_rune",
    "go_str",
    "is_print",
    "is_space",
    "iter_runes",
    "raw_text",
]

# --- UTF-8 the way Go's unicode/utf8 sees it -----------------------------------------

RUNE_ERROR = 0xFFFD
_LOCB, _HICB = 0x80, 0xBF


def _first(b0: int) -> tuple[int, int, int]:
    """(size, accept lo, accept hi) of a leading byte; size 1 for ASCII and invalid."""
    if b0 < 0x80:
        return 1, 0, 0
    if b0 < 0xC2:
        return 0, 0, 0  # invalid
    if b0 < 0xE0:
        return 2, _LOCB, _HICB
    if b0 == 0xE0:
        return 3, 0xA0, _HICB
    if b0 == 0xED:
        return 3, _LOCB, 0x9F
    if b0 < 0xF0:
        return 3, _LOCB, _HICB
    if b0 == 0xF0:
        return 4, 0x90, _HICB
    if b0 < 0xF4:
        return 4, _LOCB, _HICB
    if b0 == 0xF4:
        return 4, _LOCB, 0x8F
    return 0, 0, 0


def decode_rune(b: bytes, i: int, end: int) -> tuple[int, int]:
    """utf8.DecodeRune(b[i:end]): (rune, size); (RUNE_ERROR, 1) for invalid, (RUNE_ERROR, 0) if empty."""
    if i >= end:
        return RUNE_ERROR, 0
    b0 = b[i]
    size, lo, hi = _first(b0)
    if size == 1:
        return b0, 1
    if size == 0 or end - i < size:
        return RUNE_ERROR, 1
    b1 = b[i + 1]
    if not lo <= b1 <= hi:
        return RUNE_ERROR, 1
    if size == 2:
        return ((b0 & 0x1F) << 6) | (b1 & 0x3F), 2
    b2 = b[i + 2]
    if not _LOCB <= b2 <= _HICB:
        return RUNE_ERROR, 1
    if size == 3:
        return ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F), 3
    b3 = b[i + 3]
    if not _LOCB <= b3 <= _HICB:
        return RUNE_ERROR, 1
    return ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F), 4


def full_rune(b: bytes, i: int, end: int) -> bool:
    """utf8.FullRune(b[i:end])."""
    n = end - i
    if n <= 0:
        return False
    size, lo, hi = _first(b[i])
    if size <= 1 or n >= size:
        return True
    if n > 1 and not lo <= b[i + 1] <= hi:
        return True
    return n > 2 and not _LOCB <= b[i + 2] <= _HICB


def iter_runes(b: bytes) -> Iterator[tuple[int, int]]:
    """``for _, r := range string(b)``: (rune, size) with invalid bytes as (RUNE_ERROR, 1)."""
    i, end = 0, len(b)
    while i < end:
        r, size = decode_rune(b, i, end)
        yield r, size
        i += size


def go_str(b: bytes) -> str:
    """``string(b)`` as a Python str: every invalid byte becomes U+FFFD."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(r) for r, _ in iter_runes(b))


# --- strconv quoting -------------------------------------------------------------


def is_print(r: int) -> bool:
    """unicode.IsPrint / strconv.IsPrint: letters, marks, numbers, punctuation, symbols, ASCII space."""
    if r < 0x80:
        return 0x20 <= r < 0x7F
    if 0xD800 <= r <= 0xDFFF or r > 0x10FFFF:
        return False
    return chr(r).isprintable()  # Python: everything but C* and Z* (except space): the same set


_SPACES = frozenset([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def is_space(r: int) -> bool:
    """unicode.IsSpace."""
    return r in _SPACES or 0x2000 <= r <= 0x200A


_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}


def _escaped_rune(r: int, quote: str) -> str:
    """strconv's appendEscapedRune (not ASCII-only, not graphic-only)."""
    if r == ord(quote) or r == 0x5C:
        return "\\" + chr(r)
    if is_print(r):
        return chr(r)
    if r in _ESCAPES:
        return _ESCAPES[r]
    if r < 0x20 or r == 0x7F:
        return f"\\x{r:02x}"
    if r > 0x10FFFF or 0xD800 <= r <= 0xDFFF:
        r = RUNE_ERROR
    if r < 0x10000:
        return f"\\u{r:04x}"
    return f"\\U{r:08x}"


def go_bytes(s: str) -> bytes:
    """The Go bytes of a str (surrogate escapes from :func:`raw_text` become raw bytes)."""
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def raw_text(b: bytes) -> str:
    """``b`` as a str that keeps its invalid bytes (as surrogate escapes) for :func:`go_bytes`."""
    return b.decode("utf-8", "surrogateescape")


def go_quote(s: str | bytes) -> str:
    """Go's ``strconv.Quote`` (and ``fmt``'s ``%q`` of a string or []byte). A str may
    carry invalid bytes as surrogate escapes (as :class:`GoEnum` parsers get them)."""
    b = go_bytes(s) if isinstance(s, str) else s
    out = ['"']
    i, end = 0, len(b)
    while i < end:
        r, size = decode_rune(b, i, end)
        if size == 1 and r == RUNE_ERROR:
            out.append(f"\\x{b[i]:02x}")
        else:
            out.append(_escaped_rune(r, '"'))
        i += size
    out.append('"')
    return "".join(out)


def go_quote_rune(r: int) -> str:
    """Go's ``strconv.QuoteRune``."""
    if r > 0x10FFFF or 0xD800 <= r <= 0xDFFF:
        r = RUNE_ERROR
    return "'" + _escaped_rune(r, "'") + "'"


# --- strings.EqualFold ----------------------------------------------------------


def go_fold(name: str) -> str:
    """Case folding equivalent to Go's ``strings.EqualFold`` against ASCII names
    (ASCII letters plus the two non-ASCII letters that fold to ASCII)."""
    out = []
    for ch in name:
        if ch == "\u017f":  # LATIN SMALL LETTER LONG S folds to S
            out.append("S")
        elif ch == "\u212a":  # KELVIN SIGN folds to K
            out.append("K")
        elif ch < "\x80":
            out.append(ch.upper())
        else:
            out.append(ch)
    return "".join(out)
