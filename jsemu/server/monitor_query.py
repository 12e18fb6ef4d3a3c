"""Query strings of the monitoring port read as nats-server reads them (``decodeBool``, ``decodeInt``).

A value that does not parse is a ``400 Bad Request`` whose plain-text body is Go's error
(``Error decoding boolean for 'subs': strconv.ParseBool: parsing "x": invalid syntax``), not
a default silently taken: a dashboard that sent ``subs=yes`` learns that nats-server would not
have listed anything either. An empty or missing value is the default, as ``Query().Get``
returning ``""`` is to nats-server.
"""

from __future__ import annotations

import re

from ..protocol.gojson.runes import go_quote

__all__ = ["QueryError", "query_bool", "query_int", "query_uint"]

#: ``strconv.ParseBool``'s words.
_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_BOOLS |= {"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}
_INT = re.compile(r"[+-]?[0-9]+\Z")
_INT_MAX = 2**63 - 1


class QueryError(ValueError):
    """A query value nats-server refuses: its text is the 400 answer's body."""


def query_bool(query: dict[str, str], param: str) -> bool:
    text = query.get(param, "")
    if not text:
        return False
    if text not in _BOOLS:
        raise QueryError(
            f"Error decoding boolean for '{param}': strconv.ParseBool: parsing {go_quote(text)}: invalid syntax"
        )
    return _BOOLS[text]


def query_int(query: dict[str, str], param: str) -> int:
    text = query.get(param, "")
    if not text:
        return 0
    if not _INT.match(text):
        raise QueryError(f"Error decoding int for '{param}': strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not -_INT_MAX - 1 <= value <= _INT_MAX:
        raise QueryError(
            f"Error decoding int for '{param}': strconv.Atoi: parsing {go_quote(text)}: value out of range"
        )
    return value


def query_uint(query: dict[str, str], param: str) -> int:
    """``decodeUint64``."""
    text = query.get(param, "")
    if not text:
        return 0
    if not text.isascii() or not text.isdigit():
        raise QueryError(
            f"Error decoding uint64 for '{param}': strconv.ParseUint: parsing {go_quote(text)}: invalid syntax"
        )
    value = int(text)
    if value >= 2**64:
        raise QueryError(
            f"Error decoding uint64 for '{param}': strconv.ParseUint: parsing {go_quote(text)}: value out of range"
        )
    return value
