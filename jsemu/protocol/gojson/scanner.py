"""The grammar check of ``json.Decoder``: where each top-level value starts and ends, or
Go's ``*json.SyntaxError`` for the first thing wrong.

nats-server is built with Go >= 1.25, whose ``encoding/json`` (v1) runs on
``encoding/json/v2`` and ``encoding/json/jsontext``; the texts here are that
implementation's (``jsontext``'s decoder and ``jsonwire``, then v1's
``transformSyntacticError`` rewording them). :class:`_Stream` is
``jsontext.Decoder.ReadValue`` over a ``bytes.Reader``, as ``json.Decoder.Decode`` uses it.

Theory of operation:

* Go reads its input in chunks (64 bytes first, then growing), and a few error texts
  depend on what is in the buffer at the time (the first rune of an invalid character,
  the text of a truncated ``\\u`` escape). So :meth:`_Stream._fetch` reproduces
  ``decoderState.fetch``'s buffer sizes, and the ``_consume_*`` functions are
  ``jsonwire``'s resumable consumers: they stop at the end of the buffer and resume
  after a fetch, exactly where Go's do.
* An error is raised as :class:`_Syntax` (a position and a ``jsonwire`` text) and turned
  into Go's value only at the edge (:meth:`_Syntax.to_go`): the offset is that of the
  offending text plus its length (one rune for an invalid character, the whole of a bad
  escape sequence), or plus one for "exceeded max depth". Input ending inside a value is
  ``io.ErrUnexpectedEOF`` ("unexpected EOF", no offset); input that is only whitespace
  holds no value.
* Values nest up to 10000 deep, so containers are walked with an explicit stack.
* The common shapes (a simple string, a simple number) are matched by one regular
  expression or a short loop before the byte-by-byte consumers run: every request body
  goes through here.

:func:`scan_values` is the public face: the decoder builds a tree of each value it
yields, and Direct Get, the unpin request and the system account's request options call
it themselves to count the values of a body before Go's ``json.Unmarshal`` would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .errors import GoJSONError, GoSyntaxError
from .runes import RUNE_ERROR, decode_rune, full_rune, go_quote, go_quote_rune, go_str, is_print, is_space, iter_runes

__all__ = ["HEX_DIGITS", "LITERALS", "WS_RUN", "quote_first_rune", "scan_values"]


# --- jsonwire's error texts, and v1's rewording of them ---------------------------


def quote_first_rune(b: bytes) -> str:
    """jsonwire.QuoteRune: the first rune of b, invalid bytes as '\\xNN'."""
    r, size = decode_rune(b, 0, len(b))
    if r == RUNE_ERROR and size == 1:
        return f"'\\x{b[0]:x}'"
    return go_quote_rune(r)


class _TextError:
    """jsonwire.InvalidTextError."""

    __slots__ = ("label", "what", "where")

    def __init__(self, label: str, what: bytes, where: str) -> None:
        self.label = label
        self.what = what
        self.where = where

    def text(self) -> str:
        runes = list(iter_runes(self.what))
        if len(runes) == 1:
            what = quote_first_rune(self.what)
        elif any(r in (0x60, RUNE_ERROR) or is_space(r) or not is_print(r) for r, _ in runes):
            what = go_quote(self.what)
        else:
            what = "`" + go_str(self.what) + "`"
        text = f"invalid {self.label} {what} {self.where}"
        return text.removesuffix(" ")


def _invalid_char(b: bytes, i: int, end: int, where: str) -> _TextError:
    _, size = decode_rune(b, i, end)
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


# --- jsonwire's resumable consumers: stop at the buffer's end, resume after a fetch ---

_DIGITS = frozenset(b"0123456789")
HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
# Runs of: whitespace; ConsumeSimpleString's printable ASCII without escapes (and without
# the <, >, & that v1 escaped); string bytes that need no attention.
WS_RUN = re.compile(rb"[ \t\r\n]*")
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
        if (i == 0 and c != 0x5C) or (i == 1 and c != 0x75) or (2 <= i < 6 and c not in HEX_DIGITS):
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
        r, rn = decode_rune(b, i + n, end)
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
                if any(x not in HEX_DIGITS for x in b[i + n + 2 : i + n + 6]):
                    return n, _invalid_escape(b[i + n : i + n + 6])
                n += 6
            else:
                return n, _invalid_escape(b[i + n : i + n + 2])
        elif r == RUNE_ERROR:
            if not full_rune(b, i + n, end):
                return n, _EOF
            n += 1
        else:  # r < ' '
            return n, _invalid_char(b, i + n, end, "in string (expecting non-control character)")
    return n, _EOF


# --- the decoder over its buffer -------------------------------------------------

LITERALS = {0x6E: b"null", 0x66: b"false", 0x74: b"true"}


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
        m = WS_RUN.match(self.data, pos, self.end)
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
                elif c in LITERALS:
                    pos = self._consume_literal(pos, LITERALS[c])
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
