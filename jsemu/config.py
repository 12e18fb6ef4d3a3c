"""The subset of nats-server's configuration file that jsemu understands.

The format is nats-server's: ``key: value`` or ``key = value`` lines, ``#`` and ``//``
comments, quoted or bare strings, durations such as ``100ms`` or ``2m``, sizes such as
``1MB``, and ``jetstream { ... }`` blocks. Unknown keys are ignored, as a stand-in must
accept configs written for the real server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .server.options import ServerOptions

__all__ = ["apply_config", "load_config", "parse_config"]

_LINE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:[:=]\s*|\s+)(.*?)\s*[;,]?\s*$")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
_SIZE = re.compile(r"^(\d+)\s*(k|kb|m|mb|g|gb)$", re.IGNORECASE)
_SIZE_UNITS = {"k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


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
    m = _SIZE.match(text)
    if m:
        return int(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    return text


def parse_config(text: str) -> dict[str, Any]:
    """Parse into a nested dict (blocks become dicts)."""
    root: dict[str, Any] = {}
    stack = [root]
    for raw in text.splitlines():
        line = re.sub(r"(#|//).*$", "", raw).strip()
        if not line:
            continue
        if line == "}":
            if len(stack) > 1:
                stack.pop()
            continue
        if line.endswith("{"):
            name = line[:-1].strip().rstrip(":=").strip()
            block: dict[str, Any] = {}
            stack[-1][name] = block
            stack.append(block)
            continue
        m = _LINE.match(line)
        if m:
            stack[-1][m.group(1)] = _value(m.group(2))
    return root


def _seconds(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    m = _DURATION.match(str(value))
    if not m:
        raise ValueError(f"invalid duration {value!r}")
    return float(m.group(1)) * _DURATION_UNITS[m.group(2)]


def _http_port(value: Any) -> int:
    """``http: 8222`` or ``http: "localhost:8222"``."""
    return int(str(value).rsplit(":", 1)[-1])


# nats-server config key -> (ServerOptions attribute, conversion)
_TOP_LEVEL: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "port": ("port", lambda v: 0 if v == -1 else int(v)),
    "host": ("host", str),
    "listen_host": ("host", str),
    "net": ("host", str),
    "server_name": ("server_name", str),
    "max_payload": ("max_payload", int),
    "max_control_line": ("max_control_line", int),
    "max_pending": ("max_pending", int),
    "ping_interval": ("ping_interval", _seconds),
    "ping_max": ("max_pings_out", int),
    "http_port": ("http_port", int),
    "http": ("http_port", _http_port),
}


def apply_config(conf: dict[str, Any], options: ServerOptions) -> ServerOptions:
    for key, value in conf.items():
        target = _TOP_LEVEL.get(key)
        if target is not None:
            setattr(options, target[0], target[1](value))
    js = conf.get("jetstream")
    if isinstance(js, dict):
        options.jetstream = bool(js.get("enabled", True))
        if "store_dir" in js:
            options.store_dir = str(js["store_dir"])
        if "domain" in js:
            options.domain = str(js["domain"])
        for key in ("max_memory_store", "max_mem_store", "max_mem"):
            if key in js:
                options.max_memory_store = int(js[key])
        for key in ("max_file_store", "max_file"):
            if key in js:
                options.max_file_store = int(js[key])
    elif isinstance(js, bool):
        options.jetstream = js
    return options


def load_config(path: str | Path, options: ServerOptions) -> ServerOptions:
    return apply_config(parse_config(Path(path).read_text()), options)
