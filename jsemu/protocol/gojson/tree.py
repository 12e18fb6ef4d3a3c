"""A JSON value the scanner has passed, as a tree of nodes for the decoder.

The decoder needs every value twice over: decoded (strings unquoted the way
``jsonwire.AppendUnquote`` does: invalid UTF-8 and unpaired surrogates become U+FFFD)
and as its raw text (a number keeps its source, so the integer and float rules can be
applied exactly; a :class:`~.types.GoEnum` gets the bytes its ``UnmarshalJSON`` would).
A node keeps both. The input is known to be valid, so :func:`build_tree` checks
nothing; it walks with an explicit stack because values may nest 10000 deep.
"""

from __future__ import annotations

from typing import Any

from .runes import RUNE_ERROR, go_str
from .scanner import HEX_DIGITS, LITERALS, WS_RUN

__all__ = ["K_ARR", "K_FALSE", "K_NULL", "K_NUM", "K_OBJ", "K_STR", "K_TRUE", "Node", "build_tree"]


class Node:
    """One JSON value: its kind (a ``K_*`` byte), its span in the input and its contents."""

    __slots__ = ("end", "kind", "start", "val")

    def __init__(self, kind: int, start: int) -> None:
        self.kind = kind  # one of b'n', b't', b'f', b'"', b'0', b'{', b'['
        self.start = start
        self.end = start
        self.val: Any = None  # '"': unquoted str; '0': text; '{': [(name, node)]; '[': [node]


K_NULL, K_TRUE, K_FALSE, K_STR, K_NUM, K_OBJ, K_ARR = b'ntf"0{['


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
        return go_str(body)
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        bs = body.find(b"\\", i)
        if bs < 0:
            out.append(go_str(body[i:]))
            break
        if bs > i:
            out.append(go_str(body[i:bs]))
        e = body[bs + 1]
        if e != 0x75:
            out.append({0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t"}.get(e, chr(e)))
            i = bs + 2
            continue
        v1 = int(body[bs + 2 : bs + 6], 16)
        i = bs + 6
        if 0xD800 <= v1 <= 0xDFFF:
            r = RUNE_ERROR
            if (
                v1 < 0xDC00
                and body[i : i + 2] == b"\\u"
                and i + 6 <= n
                and all(x in HEX_DIGITS for x in body[i + 2 : i + 6])
            ):
                v2 = int(body[i + 2 : i + 6], 16)
                if 0xDC00 <= v2 <= 0xDFFF:
                    r = 0x10000 + ((v1 - 0xD800) << 10) + (v2 - 0xDC00)
                    i += 6
            out.append(chr(r))
        else:
            out.append(chr(v1))
    return "".join(out)


def build_tree(data: bytes, start: int, end: int) -> Node:
    """Parse the valid JSON value data[start:end] without recursion."""
    stack: list[tuple[Node, list[str]]] = []  # container, [pending member name]
    pos = start

    def ws(p: int) -> int:
        m = WS_RUN.match(data, p)
        return m.end() if m else p

    def name(p: int) -> tuple[str, int]:
        q = _string_end(data, p)
        s = _unquote(data, p, q)
        p = ws(q)  # at ':'
        return s, ws(p + 1)

    while True:
        pos = ws(pos)
        c = data[pos]
        node = Node(c if c not in b"-0123456789" else K_NUM, pos)
        if c == K_OBJ or c == K_ARR:
            node.val = []
            pos = ws(pos + 1)
            if data[pos] != c + 2:
                pending = [""]
                if c == K_OBJ:
                    pending[0], pos = name(pos)
                stack.append((node, pending))
                continue
            pos += 1
        elif c == K_STR:
            pos = _string_end(data, pos)
            node.val = _unquote(data, node.start, pos)
        elif node.kind == K_NUM:
            q = pos + 1
            while q < end and data[q] in b"0123456789.eE+-":
                q += 1
            node.val = data[pos:q].decode("ascii")
            pos = q
        else:
            pos += len(LITERALS[c])
        node.end = pos
        # Attach completed values to their containers, closing those that end here.
        while True:
            if not stack:
                return node
            parent, pending = stack[-1]
            if parent.kind == K_OBJ:
                parent.val.append((pending[0], node))
            else:
                parent.val.append(node)
            pos = ws(pos)
            if data[pos] == 0x2C:
                pos = ws(pos + 1)
                if parent.kind == K_OBJ:
                    pending[0], pos = name(pos)
                break
            pos += 1
            parent.end = pos
            stack.pop()
            node = parent
