"""Go's ``flag`` package, as nats-server's ``main`` uses it, for the stand-in's command line.

Why not argparse: a harness that spawns nats-server writes Go's spellings, and argparse reads
some of them differently. Go's rules (``FlagSet.parseOne``), which this module follows:

* ``-name`` and ``--name`` are the same flag; no abbreviations, no ``-abc`` bundles.
* a bool flag takes no separate value: ``-js`` is true, ``-js=false`` false, and ``-js false``
  is ``-js`` followed by the word ``false`` (which ends the flags);
  ``strconv.ParseBool`` spellings only (``1 t T TRUE true True`` and their false twins).
* a valued flag takes ``-p=4222`` or ``-p 4222`` (the next word, whatever it looks like);
  integers as ``strconv.ParseInt(s, 0, 64)``: a sign, ``0x``/``0o``/``0b``/a leading ``0``,
  underscores between digits.
* parsing stops at the first word that is not a flag (or ``-`` alone) and after ``--``; those
  words are the command's (nats-server: ``version``, ``help``, or "unrecognized command").
* a flag given twice keeps its last value; aliases (``-p``/``-port``) share one variable.

Errors are Go's own lines (``flag provided but not defined: -x``, ``bad flag syntax: ---p``,
``invalid value "x" for flag -p: parse error``, ``invalid boolean value "x" for -js: parse
error``, ``flag needs an argument: -p``). Sans-I/O: the caller prints and exits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["FlagError", "FlagKind", "GoFlag", "GoFlagSet", "parse_go_int"]


class FlagKind(Enum):
    BOOL = "bool"
    INT = "int"
    STRING = "string"


@dataclass(frozen=True)
class GoFlag:
    """One flag name; ``dest`` is the variable it sets (shared by aliases)."""

    name: str
    kind: FlagKind
    dest: str


class FlagError(ValueError):
    """Go's message for a command line ``flag.Parse`` refuses."""


_GO_INT = re.compile(r"[+-]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)")
_INT64 = 1 << 63


def parse_go_int(text: str) -> int:
    """``strconv.ParseInt(text, 0, 64)``; ``FlagError`` with Go's ``parse error`` or
    ``value out of range``."""
    if not _GO_INT.fullmatch(text):
        raise FlagError("parse error")
    sign = -1 if text[0] == "-" else 1
    body = text.lstrip("+-")
    prefixed = len(body) > 1 and body[1] in "xXoObB"
    digits = body[2:] if prefixed else body
    # underscores only between digits (Go's underscoreOK), the base prefix counting as one
    if "_" in digits and (
        "__" in digits or digits.endswith("_") or (digits.startswith("_") and not (prefixed or body.startswith("0")))
    ):
        raise FlagError("parse error")
    if prefixed:
        base = {"x": 16, "o": 8, "b": 2}[body[1].lower()]
    else:
        base = 8 if body.startswith("0") else 10
    digits = digits.replace("_", "")
    if not digits and prefixed:
        raise FlagError("parse error")
    value = sign * int(digits or "0", base)
    if not -_INT64 <= value < _INT64:
        raise FlagError("value out of range")
    return value


_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@dataclass
class GoFlagSet:
    """The flags by name; :meth:`parse` returns the values set (by ``dest``) and the rest."""

    flags: dict[str, GoFlag] = field(default_factory=dict)

    def define(self, name: str, kind: FlagKind, dest: str) -> None:
        self.flags[name] = GoFlag(name, kind, dest)

    def parse(self, args: Sequence[str]) -> tuple[dict[str, Any], list[str], list[str]]:
        """``(values by dest, names of the flags given in order, the words after the flags)``."""
        values: dict[str, Any] = {}
        visited: list[str] = []
        rest = list(args)
        while rest:
            word = rest[0]
            if len(word) < 2 or word[0] != "-":
                break
            minuses = 2 if word[1] == "-" else 1
            if word == "--":
                rest.pop(0)
                break
            name = word[minuses:]
            if not name or name[0] in "-=":
                raise FlagError(f"bad flag syntax: {word}")
            rest.pop(0)
            name, has_value, value = name.partition("=")
            flag = self.flags.get(name)
            if flag is None:
                raise FlagError(f"flag provided but not defined: -{name}")
            if flag.kind is FlagKind.BOOL:
                if not has_value:
                    values[flag.dest] = True
                elif value in _TRUE or value in _FALSE:
                    values[flag.dest] = value in _TRUE
                else:
                    raise FlagError(f'invalid boolean value "{value}" for -{name}: parse error')
            else:
                if not has_value:
                    if not rest:
                        raise FlagError(f"flag needs an argument: -{name}")
                    value = rest.pop(0)
                if flag.kind is FlagKind.INT:
                    try:
                        values[flag.dest] = parse_go_int(value)
                    except FlagError as exc:
                        raise FlagError(f'invalid value "{value}" for flag -{name}: {exc}') from None
                else:
                    values[flag.dest] = value
            visited.append(name)
        return values, visited, rest
