"""The account JWTs of the NATS-based resolver, kept in a directory as nats-server keeps them.

nats-server's ``DirJWTStore`` (``server/dirstore.go``) unsharded, as both ``DirAccResolver``
(``type: full``) and ``CacheDirAccResolver`` (``type: cache``) make it: one file
``<dir>/<account public key>.jwt`` holding the JWT as pushed (no newline), the directory made if
missing, and whatever it holds read again at start (so accounts pushed before a restart are
there after it). ``limit`` caps the number of JWTs: a full store refuses a new account
(``jwt store is full``), a cache evicts the least recently used. Deleting renames the file to
``.jwt.deleted`` unless ``hard_delete`` (or the cache) removes it. :meth:`DirStore.hash` is the
XOR of every JWT's SHA-256, which ``$SYS.REQ.CLAIMS.PACK`` compares.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..protocol.jwt import JwtError, decode
from ..protocol.jwt.keys import KeyError_, decode_public

__all__ = ["DELETE_HARD", "DELETE_NONE", "DELETE_RENAME", "DirStore", "ResolverSettings"]

DELETE_NONE = "none"
DELETE_RENAME = "rename"
DELETE_HARD = "hard"
_EXTENSION = ".jwt"


@dataclass(frozen=True)
class ResolverSettings:
    """``resolver: {type, dir, allow_delete, hard_delete, limit, ttl, interval, timeout}``."""

    full: bool
    directory: Path
    delete: str = DELETE_NONE
    #: How many JWTs the directory holds at most (0 for full: no limit; cache: 1000).
    limit: int = 0
    interval_ns: int = 60 * 10**9
    timeout_ns: int = 2 * 10**9


def _valid_key(key: str) -> bool:
    try:
        decode_public(key)
    except KeyError_:
        return False
    return True


class DirStore:
    """One resolver directory (see the module's docstring)."""

    def __init__(self, settings: ResolverSettings) -> None:
        self.settings = settings
        self.directory = settings.directory
        self.directory.mkdir(parents=True, exist_ok=True)
        #: Public key -> SHA-256 of its JWT, least recently used first (the cache's eviction order).
        self._hashes: dict[str, bytes] = {}
        for path in sorted(self.directory.glob("*" + _EXTENSION)):
            try:
                self._hashes[path.name[: -len(_EXTENSION)]] = hashlib.sha256(path.read_bytes()).digest()
            except OSError:
                continue

    def path(self, key: str) -> Path | None:
        return self.directory / f"{key}{_EXTENSION}" if _valid_key(key) else None

    def account_keys(self) -> list[str]:
        """The accounts held, in the order nats-server's directory walk lists them."""
        return sorted(self._hashes)

    def load(self, key: str) -> str | None:
        path = self.path(key)
        if path is None:
            return None
        try:
            text = path.read_text()
        except OSError:
            return None
        if key in self._hashes:  # a use: to the back of the eviction order
            self._hashes[key] = self._hashes.pop(key)
        return text

    def save(self, key: str, text: str) -> bool:
        """Store ``text`` for ``key``; whether it changed (``OSError`` or ``ValueError``: refused)."""
        path = self.path(key)
        if path is None:
            raise ValueError("invalid public key")
        if not text:
            raise ValueError("invalid JWT")
        digest = hashlib.sha256(text.encode()).digest()
        if key in self._hashes:
            self._hashes[key] = self._hashes.pop(key)
            if self._hashes[key] == digest:
                return False
        elif self.settings.limit and len(self._hashes) >= self.settings.limit:
            if self.settings.full:
                raise ValueError("jwt store is full")
            oldest = next(iter(self._hashes))
            old_path = self.path(oldest)
            if old_path is not None:
                old_path.unlink(missing_ok=True)
            del self._hashes[oldest]
        path.write_text(text)
        os.chmod(path, 0o644)
        self._hashes[key] = digest
        return True

    def save_if_newer(self, key: str, text: str) -> bool:
        """``saveIfNewer`` (preloads): kept when no JWT is there or the one there is not newer."""
        existing = self.load(key)
        if existing is not None:
            try:
                new, old = decode(text).claims, decode(existing).claims
            except JwtError:
                return self.save(key, text)
            if old.get("jti") == new.get("jti") or int(old.get("iat") or 0) > int(new.get("iat") or 0):
                return False
        return self.save(key, text)

    def delete(self, key: str, how: str) -> None:
        path = self.path(key)
        self._hashes.pop(key, None)
        if path is None:
            return
        if how == DELETE_RENAME:
            try:
                path.rename(path.with_name(path.name + ".deleted"))
            except FileNotFoundError:
                pass
        else:
            path.unlink(missing_ok=True)

    def hash(self) -> bytes:
        out = bytearray(32)
        for digest in self._hashes.values():
            for i, byte in enumerate(digest):
                out[i] ^= byte
        return bytes(out)
