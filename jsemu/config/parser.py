"""nats-server's configuration file format, parsed into dicts and lists with each key's position.

``key: value``, ``key = value`` or ``key value`` (the top-level keys may stand in braces, so a
file written as JSON reads too); ``{ ... }`` maps and ``[ ... ]`` arrays (on
one line or many, items separated by commas, semicolons or new lines); quoted or bare strings,
numbers, booleans, sizes (``1MB``); ``#`` and ``//`` comments; ``include "file"`` (relative to
the including file) merges that file's keys into the map it appears in, as nats-server does.
Positions follow nats-server's errors: line from 1, column the key's offset, plus one after
the first line (its lexer's quirk), so ``FILE:LINE:COL:`` prefixes read the same.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "Positions", "parse_file", "parse_text", "scalar"]

#: Where each key was read: key path (list items by index) -> (file, line, column).
Positions = dict[tuple[str, ...], tuple[str, int, int]]

_SIZE = re.compile(r"^(\d+)\s*([kmgtpe](?:b|i|ib)?)$", re.IGNORECASE)
_FLOAT = re.compile(r"^-?\d+\.\d*(?:[eE][-+]?\d+)?$")
#: nats-server's size suffixes: ``K`` is 1000, ``KB`` / ``KI`` / ``KIB`` 1024 (any case), up to ``E``.
_SIZE_UNITS = {
    **{unit: 1000 ** (power + 1) for power, unit in enumerate("kmgtpe")},
    **{unit + tail: 1024 ** (power + 1) for power, unit in enumerate("kmgtpe") for tail in ("b", "i", "ib")},
}
_KEY = re.compile(r"[A-Za-z_$][\w\-.$]*|\"[^\"\n]*\"|'[^'\n]*'")
_BARE_END = ",;}]\n#"
#: The escapes of a double-quoted string (conf/lex.go ``lexStringEscape``), ``\xXX`` aside.
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", '"': '"', "\\": "\\"}


class ConfigError(ValueError):
    """A configuration nats-server refuses, with its message (without the ``nats-server: `` prefix)."""


def scalar(text: str) -> Any:
    """A bare value as nats-server types it: bool, int (sizes too), float or string."""
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    m = _SIZE.match(text)
    if m:
        return int(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    return text


class _Parser:
    def __init__(self, text: str, where: str, positions: Positions, depth: int) -> None:
        self.text = text
        self.where = where
        self.i = 0
        self.positions = positions
        self.depth = depth

    # --- low level ------------------------------------------------------------------------

    def _position(self, offset: int) -> tuple[str, int, int]:
        line = self.text.count("\n", 0, offset) + 1
        start = self.text.rfind("\n", 0, offset) + 1
        return self.where, line, offset - start + (0 if line == 1 else 1)

    def _eof_error(self) -> ConfigError:
        return ConfigError(f"Parse error on line {self.text.count(chr(10)) + 1}: 'Unexpected EOF processing map.'")

    def _skip(self, newlines: bool = True) -> None:
        """Skip blanks and comments (and new lines unless told not to)."""
        text, n = self.text, len(self.text)
        while self.i < n:
            c = text[self.i]
            if c == "\n" and not newlines:
                return
            if c in " \t\r\n":
                self.i += 1
            elif c == "#" or text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                return

    def _error(self, offset: int, message: str) -> ConfigError:
        _, line, column = self._position(offset)
        return ConfigError(f"{self.where}:{line}:{column}: {message}" if self.where else message)

    # --- grammar ----------------------------------------------------------------------------

    def parse_map(self, path: tuple[str, ...], closing: str | None, top_block: bool = False) -> dict[str, Any]:
        """A map's keys until ``closing`` (None: the file's end). At the top level, braces
        around keys are a block (nats-server's ``lexTop``/``lexBlockStart``), so a file
        written as JSON (``{ "port": 4222 }``) reads as the same keys without them; a
        block left open at the file's end is not an error there."""
        result: dict[str, Any] = {}
        text = self.text
        while True:
            self._skip()
            if self.i >= len(text):
                if closing is not None and not top_block:
                    raise self._eof_error()
                return result
            c = text[self.i]
            if c in ",;" or (c == "}" and closing is None):  # lexTop skips a stray block end
                self.i += 1
                continue
            if closing is not None and c == closing:
                self.i += 1
                return result
            if c == "{" and (closing is None or top_block):
                self.i += 1
                result.update(self.parse_map(path, "}", top_block=True))
                continue
            m = _KEY.match(text, self.i)
            if m is None:
                raise self._error(self.i, f"unexpected character {c!r}")
            start = self.i
            key = m.group(0).strip("\"'")
            self.i = m.end()
            while self.i < len(text) and text[self.i] in " \t":
                self.i += 1
            if key == "include" and self.i < len(text) and text[self.i] not in ":=":
                self._include(result, path, start)
                continue
            separator = self.i < len(text) and text[self.i] in ":="
            if separator:
                self.i += 1
            self._skip(newlines=False)
            if separator and self.i < len(text) and text[self.i] == "\n":
                line = text.count("\n", 0, self.i + 1) + 1
                raise ConfigError(f"Parse error on line {line}: 'Expected value but found new line'")
            self.positions[(*path, key)] = self._position(start)
            result[key] = self.parse_value((*path, key))
            if top_block:
                self._block_value_end()

    def _block_value_end(self) -> None:
        """In a top-level block, a value must end with a new line, a comment or the block's
        end; nats-server's lexer refuses the file's end there (blanks before it or not)."""
        end = self.i
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        if end == len(self.text):
            raise ConfigError(
                f"Parse error on line {self.text.count(chr(10)) + 1}: 'Expected a block-level value to end with "
                "a new line, comment or EOF, but got '\x00' instead.'"
            )

    def _quoted(self, quote: str) -> str:
        """A quoted string from ``self.i`` (its opening quote): a double-quoted one with
        nats-server's escapes (``\\t \\n \\r \\" \\\\ \\xXX``), a single-quoted one as written."""
        text, i = self.text, self.i + 1
        if quote == "'":
            end = text.find("'", i)
            if end < 0:
                raise ConfigError(f"Parse error on line {text.count(chr(10)) + 1}: 'Unexpected EOF.'")
            self.i = end + 1
            return text[i:end]
        out: list[str] = []
        while i < len(text):
            c = text[i]
            if c == '"':
                self.i = i + 1
                return "".join(out)
            if c == "\\" and i + 1 < len(text):
                e = text[i + 1]
                if e in _ESCAPES:
                    out.append(_ESCAPES[e])
                    i += 2
                    continue
                if e == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", text[i + 2 : i + 4]):
                    out.append(chr(int(text[i + 2 : i + 4], 16)))
                    i += 4
                    continue
                line = text.count("\n", 0, i) + 1
                raise ConfigError(
                    f"Parse error on line {line}: 'Invalid escape character '{e}'. Only the following escape "
                    "characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\.'"
                )
            out.append(c)
            i += 1
        raise ConfigError(f"Parse error on line {text.count(chr(10)) + 1}: 'Unexpected EOF.'")

    def parse_value(self, path: tuple[str, ...]) -> Any:
        text = self.text
        if self.i >= len(text) or text[self.i] == "\n":
            raise self._eof_error()
        c = text[self.i]
        if c == "{":
            self.i += 1
            return self.parse_map(path, "}")
        if c == "[":
            self.i += 1
            return self._parse_array(path)
        if c in "\"'":
            return self._quoted(c)
        start = self.i
        while self.i < len(text) and text[self.i] not in _BARE_END:
            if text.startswith("//", self.i) and text[self.i - 1] in " \t":  # a comment, not nats://
                break
            self.i += 1
        return scalar(text[start : self.i].strip())

    def _parse_array(self, path: tuple[str, ...]) -> list[Any]:
        items: list[Any] = []
        while True:
            self._skip()
            if self.i >= len(self.text):
                raise self._eof_error()
            c = self.text[self.i]
            if c in ",;":
                self.i += 1
                continue
            if c == "]":
                self.i += 1
                return items
            item_path = (*path, str(len(items)))
            self.positions[item_path] = self._position(self.i)
            items.append(self.parse_value(item_path))

    def _include(self, into: dict[str, Any], path: tuple[str, ...], start: int) -> None:
        self._skip(newlines=False)
        name = self.parse_value((*path, "include"))
        if not isinstance(name, str) or not name:
            raise self._error(start, "include needs a file name")
        # Go's filepath.Join: the including file's directory first, even for an absolute name.
        folder = os.path.dirname(self.where)
        target = os.path.normpath(f"{folder}/{name}" if folder else name)
        if self.depth > 10:
            raise self._error(start, f"error parsing include file '{name}', too many nested includes")
        try:
            text = Path(target).read_text()
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            raise ConfigError(f"error parsing include file '{name}', open {target}: {reason}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"error parsing include file '{name}', {exc}") from None
        inner = _Parser(text, target, self.positions, self.depth + 1)
        into.update(inner.parse_map(path, None))


def parse_text(text: str, where: str = "") -> tuple[dict[str, Any], Positions]:
    """Parse a configuration; ``where`` (its file name) places errors and resolves includes."""
    positions: Positions = {}
    return _Parser(text, where, positions, 0).parse_map((), None), positions


def parse_file(path: str | Path) -> tuple[dict[str, Any], Positions]:
    """Read and parse ``path``; :class:`ConfigError` (nats-server's wording) if it cannot."""
    try:
        text = Path(path).read_text()
    except IsADirectoryError:
        raise ConfigError(f"read {path}: is a directory") from None
    except OSError as exc:
        raise ConfigError(f"open {path}: {(exc.strerror or str(exc)).lower()}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return parse_text(text, str(path))
