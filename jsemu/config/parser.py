"""nats-server's configuration file format (``conf/parse.go``), built from the lexer's items.

The lexer (:mod:`jsemu.config.lexer`, a port of ``conf/lex.go``) decides what is well formed;
this module turns its items into values as ``parse.go`` does in its pedantic mode (the one
nats-server reads its files with): a stack of contexts (the top map, then each open map or
array), a stack of keys, and ``processItem`` for each item, so a value lands under the last
key of the map it is in, or at the end of the array. Conversions are ``processItem``'s: integers
with their size suffixes (``1K`` 1000, ``1KB`` / ``1KI`` / ``1KIB`` 1024, up to ``E``, int64
arithmetic), floats, booleans, ISO 8601 datetimes; ``$name`` looks the name up in the maps
being built, innermost first, then in the environment (its value parsed as ``pk=VALUE``);
``include FILE`` (relative to the including file) merges that file's keys into the current map.
Errors are ``parse.go``'s words: ``Parse error on line N: '...'`` for the lexer's,
``config is invalid (FILE:L:C)`` for a key left without a value at the end.

Each value is a :class:`_Token` while parsing (value, file, line, column, whether a variable
read it); the result is plain dicts and lists with :class:`Positions`: the key path's file,
line and column (a map's value at its key, an array's item at the item, as nats-server
places them) and the keys a variable read (nats-server does not call those unknown).
"""

from __future__ import annotations

import datetime
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .lexer import Item, ItemType, Lexer, is_digit

__all__ = ["ConfigError", "Positions", "parse_file", "parse_text"]

#: The suffixes of an integer (``processItem``) and what they multiply it by.
_SIZE_SUFFIXES = {
    "": 1,
    **{unit: 1000 ** (power + 1) for power, unit in enumerate("kmgtpe")},
    **{unit + tail: 1024 ** (power + 1) for power, unit in enumerate("kmgtpe") for tail in ("b", "i", "ib")},
}
#: Maps a variable read from the environment into ``pk=VALUE`` (parse.go's ``pkey``).
_ENV_KEY = "pk"
#: A bare ``$2a$...`` is a bcrypt hash, not a variable.
_BCRYPT_PREFIX = "2a$"
_MAX_INCLUDE_DEPTH = 10


class ConfigError(ValueError):
    """A configuration nats-server refuses, with its message (without the ``nats-server: `` prefix)."""


class Positions(dict[tuple[str, ...], tuple[str, int, int]]):
    """Where each key was read: key path (list items by index) -> (file, line, column).
    ``used``: the key paths a ``$variable`` read."""

    def __init__(self) -> None:
        super().__init__()
        self.used: set[tuple[str, ...]] = set()


@dataclass(slots=True)
class _Token:
    """parse.go's ``token``: a value with the item that placed it and its file."""

    item: Item
    value: Any
    used: bool
    source: str


def _int64(n: int) -> int:
    """Go's int64 arithmetic: a size that overflows wraps around."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _integer(val: str) -> tuple[int, str]:
    """``processItem`` on an integer item: its leading digits (and minus signs) as an int64,
    and the rest in lower case, the size suffix."""
    n = 0
    for r in val:
        if not is_digit(r) and r != "-":
            break
        n += 1
    text = val[:n]
    body = text.removeprefix("-")
    if not body or not body.isascii() or not body.isdigit():
        raise ConfigError(f"expected integer, but got '{val}'")
    num = int(text)
    if num != _int64(num):
        raise ConfigError(f"integer '{val}' is out of the range")
    return num, val[n:].strip().lower()


def go_join(folder: str, name: str) -> str:
    """Go's ``filepath.Join(filepath.Dir(file), name)``: the directory first, even for an
    absolute name, then ``Clean`` (which, unlike ``normpath``, keeps no leading ``//``)."""
    joined = posixpath.normpath(f"{folder or '.'}/{name}" if name else folder or ".")
    return "/" + joined.lstrip("/") if joined.startswith("//") else joined


class _Parser:
    def __init__(self, text: str, fp: str, pedantic: bool, env_refs: set[str], depth: int) -> None:
        self.mapping: dict[str, Any] = {}
        self.lx = Lexer(text)
        self.ctx: Any = None
        self.ctxs: list[Any] = []
        self.keys: list[str] = []
        self.ikeys: list[Item] = []
        self.fp = os.path.dirname(fp)
        self.pedantic = pedantic
        self.env_refs = env_refs
        self.depth = depth

    def parse(self, fp: str) -> None:
        self.push_context(self.mapping)
        prev = Item(ItemType.NIL, "", 0, 0)
        while True:
            it = self.lx.next_item()
            if it.typ == ItemType.EOF:
                # The last item may be a key '}' (a configuration written as JSON).
                if prev.typ == ItemType.KEY and prev.val != "}":
                    raise ConfigError(f"config is invalid ({fp}:{it.line}:{it.pos})")
                return
            prev = it
            self.process_item(it, fp)

    def push_context(self, ctx: Any) -> None:
        self.ctxs.append(ctx)
        self.ctx = ctx

    def pop_context(self) -> Any:
        last = self.ctxs.pop()
        self.ctx = self.ctxs[-1]
        return last

    def set_value(self, it: Item, value: Any, fp: str) -> None:
        self._set(_Token(it, value, False, fp) if self.pedantic else value)

    def process_item(self, it: Item, fp: str) -> None:
        typ = it.typ
        if typ == ItemType.ERROR:
            raise ConfigError(f"Parse error on line {it.line}: '{it.val}'")
        if typ == ItemType.KEY:
            self.keys.append(it.val)
            if self.pedantic:
                self.ikeys.append(it)
        elif typ in (ItemType.MAP_START, ItemType.ARRAY_START):
            self.push_context({} if typ == ItemType.MAP_START else [])
        elif typ in (ItemType.MAP_END, ItemType.ARRAY_END):
            self.set_value(it, self.pop_context(), fp)
        elif typ == ItemType.STRING:
            self.set_value(it, it.val, fp)
        elif typ == ItemType.INTEGER:
            num, suffix = _integer(it.val)
            factor = _SIZE_SUFFIXES.get(suffix)
            if factor is not None:  # an unknown suffix (``1kbb``) sets nothing, as in Go
                self.set_value(it, _int64(num * factor), fp)
        elif typ == ItemType.FLOAT:
            value = float(it.val)
            if value == float("inf"):
                raise ConfigError(f"float '{it.val}' is out of the range")
            self.set_value(it, value, fp)
        elif typ == ItemType.BOOL:
            self.set_value(it, it.val.lower() in ("true", "yes", "on"), fp)
        elif typ == ItemType.DATETIME:
            try:
                when = datetime.datetime.strptime(it.val, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
            except ValueError:
                raise ConfigError(f"expected Zulu formatted DateTime, but got '{it.val}'") from None
            self.set_value(it, when, fp)
        elif typ == ItemType.VARIABLE:
            self._variable(it, fp)
        elif typ == ItemType.INCLUDE:
            self._include(it)

    def _variable(self, it: Item, fp: str) -> None:
        try:
            value, found = self.lookup_variable(it.val)
        except ConfigError as exc:
            raise ConfigError(
                f"variable reference for '{it.val}' on line {it.line} could not be parsed: {exc}"
            ) from None
        if not found:
            raise ConfigError(f"variable reference for '{it.val}' on line {it.line} can not be found")
        if self.pedantic:
            if isinstance(value, _Token):
                value.used = True
                value = value.value
            self._set(_Token(it, value, False, fp))
        else:
            self._set(value)

    def lookup_variable(self, name: str) -> tuple[Any, bool]:
        if name.startswith(_BCRYPT_PREFIX):
            return "$" + name, True
        for ctx in reversed(self.ctxs):
            if isinstance(ctx, dict) and name in ctx:
                return ctx[name], True
        if name in self.env_refs:
            raise ConfigError(f"variable reference cycle for '{name}'")
        self.env_refs.add(name)
        try:
            text = os.environ.get(name)
            if text is None:
                return None, False
            sub = _Parser(f"{_ENV_KEY}={text}", "", False, self.env_refs, self.depth)
            sub.parse("")
            return sub.mapping.get(_ENV_KEY), _ENV_KEY in sub.mapping
        finally:
            self.env_refs.discard(name)

    def _include(self, it: Item) -> None:
        target = go_join(self.fp, it.val)
        if self.depth >= _MAX_INCLUDE_DEPTH:  # Go recurses until its stack is gone
            raise ConfigError(f"error parsing include file '{it.val}', too many nested includes")
        try:
            mapping = _parse_file(target, self.pedantic, self.depth + 1)
        except ConfigError as exc:
            raise ConfigError(f"error parsing include file '{it.val}', {exc}") from None
        for key, value in mapping.items():
            self.keys.append(key)
            if self.pedantic and isinstance(value, _Token):
                self.ikeys.append(value.item)
            self._set(value)

    def _set(self, value: Any) -> None:
        """parse.go's ``setValue``: appended to an array, or under the last key of a map (a
        token then placed at its key)."""
        ctx = self.ctx
        if isinstance(ctx, list):
            ctx.append(value)
        elif isinstance(ctx, dict):
            key = self.keys.pop()
            if self.pedantic:
                if isinstance(value, _Token):
                    at = self.ikeys.pop()
                    value.item = Item(value.item.typ, value.item.val, at.line, at.pos)
                    ctx[key] = value
            else:
                ctx[key] = value


def _read(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise ConfigError(f"read {path}: is a directory") from None
    except OSError as exc:
        raise ConfigError(f"open {path}: {(exc.strerror or str(exc)).lower()}") from None
    return data.decode("utf-8", errors="replace")


def _parse_file(path: str, pedantic: bool, depth: int) -> dict[str, Any]:
    p = _Parser(_read(path), path, pedantic, set(), depth)
    p.parse(path)
    return p.mapping


def _plain(value: Any, path: tuple[str, ...], positions: Positions) -> Any:
    """A token tree as plain values; each token's place and use recorded under its key path."""
    if isinstance(value, _Token):
        positions[path] = (value.source, value.item.line, value.item.pos)
        if value.used:
            positions.used.add(path)
        value = value.value
    if isinstance(value, dict):
        return {key: _plain(item, (*path, key), positions) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item, (*path, str(index)), positions) for index, item in enumerate(value)]
    return value


def parse_text(text: str, where: str = "") -> tuple[dict[str, Any], Positions]:
    """Parse a configuration; ``where`` (its file name) places errors and resolves includes."""
    p = _Parser(text, where, True, set(), 0)
    p.parse(where)
    positions = Positions()
    return _plain(p.mapping, (), positions), positions


def parse_file(path: str | Path) -> tuple[dict[str, Any], Positions]:
    """Read and parse ``path``; :class:`ConfigError` (nats-server's wording) if it cannot."""
    return parse_text(_read(str(path)), str(path))
