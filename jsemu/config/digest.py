"""The digest nats-server prints for a configuration file (``-t``: "is valid (sha256:...)").

nats-server hashes the parsed map, not the file's bytes (``conf.configDigest``): Go's
``json.Encoder`` output (keys sorted, ``<``, ``>``, ``&`` escaped, a newline at the end) through
SHA-256, so comments, spacing and includes' layout do not change it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .parser import parse_file

__all__ = ["config_digest", "digest_of"]


def digest_of(conf: dict[str, Any]) -> str:
    """``sha256:HEX`` of ``conf`` as Go's ``json.Encoder`` writes it."""
    text = json.dumps(conf, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return "sha256:" + hashlib.sha256((text + "\n").encode()).hexdigest()


def config_digest(path: str | Path) -> str:
    """The digest of the file at ``path`` (its includes read in)."""
    conf, _ = parse_file(path)
    return digest_of(conf)
