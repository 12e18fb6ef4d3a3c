"""The subset of nats-server's configuration file that jsemu understands.

The format is nats-server's: ``key: value`` or ``key = value`` lines, ``#`` and ``//``
comments, quoted or bare strings, durations such as ``100ms`` or ``2m``, sizes such as
``1MB``, and ``jetstream { ... }`` blocks. Unknown keys are ignored, as a stand-in must
accept configs written for the real server.

A file that cannot be read, a block left open and a value of the wrong type raise
:class:`ConfigError` with nats-server's message (``FILE:LINE:COL: ...``), so ``jsemu serve``
can fail with one line as the real server does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .server.options import ServerOptions

__all__ = ["ConfigError", "apply_config", "load_config", "parse_config"]

_LINE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:[:=]\s*|\s+)(.*?)\s*[;,]?\s*$")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
_SIZE = re.compile(r"^(\d+)\s*(k|kb|m|mb|g|gb)$", re.IGNORECASE)
_FLOAT = re.compile(r"^-?\d+\.\d*(?:[eE][-+]?\d+)?$")
_SIZE_UNITS = {"k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

#: Where each key was read: (block path) -> (line, column as nats-server counts them).
Positions = dict[tuple[str, ...], tuple[int, int]]


class ConfigError(ValueError):
    """A configuration nats-server refuses, with its message (without the ``nats-server: `` prefix)."""


def _value(text: str) -> Any:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
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


def _parse(text: str) -> tuple[dict[str, Any], Positions]:
    root: dict[str, Any] = {}
    positions: Positions = {}
    stack = [root]
    path: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(#|//).*$", "", raw).strip()
        if not line:
            continue
        # nats-server's lexer counts columns from 0 on the first line and from 1 after.
        column = len(raw) - len(raw.lstrip()) + (0 if number == 1 else 1)
        if line == "}":
            if len(stack) > 1:
                stack.pop()
                path.pop()
            continue
        if line.endswith("{"):
            name = line[:-1].strip().rstrip(":=").strip()
            block: dict[str, Any] = {}
            stack[-1][name] = block
            positions[(*path, name)] = (number, column)
            stack.append(block)
            path.append(name)
            continue
        m = _LINE.match(line)
        if m:
            stack[-1][m.group(1)] = _value(m.group(2))
            positions[(*path, m.group(1))] = (number, column)
    if len(stack) > 1:
        raise ConfigError(f"Parse error on line {text.count(chr(10)) + 1}: 'Unexpected EOF processing map.'")
    return root, positions


def parse_config(text: str) -> dict[str, Any]:
    """Parse into a nested dict (blocks become dicts)."""
    return _parse(text)[0]


def _go_type(value: Any) -> str:
    """The Go type nats-server's parser gives a value, for its conversion errors."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "string"


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"interface conversion: interface {{}} is {_go_type(value)}, not int64")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"interface conversion: interface {{}} is {_go_type(value)}, not string")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = _DURATION.match(str(value))
    if not m:
        raise ConfigError(f'error parsing ping_interval: time: invalid duration "{value}"')
    return float(m.group(1)) * _DURATION_UNITS[m.group(2)]


def _http_port(value: Any) -> int:
    """``http: 8222`` or ``http: "localhost:8222"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    port = str(value).rsplit(":", 1)[-1]
    if not re.fullmatch(r"-?\d+", port):
        raise ConfigError(f'could not parse port "{port}"')
    return int(port)


def _storage_size(key: str, value: Any) -> int:
    """``max_mem_store: 1G`` or a number; nats-server parses a string as number + unit letter."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ConfigError(f'{key} strconv.ParseInt: parsing "{str(value)[:-1]}": invalid syntax')


def _enabled(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    low = str(value).lower()
    if low in ("enabled", "enable"):
        return True
    if low in ("disabled", "disable"):
        return False
    raise ConfigError(f"Expected 'enabled' or 'disabled' for string value, got '{value}'")


# nats-server config key -> (ServerOptions attribute, conversion)
_TOP_LEVEL: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "port": ("port", lambda v: 0 if _int(v) == -1 else v),
    "host": ("host", _str),
    "listen_host": ("host", _str),
    "net": ("host", _str),
    "server_name": ("server_name", _str),
    "max_payload": ("max_payload", _int),
    "max_control_line": ("max_control_line", _int),
    "max_pending": ("max_pending", _int),
    "ping_interval": ("ping_interval", _seconds),
    "ping_max": ("max_pings_out", _int),
    "http_port": ("http_port", _int),
    "http": ("http_port", _http_port),
}
#: jetstream block key -> (ServerOptions attribute, the name nats-server's errors use)
_STORAGE: dict[str, tuple[str, str]] = {
    "max_memory_store": ("max_memory_store", "max_mem_store"),
    "max_mem_store": ("max_memory_store", "max_mem_store"),
    "max_mem": ("max_memory_store", "max_mem_store"),
    "max_file_store": ("max_file_store", "max_file_store"),
    "max_file": ("max_file_store", "max_file_store"),
}


def _at(where: str, positions: Positions, key: tuple[str, ...], exc: ConfigError) -> ConfigError:
    line, column = positions.get(key, (0, 0))
    return ConfigError(f"{where}:{line}:{column}: {exc}" if where else str(exc))


def apply_config(
    conf: dict[str, Any], options: ServerOptions, positions: Positions | None = None, where: str = ""
) -> ServerOptions:
    """Set ``options`` from a parsed file; ``where`` (the file name) and ``positions`` place errors."""
    pos = positions or {}
    for key, value in conf.items():
        target = _TOP_LEVEL.get(key)
        if target is not None:
            try:
                setattr(options, target[0], target[1](value))
            except ConfigError as exc:
                raise _at(where, pos, (key,), exc) from None
    js = conf.get("jetstream")
    if isinstance(js, dict):
        try:
            options.jetstream = _enabled(js.get("enabled", True))
        except ConfigError as exc:
            raise _at(where, pos, ("jetstream", "enabled"), exc) from None
        if "store_dir" in js:
            options.store_dir = str(js["store_dir"])
        if "domain" in js:
            options.domain = str(js["domain"])
        for key, (attr, go_name) in _STORAGE.items():
            if key in js:
                try:
                    setattr(options, attr, _storage_size(go_name, js[key]))
                except ConfigError as exc:
                    raise _at(where, pos, ("jetstream", key), exc) from None
    elif js is not None:
        try:
            options.jetstream = _enabled(js)
        except ConfigError as exc:
            raise _at(where, pos, ("jetstream",), exc) from None
    return options


def load_config(path: str | Path, options: ServerOptions) -> ServerOptions:
    """Read ``path`` into ``options``; :class:`ConfigError` (nats-server's wording) if it cannot."""
    try:
        text = Path(path).read_text()
    except IsADirectoryError:
        raise ConfigError(f"read {path}: is a directory") from None
    except OSError as exc:
        raise ConfigError(f"open {path}: {(exc.strerror or str(exc)).lower()}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    conf, positions = _parse(text)
    return apply_config(conf, options, positions, str(path))
