"""Generated names in nats-server's shapes.

nats-server writes the names it makes up with nuid's digits (``0-9A-Za-z``): event ids,
pin ids and snapshot subjects are ``nuid.Next()`` (22 characters); peer ids and external
source names are ``getHash`` of a name, raft groups and ephemeral consumers ``getHash`` of
a fresh nuid (8 characters); service import replies are ``_R_.<prefix>.<token>``. The
server's own id and curve key are nkey public keys (base32). Clients and tests match on
these shapes, so the alphabets and the generators live here only.

Randomness: names that a seeded server must repeat (raft groups) come from the caller's
``rng``; the others (event ids, reply tokens, server ids) from ``os.urandom``, turned into
digits by one ``bytes.translate``, so that building an advisory never moves the seeded
``rng`` that picks queue members and peers.
"""

from __future__ import annotations

import hashlib
import os
import random

__all__ = ["BASE62", "get_hash", "new_event_id", "nkey_like", "random_name", "random_token"]

#: nuid's ``digits``: the alphabet of every generated name.
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_NUID_LEN = 22
#: Random byte -> digit; bytes from 248 = 4 * 62 up map to NUL and are dropped, so no
#: digit comes up more often than another.
_TRANSLATE = bytes(BASE62.encode()[i % 62] for i in range(248)) + b"\0" * 8
#: Random byte -> base32 letter (256 is a multiple of 32: no letter is favoured).
_BASE32 = bytes(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[i % 32] for i in range(256))


def get_hash(name: str) -> str:
    """``getHash``: the first 8 bytes of SHA-256, each mapped to a base-62 digit."""
    digest = hashlib.sha256(name.encode()).digest()
    return "".join(BASE62[b % 62] for b in digest[:8])


def random_token(size: int) -> bytes:
    """``size`` random base-62 digits (one ``os.urandom`` call for the usual sizes: a
    translate is several times faster than drawing characters from a ``random.Random``)."""
    out = os.urandom(size + 8).translate(_TRANSLATE).replace(b"\0", b"")
    while len(out) < size:
        out += os.urandom(size).translate(_TRANSLATE).replace(b"\0", b"")
    return out[:size]


def new_event_id() -> str:
    """A ``nuid.Next()``-shaped id: 22 base-62 characters."""
    return random_token(_NUID_LEN).decode()


def random_name(rng: random.Random) -> str:
    """8 base-62 characters drawn from ``rng``: the shape of ``getHash(nuid.Next())``,
    repeatable when the server's ``rng`` is seeded."""
    return "".join(rng.choice(BASE62) for _ in range(8))


def nkey_like(prefix: str) -> str:
    """A 56-character base32 id shaped like an nkey public key: ``N...`` for a server id,
    ``X...`` for its curve key."""
    return prefix + os.urandom(55).translate(_BASE32).decode()
