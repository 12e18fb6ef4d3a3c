"""Decode a request body into a declared Go type exactly as nats-server does, errors included.

nats-server decodes JetStream API requests with::

    dec := json.NewDecoder(bytes.NewReader(msg))
    dec.DisallowUnknownFields()
    for { if err := dec.Decode(v); err != nil { if err == io.EOF { return nil }; ... } }

and replies ``"invalid JSON: " + err.Error()``. :func:`decode_request` is that loop:
the scanner finds each top-level value (or Go's syntax error), the tree builder turns
it into nodes, and :class:`_Decoder` is ``json/v2``'s unmarshal under the v1 options
(``DefaultOptionsV1`` plus ``RejectUnknownMembers``) into a :mod:`.types` tree:

* merge semantics: a later value in the stream overlays the earlier, maps merge keys,
  slices reuse (and merge into) the old elements, ``null`` leaves a non-nillable
  value alone and sets a pointer, slice or map to nil;
* names match exactly, else case-insensitively; the first semantic error wins.

With ``strict=False`` unknown names are skipped: that is ``json.Unmarshal``, which
nats-server uses for pull requests, NAK options, Direct Get and unpin requests; its
callers first check with :func:`~.scanner.scan_values` that the body holds exactly one
value, as ``json.Unmarshal`` requires.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from typing import Any

from .errors import GoJSONError, GoSyntaxError, GoUnmarshalTypeError
from .rfc3339 import parse_go_time
from .runes import go_bytes, go_quote, raw_text
from .scanner import quote_first_rune, scan_values
from .tree import K_ARR, K_FALSE, K_NULL, K_NUM, K_OBJ, K_STR, K_TRUE, Node, build_tree
from .types import T_FLOAT64, GoEnum, GoMap, GoPointer, GoScalar, GoSlice, GoStruct, GoType

__all__ = ["decode_request", "go_unmarshal_string", "unmarshal_request"]


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


_KIND_WORDS = {K_STR: "string", K_NUM: "number", K_TRUE: "bool", K_FALSE: "bool", K_OBJ: "object", K_ARR: "array"}


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

    def decode(self, node: Node, typ: GoType, cur: Any, path: list[str]) -> Any:
        kind = node.kind
        if isinstance(typ, GoScalar):
            return self.scalar(node, typ, cur, path)
        if isinstance(typ, GoStruct):
            if kind == K_NULL:
                return cur
            if kind != K_OBJ:
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
            if kind == K_NULL:
                return None
            inner = cur if cur is not _UNSET and cur is not None else typ.elem.zero()
            return self.decode(node, typ.elem, inner, path)
        if isinstance(typ, GoSlice):
            if kind == K_NULL:
                return None
            if kind != K_ARR:
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
            if kind == K_NULL:
                return None
            if kind != K_OBJ:
                raise self.type_error(_KIND_WORDS[kind], typ, path)
            mapping: dict[str, Any] = cur if isinstance(cur, dict) else {}
            for key, child in node.val:
                mapping[key] = self.decode(child, typ.elem, typ.elem.zero(), [*path, key])
            return mapping
        if isinstance(typ, GoEnum):
            return typ.parse(raw_text(self.data[node.start : node.end]))
        raise TypeError(f"not a Go type: {typ!r}")

    def scalar(self, node: Node, typ: GoScalar, cur: Any, path: list[str]) -> Any:
        kind, k = node.kind, typ.kind
        if k == "any":
            return None if kind == K_NULL else self.any_value(node, path)
        if kind == K_NULL:
            return cur  # v1: null leaves non-nillable values alone
        if k == "bool":
            if kind == K_TRUE or kind == K_FALSE:
                return kind == K_TRUE
        elif k == "string":
            if kind == K_STR:
                return node.val
        elif k in ("int", "uint"):
            if kind == K_NUM:
                number = _go_int(node.val, k == "int", typ.bits)
                if number is None:
                    raise self.type_error("number " + node.val, typ, path)
                return number
        elif k == "float":
            if kind == K_NUM:
                number_f = _go_float(node.val, typ.bits)
                if number_f is None:
                    raise self.type_error("number " + node.val, typ, path)
                return number_f
        elif k == "time":
            if kind == K_STR:
                return parse_go_time(node.val)
        else:  # pragma: no cover
            raise TypeError(f"unknown scalar kind {k!r}")
        raise self.type_error(_KIND_WORDS[kind], typ, path)

    def any_value(self, root: Node, path: list[str]) -> Any:
        """The node as plain Python values, like Go's ``any`` (map[string]any, []any,
        float64, ...), in document order and without recursion (it may be deeply nested)."""
        Where = tuple[str, Any] | None  # a linked path (key, parent), cheap to extend

        def full_path(where: Where) -> list[str]:
            keys: list[str] = []
            while where is not None:
                keys.append(where[0])
                where = where[1]
            return path + keys[::-1]

        def leaf(node: Node, where: Where) -> Any:
            if node.kind == K_STR:
                return node.val
            if node.kind == K_NUM:
                number = _go_float(node.val, 64)
                if number is None:
                    raise self.type_error("number " + node.val, T_FLOAT64, full_path(where))
                return number
            return {K_NULL: None, K_TRUE: True, K_FALSE: False}[node.kind]

        def entries(node: Node) -> Iterator[tuple[str, Node]]:
            if node.kind == K_OBJ:
                return iter(node.val)
            return ((str(i), child) for i, child in enumerate(node.val))

        if root.kind not in (K_OBJ, K_ARR):
            return leaf(root, None)
        out: Any = {} if root.kind == K_OBJ else []
        stack: list[tuple[Iterator[tuple[str, Node]], Any, Where]] = [(entries(root), out, None)]
        while stack:
            it, target, where = stack[-1]
            entry = next(it, None)
            if entry is None:
                stack.pop()
                continue
            key, child = entry
            sub: Where = (key, where)
            if child.kind in (K_OBJ, K_ARR):
                value: Any = {} if child.kind == K_OBJ else []
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
        value = decoder.decode(build_tree(data, start, end), struct, value, [])
    return dict(_export(value))


def unmarshal_request(data: bytes, struct: GoStruct) -> dict[str, Any]:
    """``json.Unmarshal(data, &req)`` (not the API's strict ``json.Decoder``), as
    ``nextReqFromMsg`` reads a pull request: exactly one value, unknown keys ignored, and
    Unmarshal's own texts for broken input (no offset; a cut-off value is "unexpected end
    of JSON input"; anything after the value is "invalid character ... after top-level
    value")."""
    values = scan_values(data)
    try:
        first = next(values, None)
    except GoSyntaxError as exc:
        raise GoJSONError(exc.message) from None
    except GoJSONError:
        first = None
    if first is None:
        raise GoJSONError("unexpected end of JSON input")
    rest = data[first[1] :].lstrip(b" \t\r\n")
    if rest:
        raise GoJSONError(f"invalid character {quote_first_rune(rest)} after top-level value")
    return decode_request(data[: first[1]], struct, strict=False)


def go_unmarshal_string(raw: str | bytes) -> str | None:
    """``json.Unmarshal(raw, &s)`` for a string ``s`` and a valid JSON value ``raw``
    (as custom ``UnmarshalJSON`` methods do): the string, None for ``null`` (s is
    left alone), else Go's error."""
    if isinstance(raw, str):
        raw = go_bytes(raw)
    node = build_tree(raw, 0, len(raw))
    if node.kind == K_NULL:
        return None
    if node.kind != K_STR:
        raise GoUnmarshalTypeError(_KIND_WORDS[node.kind], "string")
    return str(node.val)
