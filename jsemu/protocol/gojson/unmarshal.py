"""Accept or reject JSON like Go's ``json.Unmarshal`` into a flat struct, without Go's error texts.

For CONNECT (and the INFO a client may send): nats-server either takes the options or
closes the connection without a word, so only Go's verdict and values matter, never its
wording, and Python's ``json`` module, in C, does the syntax check. Anything whose error
text reaches a client (every JetStream request, pull requests, NAK options) goes
through :mod:`.decoder` instead. The Go rules applied on top:

* keys match field names exactly, else case-insensitively; unknown keys are ignored;
* a duplicate key is applied again, so the last one wins;
* ``null`` leaves a field untouched;
* a value of the wrong JSON type, a fraction or exponent for an integer, a negative
  number for an unsigned field or a number that overflows is an error;
* the whole input must be one JSON value with only whitespace around it; NaN and
  Infinity are not JSON.

The parser's hooks keep numbers as their source text (:class:`GoNumber`) so the Go
integer rules can be applied exactly, and objects as their ordered pairs, duplicates kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .errors import GoJSONError
from .runes import go_fold

__all__ = [
    "GoNumber",
    "StructSpec",
    "decode_struct",
    "go_any",
    "go_bool",
    "go_int",
    "go_string",
    "go_string_list",
    "go_uint",
]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


class GoNumber(str):
    """A JSON number kept as its source text, so integer rules can be applied like Go."""

    __slots__ = ()


def _reject_constant(name: str) -> Any:
    raise GoJSONError(f"invalid character in numeric literal: {name}")


def _pairs(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return _Object(pairs)


class _Object(list):  # type: ignore[type-arg]
    """A JSON object as the ordered list of its (key, value) pairs, duplicates kept."""

    __slots__ = ()


_decoder = json.JSONDecoder(
    object_pairs_hook=_pairs,
    parse_int=GoNumber,
    parse_float=GoNumber,
    parse_constant=_reject_constant,
)


def parse(data: bytes | str) -> Any:
    """Parse one JSON value; objects come back as :class:`_Object` pair lists."""
    if isinstance(data, bytes):
        # Go accepts invalid UTF-8 inside strings (as U+FFFD); outside strings the
        # replacement character is a syntax error in both parsers.
        text = data.decode("utf-8", errors="replace")
    else:
        text = data
    try:
        return _decoder.decode(text)
    except (ValueError, RecursionError) as exc:
        raise GoJSONError(str(exc)) from None


# --- field converters: take the parsed JSON value (never None), return the Go value --


def go_bool(value: Any) -> bool:
    if value is True or value is False:
        return value
    raise GoJSONError("cannot unmarshal into bool")


def _int_text(value: Any) -> str:
    if not isinstance(value, GoNumber):
        raise GoJSONError("cannot unmarshal into integer")
    if any(ch in value for ch in ".eE"):
        raise GoJSONError(f"cannot unmarshal number {value} into integer")
    return value


def go_int(value: Any) -> int:
    number = int(_int_text(value))
    if not INT64_MIN <= number <= INT64_MAX:
        raise GoJSONError(f"number {value} overflows int64")
    return number


def go_uint(value: Any) -> int:
    text = _int_text(value)
    if text.startswith("-"):
        raise GoJSONError(f"cannot unmarshal number {value} into unsigned integer")
    number = int(text)
    if number > UINT64_MAX:
        raise GoJSONError(f"number {value} overflows uint64")
    return number


def go_string(value: Any) -> str:
    if isinstance(value, str) and not isinstance(value, GoNumber):
        return value
    raise GoJSONError("cannot unmarshal into string")


def go_string_list(value: Any) -> list[str]:
    if not isinstance(value, list) or isinstance(value, _Object):
        raise GoJSONError("cannot unmarshal into []string")
    # Go decodes null elements of a []string as "".
    return ["" if item is None else go_string(item) for item in value]


def go_any(value: Any) -> Any:
    return value


Converter = Callable[[Any], Any]


class StructSpec:
    """The JSON fields of one Go struct: name -> converter, with Go's key matching."""

    __slots__ = ("_folded", "fields")

    def __init__(self, fields: Mapping[str, Converter]) -> None:
        self.fields = dict(fields)
        self._folded = {go_fold(name): name for name in self.fields}

    def field_for(self, key: str) -> str | None:
        if key in self.fields:
            return key
        return self._folded.get(go_fold(key))


def decode_struct(data: bytes | str, spec: StructSpec) -> dict[str, Any]:
    """Decode ``data`` as Go would into a struct; returns only the fields that were set.

    Raises :class:`GoJSONError` for anything ``json.Unmarshal`` would reject.
    """
    value = parse(data)
    if value is None:
        return {}
    if not isinstance(value, _Object):
        raise GoJSONError("cannot unmarshal non-object into struct")
    result: dict[str, Any] = {}
    error: GoJSONError | None = None
    for key, item in value:
        name = spec.field_for(key)
        if name is None or item is None:
            continue
        try:
            result[name] = spec.fields[name](item)
        except GoJSONError as exc:
            # Go keeps decoding and reports the first type error at the end.
            error = error or exc
    if error is not None:
        raise error
    return result
