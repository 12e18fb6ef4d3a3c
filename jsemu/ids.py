"""``getHash``: nats-server's 8-character name hash (peer ids, external source names)."""

from __future__ import annotations

import hashlib

__all__ = ["go_hash"]

_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def go_hash(name: str, size: int = 8) -> str:
    """``getHashSize``: the first ``size`` bytes of SHA-256, each mapped to base-62 digits."""
    digest = hashlib.sha256(name.encode()).digest()
    return "".join(_DIGITS[b % 62] for b in digest[:size])
