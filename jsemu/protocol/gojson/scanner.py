"""Decode JetStream API requests exactly as nats-server does, errors included.

nats-server decodes JetStream API requests with::

    dec := json.NewDecoder(bytes.NewReader(msg))
    dec.DisallowUnknownFields()
    for { if err := dec.Decode(v); err != nil { if err == io.EOF { return nil }; ... } }

and replies ``"invalid JSON: " + err.Error()`` (a ``*json.SyntaxError`` gets
``" at offset N"`` appended). The server is built with Go >= 1.25 where
``encoding/json`` (v1) is implemented on top of ``encoding/json/v2`` and
``encoding/json/jsontext``; the texts below are those of that implementation
(``v1/scanner.go``'s ``transformSyntacticError``, ``v1/inject.go``'s
``transformUnmarshalError``, ``jsontext``'s decoder and ``jsonwire``).

The pieces:

* :class:`_Stream` -- ``jsontext.Decoder.ReadValue`` over a ``bytes.Reader``:
  the grammar check of one top-level value, with Go's error texts and offsets.
  The decoder reads its input in chunks (64 bytes first, then growing), and a
  few error texts depend on what is in the buffer at the time (the first rune
  of an invalid character, the text of a truncated ``\\u`` escape), so the
  buffer management of ``jsontext`` is simulated too.
* :func:`_build_tree` -- the value (known to be valid) as a tree of nodes.
* :class:`_Decoder` -- ``json/v2``'s unmarshal under the v1 options
  (``DefaultOptionsV1`` plus ``RejectUnknownMembers``) into a declared type tree
  (:class:`GoStruct`, :class:`GoSlice`, ...): merge semantics (a later value in
  the stream overlays the earlier, maps merge keys, slices reuse the old
  elements), case-insensitive names, the first semantic error wins.
* Syntax error offsets (``SyntaxError.Offset``): the absolute offset of the
  offending text plus its length (one rune for an invalid character, the whole
  text of a bad escape sequence), or plus one for "exceeded max depth". Input
  ending inside a value is ``io.ErrUnexpectedEOF`` ("unexpected EOF", no offset);
  input that is only whitespace decodes nothing.
* Go's type errors: ``json: cannot unmarshal <what> into Go struct field
  <Root>.<path> of type <type>``, where ``<path>`` is the JSON pointer of the
  value with ``/`` replaced by ``.`` (names as written in the input, array
  indexes as numbers; "Go struct field " is left out when the last token is an
  array index, i.e. all digits), or ``... into Go value of type <type>`` at the
  top level.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "GO_ZERO_TIME_NS",
    "T_ANY",
    "T_BOOL",
    "T_DURATION",
    "T_FLOAT32",
    "T_FLOAT64",
    "T_INT",
    "T_INT8",
    "T_INT16",
    "T_INT32",
    "T_INT64",
    "T_STRING",
    "T_TIME",
    "T_UINT",
    "T_UINT8",
    "T_UINT16",
    "T_UINT32",
    "T_UINT64",
    "GoEnum",
    "GoJSONError",
    "GoMap",
    "GoPointer",
    "GoScalar",
    "GoSlice",
    "GoStruct",
    "GoSyntaxError",
    "GoType",
    "GoUnmarshalTypeError",
    "decode_request",
    "go_fold",
    "go_quote",
    "go_quote_rune",
    "go_unmarshal_string",
    "parse_go_time",
    "scan_values",
]


class GoJSONError(ValueError):
    """The input is not valid JSON, or a value does not fit its Go field type.

    ``str(err)`` is the text nats-server puts after ``"invalid JSON: "``.
    """


class GoSyntaxError(GoJSONError):
    """A ``*json.SyntaxError``: ``message`` is Go's text, ``offset`` its Offset;
    ``str()`` adds nats-server's ``" at offset N"``."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at offset {offset}")
        self.message = message
        self.offset = offset


class GoUnmarshalTypeError(GoJSONError):
    """A ``*json.UnmarshalTypeError``."""

    def __init__(self, value: str, type_name: str, struct: str = "", field_path: str = "") -> None:
        if struct or field_path:
            # Go's heuristic: a last token that looks like an array index means
            # the value was not a struct field.
            last = field_path[field_path.rfind(".") + 1 :]
            into = "" if last and last.strip("0123456789") == "" else "Go struct field "
            text = f"json: cannot unmarshal {value} into {into}{struct}.{field_path} of type {type_name}"
        else:
            text = f"json: cannot unmarshal {value} into Go value of type {type_name}"
        super().__init__(text)
        self.value = value
        self.type_name = type_name
        self.struct = struct
        self.field = field_path


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


def _decode_rune(b: bytes, i: int, end: int) -> tuple[int, int]:
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


def _full_rune(b: bytes, i: int, end: int) -> bool:
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


def _runes(b: bytes) -> Iterator[tuple[int, int]]:
    """``for _, r := range string(b)``: (rune, size) with invalid bytes as (RUNE_ERROR, 1)."""
    i, end = 0, len(b)
    while i < end:
        r, size = _decode_rune(b, i, end)
        yield r, size
        i += size


def _go_string(b: bytes) -> str:
    """``string(b)`` as a Python str: every invalid byte becomes U+FFFD."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(r) for r, _ in _runes(b))


# --- strconv quoting -------------------------------------------------------------


def _is_print(r: int) -> bool:
    """unicode.IsPrint / strconv.IsPrint: letters, marks, numbers, punctuation, symbols, ASCII space."""
    if r < 0x80:
        return 0x20 <= r < 0x7F
    if 0xD800 <= r <= 0xDFFF or r > 0x10FFFF:
        return False
    return chr(r).isprintable()  # Python: everything but C* and Z* (except space): the same set


_SPACES = frozenset([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def _is_space(r: int) -> bool:
    """unicode.IsSpace."""
    return r in _SPACES or 0x2000 <= r <= 0x200A


_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}


def _escaped_rune(r: int, quote: str) -> str:
    """strconv's appendEscapedRune (not ASCII-only, not graphic-only)."""
    if r == ord(quote) or r == 0x5C:
        return "\\" + chr(r)
    if _is_print(r):
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


def _go_bytes(s: str) -> bytes:
    """The Go bytes of a str (surrogate escapes from :func:`_raw_text` become raw bytes)."""
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def _raw_text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def go_quote(s: str | bytes) -> str:
    """Go's ``strconv.Quote`` (and ``fmt``'s ``%q`` of a string or []byte). A str may
    carry invalid bytes as surrogate escapes (as :class:`GoEnum` parsers get them)."""
    b = _go_bytes(s) if isinstance(s, str) else s
    out = ['"']
    i, end = 0, len(b)
    while i < end:
        r, size = _decode_rune(b, i, end)
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


def _quote_first_rune(b: bytes) -> str:
    """jsonwire.QuoteRune: the first rune of b, invalid bytes as '\\xNN'."""
    r, size = _decode_rune(b, 0, len(b))
    if r == RUNE_ERROR and size == 1:
        return f"'\\x{b[0]:x}'"
    return go_quote_rune(r)


# --- jsontext syntax errors ------------------------------------------------------


class _TextError:
    """jsonwire.InvalidTextError."""

    __slots__ = ("label", "what", "where")

    def __init__(self, label: str, what: bytes, where: str) -> None:
        self.label = label
        self.what = what
        self.where = where

    def text(self) -> str:
        runes = list(_runes(self.what))
        if len(runes) == 1:
            what = _quote_first_rune(self.what)
        elif any(r in (0x60, RUNE_ERROR) or _is_space(r) or not _is_print(r) for r, _ in runes):
            what = go_quote(self.what)
        else:
            what = "`" + _go_string(self.what) + "`"
        text = f"invalid {self.label} {what} {self.where}"
        return text.removesuffix(" ")


def _invalid_char(b: bytes, i: int, end: int, where: str) -> _TextError:
    _, size = _decode_rune(b, i, end)
    return _TextError("character", b[i : i + size], where)


def _invalid_escape(what: bytes) -> _TextError:
    return _TextError("surrogate pair" if len(what) > 6 else "escape sequence", what, "in string")


_EOF = "unexpected EOF"  # io.ErrUnexpectedEOF
_MAX_DEPTH = "exceeded max depth"
_MAX_NESTING_DEPTH = 10000

# v1's syntaxErrorReplacer: Go's strings.Replacer picks, at each position, the first
# matching pair in argument order, like a regular expression alternation.
_REPLACEMENTS = {
    "object name": "object key",
    "at start of value": "looking for beginning of value",
    "at start of string": "looking for beginning of object key string",
    "after object value": "after object key:value pair",
    "in number": "in numeric literal",
}
_REPLACER = re.compile("|".join(re.escape(k) for k in _REPLACEMENTS))


class _Syntax(Exception):
    def __init__(self, pos: int, err: _TextError | str) -> None:
        super().__init__(pos, err)
        self.pos = pos
        self.err = err

    def to_go(self) -> GoJSONError:
        """What ``json.Decoder.Decode`` returns (wrapped by nats-server)."""
        if self.err == _EOF:
            return GoJSONError("unexpected EOF")  # Decode returns io.ErrUnexpectedEOF, not a SyntaxError
        if isinstance(self.err, _TextError):
            msg = self.err.text()
            offset = self.pos + len(self.err.what)  # v1 offsets point after the invalid text
        else:
            msg = self.err
            offset = self.pos + 1
        cut = msg.find(" (expecting")
        if cut >= 0 and " in literal" not in msg:
            msg = msg[:cut]
        msg = _REPLACER.sub(lambda m: _REPLACEMENTS[m.group(0)], msg)
        return GoSyntaxError(msg, offset)


_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
# Runs of: whitespace; ConsumeSimpleString's printable ASCII without escapes (and without
# the <, >, & that v1 escaped); string bytes that need no attention.
_WS_RUN = re.compile(rb"[ \t\r\n]*")
_SIMPLE_RUN = re.compile(rb"[\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\x7f]*")
_PLAIN_RUN = re.compile(rb"[\x20\x21\x23-\x5b\x5d-\x7f]*")

# ConsumeNumberResumable states.
_N_INIT, _N_BEFORE_INT, _N_WITHIN_INT, _N_BEFORE_FRAC, _N_WITHIN_FRAC, _N_BEFORE_EXP, _N_WITHIN_EXP = range(7)


def _consume_simple_number(b: bytes, i: int, end: int) -> int:
    n = 0
    if end > i:
        c = b[i]
        if c == 0x30:
            n = 1
        elif 0x31 <= c <= 0x39:
            n = 1
            while i + n < end and b[i + n] in _DIGITS:
                n += 1
        else:
            return 0
        if i + n >= end or b[i + n] not in b".eE":
            return n
    return 0


def _consume_number_resumable(
    b: bytes, i: int, end: int, n: int, state: int
) -> tuple[int, int, _TextError | str | None]:
    length = end - i
    phase = 0
    if state > _N_INIT:
        if state in (_N_WITHIN_INT, _N_WITHIN_FRAC, _N_WITHIN_EXP):
            while length > n and b[i + n] in _DIGITS:
                n += 1
            if length <= n:
                return n, state, None
            state += 1
        if state == _N_BEFORE_INT:
            phase = 0
        elif state == _N_BEFORE_FRAC:
            phase = 1
        elif state == _N_BEFORE_EXP:
            phase = 2
        else:
            return n, state, None
    if phase == 0:
        resume = n
        if length > 0 and b[i] == 0x2D:
            n += 1
        if length <= n:
            return resume, _N_BEFORE_INT, _EOF
        c = b[i + n]
        if c == 0x30:
            n += 1
            state = _N_BEFORE_FRAC
        elif 0x31 <= c <= 0x39:
            n += 1
            while length > n and b[i + n] in _DIGITS:
                n += 1
            state = _N_WITHIN_INT
        else:
            return n, state, _invalid_char(b, i + n, end, "in number (expecting digit)")
        phase = 1
    if phase == 1:
        if length > n and b[i + n] == 0x2E:
            resume = n
            n += 1
            if length <= n:
                return resume, _N_BEFORE_FRAC, _EOF
            if b[i + n] not in _DIGITS:
                return n, state, _invalid_char(b, i + n, end, "in number (expecting digit)")
            n += 1
            while length > n and b[i + n] in _DIGITS:
                n += 1
            state = _N_WITHIN_FRAC
        phase = 2
    if length > n and b[i + n] in b"eE":
        resume = n
        n += 1
        if length > n and b[i + n] in b"+-":
            n += 1
        if length <= n:
            return resume, _N_BEFORE_EXP, _EOF
        if b[i + n] not in _DIGITS:
            return n, state, _invalid_char(b, i + n, end, "in number (expecting digit)")
        n += 1
        while length > n and b[i + n] in _DIGITS:
            n += 1
        state = _N_WITHIN_EXP
    return n, state, None


def _has_escaped_utf16_prefix(b: bytes) -> bool:
    for i, c in enumerate(b):
        if (i == 0 and c != 0x5C) or (i == 1 and c != 0x75) or (2 <= i < 6 and c not in _HEX):
            return False
    return True


def _consume_string_resumable(b: bytes, i: int, end: int, resume: int) -> tuple[int, _TextError | str | None]:
    """jsonwire.ConsumeStringResumable with validateUTF8=false (v1 allows invalid UTF-8)."""
    length = end - i
    if resume > 0:
        n = resume
    elif length == 0:
        return 0, _EOF
    elif b[i] == 0x22:
        n = 1
    else:
        return 0, _invalid_char(b, i, end, "at start of string (expecting '\"')")
    while length > n:
        m = _PLAIN_RUN.match(b, i + n, end)
        n = m.end() - i if m else n
        if length <= n:
            return n, _EOF
        c = b[i + n]
        if c == 0x22:
            return n + 1, None
        r, rn = _decode_rune(b, i + n, end)
        if rn > 1:
            n += rn
        elif c == 0x5C:
            resume = n
            if length < n + 2:
                return resume, _EOF
            e = b[i + n + 1]
            if e in b'/"\\bfnrt':
                n += 2
            elif e == 0x75:  # u
                if length < n + 6:
                    if _has_escaped_utf16_prefix(b[i + n : end]):
                        return resume, _EOF
                    return n, _invalid_escape(b[i + n : end])
                if any(x not in _HEX for x in b[i + n + 2 : i + n + 6]):
                    return n, _invalid_escape(b[i + n : i + n + 6])
                n += 6
            else:
                return n, _invalid_escape(b[i + n : i + n + 2])
        elif r == RUNE_ERROR:
            if not _full_rune(b, i + n, end):
                return n, _EOF
            n += 1
        else:  # r < ' '
            return n, _invalid_char(b, i + n, end, "in string (expecting non-control character)")
    return n, _EOF


_LITERALS = {0x6E: b"null", 0x66: b"false", 0x74: b"true"}


class _Stream:
    """``jsontext.Decoder`` reading a ``bytes.Reader``, as used by ``json.Decoder.Decode``.

    Positions are absolute offsets into ``data``; ``end`` is the end of what the
    decoder has buffered so far, and :meth:`_fetch` reads more exactly as
    ``decoderState.fetch`` does (same buffer sizes), so errors that depend on the
    buffer contents come out as Go's.
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.base = 0  # absolute offset of buf[0]
        self.blen = 0  # len(buf)
        self.cap = 0  # cap(buf)
        self.prev_start = 0  # relative to base
        self.prev_end = 0
        self.end = 0

    def _fetch(self) -> bool:
        if self.cap == 0:
            self.cap = 64
        grow = self.cap <= 4096 // 2 and self.cap < (self.base + self.prev_end) // 2
        grow = grow or (self.prev_start == 0 and self.blen >= 3 * self.cap // 4)
        if grow:
            self.cap *= 2
        self.blen -= self.prev_start
        self.base += self.prev_start
        self.prev_end -= self.prev_start
        self.prev_start = 0
        avail = len(self.data) - (self.base + self.blen)
        if avail <= 0:
            self.end = self.base + self.blen
            return False
        room = self.cap - self.blen
        if room <= 0:  # pragma: no cover - cannot happen with Go's growth rules
            raise AssertionError("jsontext buffer full")
        self.blen += min(avail, room)
        self.end = self.base + self.blen
        return True

    def _skip_ws(self, pos: int) -> int:
        m = _WS_RUN.match(self.data, pos, self.end)
        return m.end() if m else pos

    def _ws(self, pos: int) -> int:
        """consumeWhitespace: skip whitespace, fetching; raises at EOF."""
        while True:
            pos = self._skip_ws(pos)
            if pos < self.end:
                return pos
            if not self._fetch():
                raise _Syntax(pos, _EOF)

    def read_value(self) -> tuple[int, int] | None:
        """The next top-level value as (start, end), None at the end of the stream."""
        data = self.data
        if self.prev_start < self.prev_end and self.prev_start < self.blen:
            self.prev_start = self.prev_end  # invalidatePreviousRead
        pos = self._skip_ws(self.base + self.prev_end)
        if pos == self.end:
            try:
                pos = self._ws(pos)
            except _Syntax:
                return None  # io.EOF
        c = data[pos]
        if c in b":,":
            # Top-level values are not separated by delimiters.
            delim_pos = self._skip_ws(self.base + self.prev_end)
            raise _Syntax(delim_pos, _invalid_char(data, delim_pos, self.end, "at start of value"))
        start = pos
        pos = self._consume_value(pos)
        self.prev_start = start - self.base
        self.prev_end = pos - self.base
        return start, pos

    def _consume_string(self, pos: int) -> int:
        n = 0
        while True:
            n, err = _consume_string_resumable(self.data, pos, self.end, n)
            if err == _EOF:
                if not self._fetch():
                    raise _Syntax(pos + n, _EOF)
                continue
            if err is not None:
                raise _Syntax(pos + n, err)
            return pos + n

    def _consume_number(self, pos: int) -> int:
        n, state = 0, _N_INIT
        while True:
            n, state, err = _consume_number_resumable(self.data, pos, self.end, n, state)
            if err == _EOF or pos + n == self.end:
                may_terminate = err is None
                if not self._fetch():
                    if may_terminate:
                        return pos + n
                    raise _Syntax(pos, _EOF)
                continue
            if err is not None:
                raise _Syntax(pos + n, err)
            return pos + n

    def _consume_literal(self, pos: int, lit: bytes) -> int:
        data = self.data
        while True:
            end = self.end
            if end - pos >= len(lit) and data[pos : pos + len(lit)] == lit:
                return pos + len(lit)
            i = 0
            while i < end - pos and i < len(lit):
                if data[pos + i] != lit[i]:
                    where = f"in literal {lit.decode()} (expecting {go_quote_rune(lit[i])})"
                    raise _Syntax(pos + i, _invalid_char(data, pos + i, end, where))
                i += 1
            if not self._fetch():
                raise _Syntax(pos + i, _EOF)

    def _consume_value(self, pos: int) -> int:
        """consumeValue/consumeObject/consumeArray, iteratively (nesting may be 10000 deep)."""
        data = self.data
        stack = bytearray()  # open containers: '{' or '['
        expect_value = True
        while True:
            if expect_value:
                c = data[pos]
                if c == 0x22:
                    n = self._simple_string(pos)
                    pos = pos + n if n else self._consume_string(pos)
                elif c == 0x2D or 0x30 <= c <= 0x39:
                    n = _consume_simple_number(data, pos, self.end)
                    pos = self._consume_number(pos) if n == 0 or pos + n == self.end else pos + n
                elif c in _LITERALS:
                    pos = self._consume_literal(pos, _LITERALS[c])
                elif c == 0x7B or c == 0x5B:
                    if len(stack) + 1 == _MAX_NESTING_DEPTH + 1:
                        raise _Syntax(pos, _MAX_DEPTH)
                    pos = self._ws(pos + 1)
                    if data[pos] == c + 2:  # '}' or ']'
                        pos += 1
                    else:
                        stack.append(c)
                        if c == 0x7B:
                            pos = self._object_name(pos)
                        continue
                else:
                    raise _Syntax(pos, _invalid_char(data, pos, self.end, "at start of value"))
            # After a complete value.
            if not stack:
                return pos
            pos = self._ws(pos)
            c = data[pos]
            if stack[-1] == 0x7B:
                if c == 0x2C:
                    pos = self._object_name(self._ws(pos + 1))
                    expect_value = True
                elif c == 0x7D:
                    pos += 1
                    stack.pop()
                    expect_value = False
                else:
                    where = "after object value (expecting ',' or '}')"
                    raise _Syntax(pos, _invalid_char(data, pos, self.end, where))
            else:
                if c == 0x2C:
                    pos = self._ws(pos + 1)
                    expect_value = True
                elif c == 0x5D:
                    pos += 1
                    stack.pop()
                    expect_value = False
                else:
                    where = "after array element (expecting ',' or ']')"
                    raise _Syntax(pos, _invalid_char(data, pos, self.end, where))

    def _simple_string(self, pos: int) -> int:
        """ConsumeSimpleString over the buffered bytes: length, or 0."""
        data, end = self.data, self.end
        m = _SIMPLE_RUN.match(data, pos + 1, end)
        i = m.end() if m else pos + 1
        if i < end and data[i] == 0x22:
            return i + 1 - pos
        return 0

    def _object_name(self, pos: int) -> int:
        """A member name and its colon; returns the position of the value."""
        pos = self._ws(pos)
        n = self._simple_string(pos) if self.data[pos] == 0x22 else 0
        pos = pos + n if n else self._consume_string(pos)
        pos = self._ws(pos)
        if self.data[pos] != 0x3A:
            raise _Syntax(pos, _invalid_char(self.data, pos, self.end, "after object name (expecting ':')"))
        return self._ws(pos + 1)


def scan_values(data: bytes) -> Iterator[tuple[int, int]]:
    """The (start, end) offsets of each top-level JSON value in ``data``, checked the
    way ``json.Decoder`` checks them; raises :class:`GoJSONError` at the first
    syntax error (after yielding the values before it)."""
    stream = _Stream(data)
    while True:
        try:
            span = stream.read_value()
        except _Syntax as exc:
            raise exc.to_go() from None
        if span is None:
            return
        yield span


# --- a valid JSON value as a tree -------------------------------------------------


class _Node:
    __slots__ = ("end", "kind", "start", "val")

    def __init__(self, kind: int, start: int) -> None:
        self.kind = kind  # one of b'n', b't', b'f', b'"', b'0', b'{', b'['
        self.start = start
        self.end = start
        self.val: Any = None  # '"': unquoted str; '0': text; '{': [(name, node)]; '[': [node]


_K_NULL, _K_TRUE, _K_FALSE, _K_STR, _K_NUM, _K_OBJ, _K_ARR = b'ntf"0{['


def _string_end(data: bytes, pos: int) -> int:
    """End of the (valid) string starting at data[pos] == '"'."""
    i = pos + 1
    while True:
        q = data.find(b'"', i)
        bs = data.find(b"\\", i, q)
        if bs < 0:
            return q + 1
        i = bs + 2


def _unquote(data: bytes, start: int, end: int) -> str:
    """jsonwire.AppendUnquote of a valid string: invalid UTF-8 and unpaired
    surrogates become U+FFFD."""
    body = data[start + 1 : end - 1]
    if b"\\" not in body:
        return _go_string(body)
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        bs = body.find(b"\\", i)
        if bs < 0:
            out.append(_go_string(body[i:]))
            break
        if bs > i:
            out.append(_go_string(body[i:bs]))
        e = body[bs + 1]
        if e != 0x75:
            out.append({0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t"}.get(e, chr(e)))
            i = bs + 2
            continue
        v1 = int(body[bs + 2 : bs + 6], 16)
        i = bs + 6
        if 0xD800 <= v1 <= 0xDFFF:
            r = RUNE_ERROR
            if v1 < 0xDC00 and body[i : i + 2] == b"\\u" and i + 6 <= n and all(x in _HEX for x in body[i + 2 : i + 6]):
                v2 = int(body[i + 2 : i + 6], 16)
                if 0xDC00 <= v2 <= 0xDFFF:
                    r = 0x10000 + ((v1 - 0xD800) << 10) + (v2 - 0xDC00)
                    i += 6
            out.append(chr(r))
        else:
            out.append(chr(v1))
    return "".join(out)


def _build_tree(data: bytes, start: int, end: int) -> _Node:
    """Parse the valid JSON value data[start:end] without recursion."""
    stack: list[tuple[_Node, list[str]]] = []  # container, [pending member name]
    pos = start

    def ws(p: int) -> int:
        m = _WS_RUN.match(data, p)
        return m.end() if m else p

    def name(p: int) -> tuple[str, int]:
        q = _string_end(data, p)
        s = _unquote(data, p, q)
        p = ws(q)  # at ':'
        return s, ws(p + 1)

    while True:
        pos = ws(pos)
        c = data[pos]
        node = _Node(c if c not in b"-0123456789" else _K_NUM, pos)
        if c == _K_OBJ or c == _K_ARR:
            node.val = []
            pos = ws(pos + 1)
            if data[pos] != c + 2:
                pending = [""]
                if c == _K_OBJ:
                    pending[0], pos = name(pos)
                stack.append((node, pending))
                continue
            pos += 1
        elif c == _K_STR:
            pos = _string_end(data, pos)
            node.val = _unquote(data, node.start, pos)
        elif node.kind == _K_NUM:
            q = pos + 1
            while q < end and data[q] in b"0123456789.eE+-":
                q += 1
            node.val = data[pos:q].decode("ascii")
            pos = q
        else:
            pos += len(_LITERALS[c])
        node.end = pos
        # Attach completed values to their containers, closing those that end here.
        while True:
            if not stack:
                return node
            parent, pending = stack[-1]
            if parent.kind == _K_OBJ:
                parent.val.append((pending[0], node))
            else:
                parent.val.append(node)
            pos = ws(pos)
            if data[pos] == 0x2C:
                pos = ws(pos + 1)
                if parent.kind == _K_OBJ:
                    pending[0], pos = name(pos)
                break
            pos += 1
            parent.end = pos
            stack.pop()
            node = parent


# --- Go types -----------------------------------------------------------------------


class GoType:
    """A Go type that JSON can be decoded into."""

    __slots__ = ()

    @property
    def type_name(self) -> str:
        """``reflect.Type.String()``, as in error messages."""
        raise NotImplementedError

    def zero(self) -> Any:
        """The Go zero value (used for new slice and map elements)."""
        raise NotImplementedError


@dataclass(frozen=True)
class GoScalar(GoType):
    """A predeclared (or time) type: ``kind`` is bool, string, int, uint, float, time or any."""

    name: str
    kind: str
    bits: int = 64

    @property
    def type_name(self) -> str:
        return self.name

    def zero(self) -> Any:
        return _SCALAR_ZERO[self.kind]


# time.Time{} (January 1, year 1, 00:00:00 UTC) as Unix nanoseconds.
GO_ZERO_TIME_NS = -62135596800 * 1_000_000_000

_SCALAR_ZERO: dict[str, Any] = {
    "bool": False,
    "string": "",
    "int": 0,
    "uint": 0,
    "float": 0.0,
    "time": GO_ZERO_TIME_NS,
    "any": None,
}

T_BOOL = GoScalar("bool", "bool")
T_STRING = GoScalar("string", "string")
T_INT = GoScalar("int", "int", 64)
T_INT8 = GoScalar("int8", "int", 8)
T_INT16 = GoScalar("int16", "int", 16)
T_INT32 = GoScalar("int32", "int", 32)
T_INT64 = GoScalar("int64", "int", 64)
T_UINT = GoScalar("uint", "uint", 64)
T_UINT8 = GoScalar("uint8", "uint", 8)
T_UINT16 = GoScalar("uint16", "uint", 16)
T_UINT32 = GoScalar("uint32", "uint", 32)
T_UINT64 = GoScalar("uint64", "uint", 64)
T_FLOAT32 = GoScalar("float32", "float", 32)
T_FLOAT64 = GoScalar("float64", "float", 64)
#: ``time.Duration``: v1 decodes it as an int64 of nanoseconds.
T_DURATION = GoScalar("time.Duration", "int", 64)
#: ``time.Time``: an RFC 3339 string, decoded to Unix nanoseconds.
T_TIME = GoScalar("time.Time", "time")
#: ``any``: plain Python values (numbers as float, like Go's float64).
T_ANY = GoScalar("interface {}", "any")


@dataclass(frozen=True)
class GoSlice(GoType):
    elem: GoType

    @property
    def type_name(self) -> str:
        return "[]" + self.elem.type_name

    def zero(self) -> Any:
        return None


@dataclass(frozen=True)
class GoMap(GoType):
    """``map[string]elem``."""

    elem: GoType

    @property
    def type_name(self) -> str:
        return "map[string]" + self.elem.type_name

    def zero(self) -> Any:
        return None


@dataclass(frozen=True)
class GoPointer(GoType):
    """``*elem``: ``null`` sets it to None; otherwise decodes into the pointee
    (allocated if nil, merged into if not)."""

    elem: GoType

    @property
    def type_name(self) -> str:
        return "*" + self.elem.type_name

    def zero(self) -> Any:
        return None


def _qualified(go_name: str, package: str) -> str:
    return go_name if "." in go_name or not package else f"{package}.{go_name}"


@dataclass(frozen=True, eq=False)
class GoStruct(GoType):
    """A struct: ``fields`` maps JSON names to types, in declaration order (embedded
    structs flattened in). ``go_name`` is the type name (the root of error paths),
    ``package`` qualifies it in type names (``server.StreamConfigRequest``); a
    ``go_name`` with a dot is taken as already qualified."""

    go_name: str
    fields: Mapping[str, GoType]
    package: str = "server"
    _folded: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        folded: dict[str, str] = {}
        for name in self.fields:
            folded.setdefault(go_fold(name), name)  # the first field wins, like Go's order
        object.__setattr__(self, "_folded", folded)

    @property
    def type_name(self) -> str:
        return _qualified(self.go_name, self.package)

    @property
    def root_name(self) -> str:
        """``reflect.Type.Name()``: the name without its package."""
        return self.go_name.rpartition(".")[2]

    def zero(self) -> Any:
        return {}

    def field_for(self, key: str) -> str | None:
        if key in self.fields:
            return key
        return self._folded.get(go_fold(key))


@dataclass(frozen=True, eq=False)
class GoEnum(GoType):
    """A type with its own ``UnmarshalJSON``: ``parse`` gets the raw JSON text of
    the value (``null`` included; invalid UTF-8 bytes as surrogate escapes, so
    :func:`go_quote` gives Go's ``%q`` of the data) and returns the Go value or
    raises :class:`GoJSONError` with the method's exact error text (Go returns it
    unwrapped)."""

    go_name: str
    parse: Callable[[str], Any]
    package: str = "server"
    zero_value: Any = None

    @property
    def type_name(self) -> str:
        return _qualified(self.go_name, self.package)

    def zero(self) -> Any:
        return self.zero_value


# --- decoding --------------------------------------------------------------------


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


class _SliceValue(list):  # type: ignore[type-arg]
    """A decoded slice together with its backing array: v1 reuses (and merges into)
    the elements of the previous slice's capacity."""

    __slots__ = ("backing",)

    def __init__(self, items: list[Any], backing: list[Any]) -> None:
        super().__init__(items)
        self.backing = backing


_KIND_WORDS = {_K_STR: "string", _K_NUM: "number", _K_TRUE: "bool", _K_FALSE: "bool", _K_OBJ: "object", _K_ARR: "array"}


def _escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class _Decoder:
    def __init__(self, data: bytes, root: str, strict: bool) -> None:
        self.data = data
        self.root = root
        self.strict = strict

    def type_error(self, value: str, typ: GoType, path: list[str]) -> GoUnmarshalTypeError:
        if not path:
            return GoUnmarshalTypeError(value, typ.type_name)
        return GoUnmarshalTypeError(value, typ.type_name, self.root, ".".join(_escape_token(p) for p in path))

    def decode(self, node: _Node, typ: GoType, cur: Any, path: list[str]) -> Any:
        kind = node.kind
        if isinstance(typ, GoScalar):
            return self.scalar(node, typ, cur, path)
        if isinstance(typ, GoStruct):
            if kind == _K_NULL:
                return cur
            if kind != _K_OBJ:
                raise self.type_error(_KIND_WORDS[kind], typ, path)
            obj: dict[str, Any] = cur if isinstance(cur, dict) else {}
            for name, child in node.val:
                fname = typ.field_for(name)
                if fname is None:
                    if self.strict:
                        raise GoJSONError(f"json: unknown field {go_quote(name)}")
                    continue
                new = self.decode(child, typ.fields[fname], obj.get(fname, _UNSET), [*path, name])
                if new is not _UNSET:
                    obj[fname] = new
            return obj
        if isinstance(typ, GoPointer):
            if kind == _K_NULL:
                return None
            inner = cur if cur is not _UNSET and cur is not None else typ.elem.zero()
            return self.decode(node, typ.elem, inner, path)
        if isinstance(typ, GoSlice):
            if kind == _K_NULL:
                return None
            if kind != _K_ARR:
                raise self.type_error(_KIND_WORDS[kind], typ, path)
            backing: list[Any] = cur.backing if isinstance(cur, _SliceValue) else []
            if not node.val:
                return _SliceValue([], [])
            items = []
            for i, child in enumerate(node.val):
                old = backing[i] if i < len(backing) else typ.elem.zero()
                new = self.decode(child, typ.elem, old, [*path, str(i)])
                if i < len(backing):
                    backing[i] = new
                else:
                    backing.append(new)
                items.append(new)
            return _SliceValue(items, backing)
        if isinstance(typ, GoMap):
            if kind == _K_NULL:
                return None
            if kind != _K_OBJ:
                raise self.type_error(_KIND_WORDS[kind], typ, path)
            mapping: dict[str, Any] = cur if isinstance(cur, dict) else {}
            for key, child in node.val:
                mapping[key] = self.decode(child, typ.elem, typ.elem.zero(), [*path, key])
            return mapping
        if isinstance(typ, GoEnum):
            return typ.parse(_raw_text(self.data[node.start : node.end]))
        raise TypeError(f"not a Go type: {typ!r}")

    def scalar(self, node: _Node, typ: GoScalar, cur: Any, path: list[str]) -> Any:
        kind, k = node.kind, typ.kind
        if k == "any":
            return None if kind == _K_NULL else self.any_value(node, path)
        if kind == _K_NULL:
            return cur  # v1: null leaves non-nillable values alone
        if k == "bool":
            if kind == _K_TRUE or kind == _K_FALSE:
                return kind == _K_TRUE
        elif k == "string":
            if kind == _K_STR:
                return node.val
        elif k in ("int", "uint"):
            if kind == _K_NUM:
                number = _go_int(node.val, k == "int", typ.bits)
                if number is None:
                    raise self.type_error("number " + node.val, typ, path)
                return number
        elif k == "float":
            if kind == _K_NUM:
                number_f = _go_float(node.val, typ.bits)
                if number_f is None:
                    raise self.type_error("number " + node.val, typ, path)
                return number_f
        elif k == "time":
            if kind == _K_STR:
                return parse_go_time(node.val)
        else:  # pragma: no cover
            raise TypeError(f"unknown scalar kind {k!r}")
        raise self.type_error(_KIND_WORDS[kind], typ, path)

    def any_value(self, root: _Node, path: list[str]) -> Any:
        """The node as plain Python values, like Go's ``any`` (map[string]any, []any,
        float64, ...), in document order and without recursion (it may be deeply nested)."""
        Where = tuple[str, Any] | None  # a linked path (key, parent), cheap to extend

        def full_path(where: Where) -> list[str]:
            keys: list[str] = []
            while where is not None:
                keys.append(where[0])
                where = where[1]
            return path + keys[::-1]

        def leaf(node: _Node, where: Where) -> Any:
            if node.kind == _K_STR:
                return node.val
            if node.kind == _K_NUM:
                number = _go_float(node.val, 64)
                if number is None:
                    raise self.type_error("number " + node.val, T_FLOAT64, full_path(where))
                return number
            return {_K_NULL: None, _K_TRUE: True, _K_FALSE: False}[node.kind]

        def entries(node: _Node) -> Iterator[tuple[str, _Node]]:
            if node.kind == _K_OBJ:
                return iter(node.val)
            return ((str(i), child) for i, child in enumerate(node.val))

        if root.kind not in (_K_OBJ, _K_ARR):
            return leaf(root, None)
        out: Any = {} if root.kind == _K_OBJ else []
        stack: list[tuple[Iterator[tuple[str, _Node]], Any, Where]] = [(entries(root), out, None)]
        while stack:
            it, target, where = stack[-1]
            entry = next(it, None)
            if entry is None:
                stack.pop()
                continue
            key, child = entry
            sub: Where = (key, where)
            if child.kind in (_K_OBJ, _K_ARR):
                value: Any = {} if child.kind == _K_OBJ else []
                stack.append((entries(child), value, sub))
            else:
                value = leaf(child, sub)
            if isinstance(target, dict):
                target[key] = value
            else:
                target.append(value)
        return out


def _go_int(text: str, signed: bool, bits: int) -> int | None:
    """The integer a JSON number is for an int/uint of ``bits``, None if v1 rejects it."""
    neg = signed and text.startswith("-")
    digits = text[1:] if neg else text
    if not digits.isdigit() or not digits.isascii() or (digits[0] == "0" and digits != "0"):
        return None
    value = int(digits)
    if signed:
        limit = 1 << (bits - 1)
        if value > (limit if neg else limit - 1):
            return None
        return -value if neg else value
    return value if value <= (1 << bits) - 1 else None


def _go_float(text: str, bits: int) -> float | None:
    value = float(text)
    if bits == 32:
        # Rounded to float32 (via float64: may differ from Go in the last bit at the edges).
        value = float(struct.unpack("f", struct.pack("f", value))[0])
    return None if math.isinf(value) else value


def _export(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _export(v) for k, v in value.items()}
    if isinstance(value, _SliceValue):
        return [_export(v) for v in value]
    return value


def decode_request(data: bytes, struct: GoStruct, strict: bool = True) -> dict[str, Any]:
    """Decode a JetStream API request body into ``struct`` the way nats-server does.

    Returns the fields that were set (nested dicts for structs and maps, lists
    for slices, None for pointers, slices and maps set to null). Raises
    :class:`GoJSONError` whose ``str()`` is the server's text after
    ``"invalid JSON: "``. With ``strict`` (the server's default), unknown keys
    are an error.
    """
    if not isinstance(data, bytes):
        data = bytes(data)
    decoder = _Decoder(data, struct.root_name, strict)
    value: Any = {}
    for start, end in scan_values(data):
        value = decoder.decode(_build_tree(data, start, end), struct, value, [])
    return dict(_export(value))


def go_unmarshal_string(raw: str | bytes) -> str | None:
    """``json.Unmarshal(raw, &s)`` for a string ``s`` and a valid JSON value ``raw``
    (as custom ``UnmarshalJSON`` methods do): the string, None for ``null`` (s is
    left alone), else Go's error."""
    if isinstance(raw, str):
        raw = _go_bytes(raw)
    node = _build_tree(raw, 0, len(raw))
    if node.kind == _K_NULL:
        return None
    if node.kind != _K_STR:
        raise GoUnmarshalTypeError(_KIND_WORDS[node.kind], "string")
    return str(node.val)


# --- time.Time.UnmarshalText (RFC 3339) ---------------------------------------------

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
        r, size = _decode_rune(b, i, n)
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
    b = _go_bytes(text)
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
