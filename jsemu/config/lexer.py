"""nats-server's configuration lexer (``conf/lex.go``), state for state.

Why a port and not a grammar of our own: nats-server's answer to a malformed file is whatever
state its lexer was in when the input stopped making sense (``Unexpected EOF processing map
key.``, ``Expected a top-level value to end with a new line, comment or EOF, but got 'x'
instead.``), and which files are malformed at all follows from the same states (``port`` alone
is a key then EOF, ``port:`` an empty string). Reproducing every such line means running the
same machine.

Theory of operation, as in Go: a :class:`Lexer` holds the input, the ``start`` of the pending
item and the current ``pos``; a state is a function that reads characters (:meth:`Lexer.next`,
``backup``, ``peek``), may emit items and returns the next state. A stack of states says where
to go after a value, a comment or a block (``push``/``pop``). :meth:`Lexer.next_item` runs
states until an item is ready, so items are produced lazily as the parser asks for them (a
parser error on an early item wins over a lexer error further on, as in nats-server). An error
is an ``ERROR`` item and the end of lexing.

Positions: ``line`` counts from 1; an item's ``pos`` is its offset from the last new line
*character* (``lstart``), so columns after the first line are one more than on the first: the
quirk nats-server's ``FILE:LINE:COL`` prefixes carry. The end of input is the character
``"\\x00"`` (Go's ``eof = 0``), so a NUL in a file reads as the end, as it does there. Offsets
count characters where Go counts bytes: the same for ASCII files.
"""

from __future__ import annotations

import unicodedata
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

__all__ = ["EOF", "Item", "ItemType", "Lexer"]

EOF = "\x00"


class ItemType(IntEnum):
    """``itemType`` of lex.go, in its order."""

    ERROR = 0
    NIL = 1
    EOF = 2
    KEY = 3
    TEXT = 4
    STRING = 5
    BOOL = 6
    INTEGER = 7
    FLOAT = 8
    DATETIME = 9
    ARRAY_START = 10
    ARRAY_END = 11
    MAP_START = 12
    MAP_END = 13
    COMMENT_START = 14
    VARIABLE = 15
    INCLUDE = 16


@dataclass(slots=True)
class Item:
    typ: ItemType
    val: str
    line: int
    pos: int


State = Callable[["Lexer"], "State | None"]

_MAP_VAL_TERM_Q = '","'  # Go's %q of the terminators
_MAP_END_Q = '"}"'
_ARRAY_END_Q = '"]"'
#: Go's unicode.IsSpace for Latin-1; beyond it, the White_Space property.
_LATIN1_SPACE = frozenset("\t\n\v\f\r \x85\xa0")
_WHITE_SPACE = frozenset("\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(map(chr, range(0x2000, 0x200B)))


def is_space(r: str) -> bool:
    return r in _LATIN1_SPACE or (r > "\xff" and r in _WHITE_SPACE)


def is_digit(r: str) -> bool:
    return "0" <= r <= "9" or (r > "\xff" and unicodedata.category(r) == "Nd")


def is_whitespace(r: str) -> bool:
    return r in ("\t", " ")


def is_nl(r: str) -> bool:
    return r in ("\n", "\r")


def is_key_separator(r: str) -> bool:
    return r in ("=", ":")


def is_number_suffix(r: str) -> bool:
    return r in "kKmMgGtTpPeE" and r != ""


def _escape(r: str) -> str:
    """``escapeSpecial``: a rune in an error, a new line written as ``\\n``."""
    return "\\n" if r == "\n" else r


class Lexer:
    """The lexer of one input; :meth:`next_item` is the parser's only call."""

    def __init__(self, text: str) -> None:
        self.input = text
        self.start = 0
        self.pos = 0
        self.width = 0
        self.line = 1
        self.state: State | None = lex_top
        self.items: deque[Item] = deque()
        self.stack: list[State] = []
        self.string_parts: list[str] = []
        self.string_state: State | None = None
        self.lstart = 0
        self.ilstart = 0

    def next_item(self) -> Item:
        while not self.items:
            if self.state is None:  # lexing ended without an item (Go would block): the end
                return Item(ItemType.EOF, "", self.line, 0)
            self.state = self.state(self)
        return self.items.popleft()

    def push(self, state: State) -> None:
        self.stack.append(state)

    def pop(self) -> State | None:
        if not self.stack:
            return self.errorf("BUG in lexer: no states to pop.")
        return self.stack.pop()

    def emit(self, typ: ItemType) -> None:
        val = "".join(self.string_parts) + self.input[self.start : self.pos]
        pos = self.pos - self.ilstart - len(val)
        self.items.append(Item(typ, val, self.line, pos))
        self.start = self.pos
        self.ilstart = self.lstart

    def emit_string(self) -> None:
        if self.string_parts:
            final = "".join(self.string_parts) + self.input[self.start : self.pos]
            self.string_parts = []
        else:
            final = self.input[self.start : self.pos]
        pos = self.pos - self.ilstart - len(final)
        self.items.append(Item(ItemType.STRING, final, self.line, pos))
        self.start = self.pos
        self.ilstart = self.lstart

    def add_current_string_part(self, offset: int) -> None:
        self.string_parts.append(self.input[self.start : self.pos - offset])
        self.start = self.pos

    def add_string_part(self, s: str) -> State | None:
        self.string_parts.append(s)
        self.start = self.pos
        return self.string_state

    def has_escaped_parts(self) -> bool:
        return len(self.string_parts) > 0

    def next(self) -> str:
        if self.pos >= len(self.input):
            self.width = 0
            return EOF
        r = self.input[self.pos]
        if r == "\n":
            self.line += 1
            self.lstart = self.pos
        self.width = 1
        self.pos += 1
        return r

    def ignore(self) -> None:
        self.start = self.pos
        self.ilstart = self.lstart

    def backup(self) -> None:
        self.pos -= self.width
        if self.pos < len(self.input) and self.input[self.pos] == "\n":
            self.line -= 1

    def peek(self) -> str:
        r = self.next()
        self.backup()
        return r

    def errorf(self, message: str) -> State | None:
        """Emit an error (the caller has formatted it, runes through :func:`_escape`); no next
        state: lexing stops."""
        self.items.append(Item(ItemType.ERROR, message, self.line, self.pos - self.lstart))
        return None

    def is_bool(self) -> bool:
        return self.input[self.start : self.pos].lower() in ("true", "false", "on", "off", "yes", "no")

    def is_variable(self) -> bool:
        if self.start >= len(self.input):
            return False
        if self.input[self.start] == "$":
            self.start += 1
            return True
        return False

    def key_check_keyword(self, fall_through: State, push: State | None) -> State | None:
        if self.input[self.start : self.pos].lower() == "include":
            self.ignore()
            if push is not None:
                self.push(push)
            return lex_include_start
        self.emit(ItemType.KEY)
        return fall_through


def lex_skip(next_state: State) -> State:
    """``lexSkip``: ignore what was read, then ``next_state``."""

    def skip(lx: Lexer) -> State | None:
        lx.ignore()
        return next_state

    return skip


def _comment_or(lx: Lexer, back: State) -> bool:
    """After a ``/``: a second one starts a comment (``back`` pushed, True); else back up one."""
    if lx.next() == "/":
        lx.push(back)
        return True
    lx.backup()
    return False


def _eof_or_unexpected(lx: Lexer) -> State | None:
    if lx.pos > lx.start:
        return lx.errorf("Unexpected EOF.")
    lx.emit(ItemType.EOF)
    return None


def lex_top(lx: Lexer) -> State | None:
    r = lx.next()
    if is_space(r):
        return lex_skip(lex_top)
    if r == "{":
        lx.push(lex_top)
        return lex_skip(lex_block_start)
    if r == "#":
        lx.push(lex_top)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_top):
        return lex_comment_start
    if r in ("/", EOF):
        return _eof_or_unexpected(lx)
    lx.backup()
    lx.push(lex_top_value_end)
    return lex_key_start


def lex_top_value_end(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "#":
        lx.push(lex_top)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_top):
        return lex_comment_start
    if r == "/" or is_whitespace(r):
        return lex_top_value_end
    if is_nl(r) or r in (EOF, ";", ",", "}"):
        lx.ignore()
        return lex_top
    return lx.errorf(
        f"Expected a top-level value to end with a new line, comment or EOF, but got '{_escape(r)}' instead."
    )


def lex_block_start(lx: Lexer) -> State | None:
    r = lx.next()
    if is_space(r):
        return lex_skip(lex_block_start)
    if r == "{":
        lx.push(lex_block_end)
        return lex_skip(lex_block_start)
    if r == "}":
        lx.ignore()
        return lx.pop()
    if r == "#":
        lx.push(lex_block_start)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_block_start):
        return lex_comment_start
    if r in ("/", EOF):
        return _eof_or_unexpected(lx)
    lx.backup()
    lx.push(lex_block_value_end)
    return lex_key_start


def lex_block_value_end(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "#":
        lx.push(lex_block_value_end)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_block_value_end):
        return lex_comment_start
    if r == "/" or is_whitespace(r):
        return lex_block_value_end
    if is_nl(r) or r in (";", ","):
        lx.ignore()
        return lex_block_start
    if r == "}":
        lx.backup()
        return lex_block_end
    return lx.errorf(
        f"Expected a block-level value to end with a new line, comment or EOF, but got '{_escape(r)}' instead."
    )


def lex_block_end(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "#":
        lx.push(lex_block_start)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_block_start):
        return lex_comment_start
    if r == "/" or is_nl(r) or is_whitespace(r):
        return lex_block_end
    if r in (";", ","):
        lx.ignore()
        return lex_block_start
    if r == "}":
        lx.ignore()
        return lx.pop()
    return lx.errorf(f"Expected a block-level to end with a '}}', but got '{_escape(r)}' instead.")


def lex_key_start(lx: Lexer) -> State | None:
    r = lx.peek()
    if is_key_separator(r):
        return lx.errorf(f"Unexpected key separator '{_escape(r)}'")
    if is_space(r):
        lx.next()
        return lex_skip(lex_key_start)
    if r == '"':
        lx.next()
        return lex_skip(lex_dub_quoted_key)
    if r == "'":
        lx.next()
        return lex_skip(lex_quoted_key)
    lx.ignore()
    lx.next()
    return lex_key


def _quoted_key(quote: str) -> State:
    def state(lx: Lexer) -> State | None:
        r = lx.peek()
        if r == quote:
            lx.emit(ItemType.KEY)
            lx.next()
            return lex_skip(lex_key_end)
        if r == EOF:
            return _eof_or_unexpected(lx)
        lx.next()
        return state

    return state


lex_dub_quoted_key = _quoted_key('"')
lex_quoted_key = _quoted_key("'")


def lex_include_start(lx: Lexer) -> State | None:
    r = lx.next()
    if is_whitespace(r):
        return lex_skip(lex_include_start)
    lx.backup()
    return lex_include


def _include_quoted(quote: str, eof_message: str) -> State:
    def state(lx: Lexer) -> State | None:
        r = lx.next()
        if r == quote:
            lx.backup()
            lx.emit(ItemType.INCLUDE)
            lx.next()
            lx.ignore()
            return lx.pop()
        if r == EOF:
            return lx.errorf(eof_message)
        return state

    return state


lex_include_quoted_string = _include_quoted("'", "Unexpected EOF in quoted include")
lex_include_dub_quoted_string = _include_quoted('"', "Unexpected EOF in double quoted include")


def lex_include_string(lx: Lexer) -> State | None:
    r = lx.next()
    if is_nl(r) or r in (EOF, ";", "}") or is_whitespace(r):
        lx.backup()
        lx.emit(ItemType.INCLUDE)
        return lx.pop()
    if r == "'":
        lx.backup()
        lx.emit(ItemType.INCLUDE)
        lx.next()
        lx.ignore()
        return lx.pop()
    return lex_include_string


def lex_include(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "'":
        lx.ignore()
        return lex_include_quoted_string
    if r == '"':
        lx.ignore()
        return lex_include_dub_quoted_string
    if r == "[":
        return lx.errorf("Expected include value but found start of an array")
    if r == "{":
        return lx.errorf("Expected include value but found start of a map")
    if r == "(":
        return lx.errorf("Expected include value but found start of a block")
    if is_digit(r) or r == "-":
        return lx.errorf("Expected include value but found start of a number")
    if r == "\\":
        return lx.errorf("Expected include value but found escape sequence")
    if is_nl(r):
        return lx.errorf("Expected include value but found new line")
    lx.backup()
    return lex_include_string


def lex_key(lx: Lexer) -> State | None:
    r = lx.peek()
    if is_space(r):
        return lx.key_check_keyword(lex_key_end, None)
    if is_key_separator(r) or r == EOF:
        lx.emit(ItemType.KEY)
        return lex_key_end
    lx.next()
    return lex_key


def lex_key_end(lx: Lexer) -> State | None:
    r = lx.next()
    if is_space(r):
        return lex_skip(lex_key_end)
    if is_key_separator(r):
        return lex_skip(lex_value)
    if r == EOF:
        lx.emit(ItemType.EOF)
        return None
    lx.backup()
    return lex_value


def lex_value(lx: Lexer) -> State | None:
    r = lx.next()
    if is_whitespace(r):
        return lex_skip(lex_value)
    if r == "[":
        lx.ignore()
        lx.emit(ItemType.ARRAY_START)
        return lex_array_value
    if r == "{":
        lx.ignore()
        lx.emit(ItemType.MAP_START)
        return lex_map_key_start
    if r == "'":
        lx.ignore()
        return lex_quoted_string
    if r == '"':
        lx.ignore()
        lx.string_state = lex_dub_quoted_string
        return lex_dub_quoted_string
    if r == "-":
        return lex_neg_number_start
    if r == "(":
        lx.ignore()
        return lex_block
    if is_digit(r):
        lx.backup()
        return lex_number_or_date_or_string_or_ip_start
    if r == ".":
        return lx.errorf("Floats must start with a digit")
    if is_nl(r):
        return lx.errorf("Expected value but found new line")
    lx.backup()
    lx.string_state = lex_string
    return lex_string


def lex_array_value(lx: Lexer) -> State | None:
    r = lx.next()
    if is_space(r):
        return lex_skip(lex_array_value)
    if r == "#":
        lx.push(lex_array_value)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_array_value):
        return lex_comment_start
    if r in ("/", ","):
        return lx.errorf("Unexpected array value terminator ','.")
    if r == "]":
        return lex_array_end
    lx.backup()
    lx.push(lex_array_value_end)
    return lex_value


def lex_array_value_end(lx: Lexer) -> State | None:
    r = lx.next()
    if is_whitespace(r):
        return lex_skip(lex_array_value_end)
    if r == "#":
        lx.push(lex_array_value_end)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_array_value_end):
        return lex_comment_start
    if r in ("/", ",") or is_nl(r):
        return lex_skip(lex_array_value)
    if r == "]":
        return lex_array_end
    return lx.errorf(
        f"Expected an array value terminator {_MAP_VAL_TERM_Q} or an array terminator {_ARRAY_END_Q}, "
        f"but got '{_escape(r)}' instead."
    )


def lex_array_end(lx: Lexer) -> State | None:
    lx.ignore()
    lx.emit(ItemType.ARRAY_END)
    return lx.pop()


def lex_map_key_start(lx: Lexer) -> State | None:
    r = lx.peek()
    if is_key_separator(r):
        return lx.errorf(f"Unexpected key separator '{_escape(r)}'.")
    if r == "]":
        return lx.errorf(f"Unexpected array end '{r}' processing map.")
    if is_space(r):
        lx.next()
        return lex_skip(lex_map_key_start)
    if r == "}":
        lx.next()
        return lex_skip(lex_map_end)
    if r == "#":
        lx.next()
        lx.push(lex_map_key_start)
        return lex_comment_start
    if r == "/":
        lx.next()
        if lx.next() == "/":
            lx.push(lex_map_key_start)
            return lex_comment_start
        lx.backup()
        # Go's switch ends here (no fallthrough): the key starts at the current position
    elif r == "'":
        lx.next()
        return lex_skip(lex_map_quoted_key)
    elif r == '"':
        lx.next()
        return lex_skip(lex_map_dub_quoted_key)
    elif r == EOF:
        return lx.errorf("Unexpected EOF processing map.")
    lx.ignore()
    lx.next()
    return lex_map_key


def _map_quoted_key(quote: str, eof_message: str) -> State:
    def state(lx: Lexer) -> State | None:
        r = lx.peek()
        if r == EOF:
            return lx.errorf(eof_message)
        if r == quote:
            lx.emit(ItemType.KEY)
            lx.next()
            return lex_skip(lex_map_key_end)
        lx.next()
        return state

    return state


lex_map_quoted_key = _map_quoted_key("'", "Unexpected EOF processing quoted map key.")
lex_map_dub_quoted_key = _map_quoted_key('"', "Unexpected EOF processing double quoted map key.")


def lex_map_key(lx: Lexer) -> State | None:
    r = lx.peek()
    if r == EOF:
        return lx.errorf("Unexpected EOF processing map key.")
    if is_space(r):
        return lx.key_check_keyword(lex_map_key_end, lex_map_value_end)
    if is_key_separator(r):
        lx.emit(ItemType.KEY)
        return lex_map_key_end
    lx.next()
    return lex_map_key


def lex_map_key_end(lx: Lexer) -> State | None:
    r = lx.next()
    if is_space(r):
        return lex_skip(lex_map_key_end)
    if is_key_separator(r):
        return lex_skip(lex_map_value)
    lx.backup()
    return lex_map_value


def lex_map_value(lx: Lexer) -> State | None:
    r = lx.next()
    if is_space(r):
        return lex_skip(lex_map_value)
    if r == ",":
        return lx.errorf('Unexpected map value terminator ",".')
    if r == "}":
        return lex_skip(lex_map_end)
    lx.backup()
    lx.push(lex_map_value_end)
    return lex_value


def lex_map_value_end(lx: Lexer) -> State | None:
    r = lx.next()
    if is_whitespace(r):
        return lex_skip(lex_map_value_end)
    if r == "#":
        lx.push(lex_map_value_end)
        return lex_comment_start
    if r == "/" and _comment_or(lx, lex_map_value_end):
        return lex_comment_start
    if r in ("/", ";", ",") or is_nl(r):
        return lex_skip(lex_map_key_start)
    if r == "}":
        return lex_skip(lex_map_end)
    return lx.errorf(
        f"Expected a map value terminator {_MAP_VAL_TERM_Q} or a map terminator {_MAP_END_Q}, "
        f"but got '{_escape(r)}' instead."
    )


def lex_map_end(lx: Lexer) -> State | None:
    lx.ignore()
    lx.emit(ItemType.MAP_END)
    return lx.pop()


def lex_quoted_string(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "'":
        lx.backup()
        lx.emit(ItemType.STRING)
        lx.next()
        lx.ignore()
        return lx.pop()
    if r == EOF:
        return _eof_or_unexpected(lx)
    return lex_quoted_string


def lex_dub_quoted_string(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "\\":
        lx.add_current_string_part(1)
        return lex_string_escape
    if r == '"':
        lx.backup()
        lx.emit_string()
        lx.next()
        lx.ignore()
        return lx.pop()
    if r == EOF:
        return _eof_or_unexpected(lx)
    return lex_dub_quoted_string


def lex_string(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "\\":
        lx.add_current_string_part(1)
        return lex_string_escape
    if is_nl(r) or r in (EOF, ";", ",", "]", "}") or is_whitespace(r):
        lx.backup()
        if lx.has_escaped_parts():
            lx.emit_string()
        elif lx.is_bool():
            lx.emit(ItemType.BOOL)
        elif lx.is_variable():
            lx.emit(ItemType.VARIABLE)
        else:
            lx.emit_string()
        return lx.pop()
    if r == "'":
        lx.backup()
        lx.emit_string()
        lx.next()
        lx.ignore()
        return lx.pop()
    return lex_string


def lex_block(lx: Lexer) -> State | None:
    r = lx.next()
    if r == ")":
        lx.backup()
        lx.backup()
        if lx.next() != "\n":
            lx.next()
            return lex_block
        lx.next()
        if lx.next() in ("\n", EOF):
            lx.backup()
            lx.backup()
            lx.emit(ItemType.STRING)
            lx.next()
            lx.ignore()
            return lx.pop()
        lx.backup()
    elif r == EOF:
        return lx.errorf("Unexpected EOF processing block.")
    return lex_block


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", '"': '"', "\\": "\\"}


def lex_string_escape(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "x":
        return lex_string_binary
    if r in _ESCAPES:
        return lx.add_string_part(_ESCAPES[r])
    return lx.errorf(
        f"Invalid escape character '{_escape(r)}'. Only the following escape characters are allowed: "
        '\\xXX, \\t, \\n, \\r, \\", \\\\.'
    )


def lex_string_binary(lx: Lexer) -> State | None:
    if is_nl(lx.next()) or is_nl(lx.next()):
        return lx.errorf("Expected two hexadecimal digits after '\\x', but hit end of line")
    digits = lx.input[lx.pos - 2 : lx.pos]
    if len(digits) != 2 or any(c not in "0123456789abcdefABCDEF" for c in digits):
        return lx.errorf(f"Expected two hexadecimal digits after '\\x', but got '{digits}'")
    lx.add_string_part(chr(int(digits, 16)))
    return lx.string_state


def _digit_first(lx: Lexer, then: State) -> State | None:
    r = lx.next()
    if not is_digit(r):
        if r == ".":
            return lx.errorf("Floats must start with a digit, not '.'.")
        return lx.errorf(f"Expected a digit but got '{_escape(r)}'.")
    return then


def lex_number_or_date_or_string_or_ip_start(lx: Lexer) -> State | None:
    return _digit_first(lx, lex_number_or_date_or_string_or_ip)


def _number_ends(r: str) -> bool:
    return is_nl(r) or r in (EOF, "}", ";", ",") or is_whitespace(r) or is_digit(r)


def lex_number_or_date_or_string_or_ip(lx: Lexer) -> State | None:
    r = lx.next()
    if r == "-":
        if lx.pos - lx.start != 5:
            return lx.errorf("All ISO8601 dates must be in full Zulu form.")
        return lex_date_after_year
    if is_digit(r):
        return lex_number_or_date_or_string_or_ip
    if r == ".":
        return lex_float_start
    if is_number_suffix(r):
        return lex_convenient_number
    if not _number_ends(r):
        lx.string_state = lex_string
        return lex_string
    lx.backup()
    lx.emit(ItemType.INTEGER)
    return lx.pop()


def lex_convenient_number(lx: Lexer) -> State | None:
    r = lx.next()
    if r in ("b", "B", "i", "I"):
        return lex_convenient_number
    lx.backup()
    # 2.15.1 (nats-server PR 8263): a digit after the suffix ("1m30s") makes it a string too
    if _number_ends(r) and not is_digit(r):
        lx.emit(ItemType.INTEGER)
        return lx.pop()
    lx.string_state = lex_string
    return lex_string


_DATE_FORMAT = "00-00T00:00:00Z"


def lex_date_after_year(lx: Lexer) -> State | None:
    for f in _DATE_FORMAT:
        r = lx.next()
        if f == "0":
            if not is_digit(r):
                return lx.errorf(f"Expected digit in ISO8601 datetime, but found '{_escape(r)}' instead.")
        elif f != r:
            return lx.errorf(f"Expected '{f}' in ISO8601 datetime, but found '{_escape(r)}' instead.")
    lx.emit(ItemType.DATETIME)
    return lx.pop()


def lex_neg_number_start(lx: Lexer) -> State | None:
    return _digit_first(lx, lex_neg_number)


def lex_neg_number(lx: Lexer) -> State | None:
    r = lx.next()
    if is_digit(r):
        return lex_neg_number
    if r == ".":
        return lex_float_start
    if is_number_suffix(r):
        return lex_convenient_number
    lx.backup()
    lx.emit(ItemType.INTEGER)
    return lx.pop()


def lex_float_start(lx: Lexer) -> State | None:
    r = lx.next()
    if not is_digit(r):
        return lx.errorf(f"Floats must have a digit after the '.', but got '{_escape(r)}' instead.")
    return lex_float


def lex_float(lx: Lexer) -> State | None:
    r = lx.next()
    if is_digit(r):
        return lex_float
    if r == ".":
        return lex_ip_addr
    lx.backup()
    lx.emit(ItemType.FLOAT)
    return lx.pop()


def lex_ip_addr(lx: Lexer) -> State | None:
    r = lx.next()
    if is_digit(r) or r in (".", ":", "-"):
        return lex_ip_addr
    lx.backup()
    lx.emit(ItemType.STRING)
    return lx.pop()


def lex_comment_start(lx: Lexer) -> State | None:
    lx.ignore()
    lx.emit(ItemType.COMMENT_START)
    return lex_comment


def lex_comment(lx: Lexer) -> State | None:
    r = lx.peek()
    if is_nl(r) or r == EOF:
        lx.emit(ItemType.TEXT)
        return lx.pop()
    lx.next()
    return lex_comment
