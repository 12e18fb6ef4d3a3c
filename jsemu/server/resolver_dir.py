"""The account JWTs of the NATS-based resolver, kept in a directory as nats-server keeps them.

nats-server's ``DirJWTStore`` (``server/dirstore.go``) unsharded, as both ``DirAccResolver``
(``type: full``) and ``CacheDirAccResolver`` (``type: cache``) make it: one file
``<dir>/<account public key>.jwt`` holding the JWT as pushed (no newline), the directory made if
missing, and whatever it holds read again at start (so accounts pushed before a restart are
there after it). ``limit`` caps the number of JWTs: a full store refuses a new account
(``jwt store is full``), a cache evicts the least recently used. Deleting renames the file to
``.jwt.deleted`` unless ``hard_delete`` (or the cache) removes it. :meth:`DirStore.hash` is the
XOR of every JWT's SHA-256, which ``$SYS.REQ.CLAIMS.PACK`` compares.

Expiry (Go's ``expirationTracker``): each JWT has a deadline, ``ttl`` after it was stored or last
read when the cache has a ``ttl``, else the JWT's own ``exp`` (none: never).
:meth:`DirStore.evict_expired`, called every :attr:`ResolverSettings.recheck_ns`, removes the
files past theirs; the accounts the server already has stay (nats-server keeps them in memory),
only the directory, ``CLAIMS.LIST`` and the lookups forget them. The clock is
:attr:`DirStore.now_ns`, which the server points at its own.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..protocol.jwt import JwtError, decode
from ..protocol.jwt.keys import KeyError_, decode_public

__all__ = ["DEFAULT_FETCH_TIMEOUT_NS", "DELETE_HARD", "DELETE_NONE", "DELETE_RENAME", "DirStore", "ResolverSettings"]

DELETE_NONE = "none"
DELETE_RENAME = "rename"
DELETE_HARD = "hard"
_EXTENSION = ".jwt"
_MINUTE = 60 * 10**9
#: nats-server's ``DEFAULT_ACCOUNT_FETCH_TIMEOUT``.
DEFAULT_FETCH_TIMEOUT_NS = 1_900_000_000
_NEVER = 2**63 - 1


@dataclass(frozen=True)
class ResolverSettings:
    """``resolver: {type, dir, allow_delete, hard_delete, limit, ttl, interval, timeout}``."""

    full: bool
    directory: Path
    delete: str = DELETE_NONE
    #: How many JWTs the directory holds at most (0 for full: no limit; cache: 1000).
    limit: int = 0
    interval_ns: int = 60 * 10**9
    timeout_ns: int = DEFAULT_FETCH_TIMEOUT_NS
    #: The cache's ``ttl``: how long a JWT stays after its last use (0: until the JWT's ``exp``).
    ttl_ns: int = 0

    @property
    def recheck_ns(self) -> int:
        """How often expired JWTs are looked for (Go: ``ttl/2``, at most a minute)."""
        half = self.ttl_ns // 2
        return half if 0 < half <= _MINUTE else _MINUTE


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
        #: The clock of the expiry deadlines (the server's, once it starts).
        self.now_ns: Callable[[], int] = time.time_ns
        #: Public key -> SHA-256 of its JWT, least recently used first (the cache's eviction order).
        self._hashes: dict[str, bytes] = {}
        #: Public key -> when its JWT expires from the directory (ns on :attr:`now_ns`).
        self._deadlines: dict[str, int] = {}
        for path in sorted(self.directory.glob("*" + _EXTENSION)):
            try:
                data = path.read_bytes()
            except OSError:
                continue
            key = path.name[: -len(_EXTENSION)]
            self._hashes[key] = hashlib.sha256(data).digest()
            self._track(key, data.decode("utf-8", "replace"))

    def _track(self, key: str, text: str) -> None:
        """``track``: the deadline of a JWT just stored (``ttl`` first, else its ``exp``)."""
        ttl = self.settings.ttl_ns
        if ttl:
            self._deadlines[key] = self.now_ns() + ttl
            return
        try:
            exp = decode(text).claims.get("exp")
        except JwtError:
            exp = None
        self._deadlines[key] = exp * 10**9 if isinstance(exp, int) and exp else _NEVER

    def evict_expired(self) -> list[str]:
        """Remove the JWTs past their deadline; the keys removed."""
        now = self.now_ns()
        gone = [key for key, deadline in self._deadlines.items() if deadline <= now]
        for key in gone:
            path = self.path(key)
            try:
                if path is not None:
                    path.unlink()
            except OSError:
                continue  # as Go: kept (and tried again) when the file cannot be removed
            self._hashes.pop(key, None)
            self._deadlines.pop(key, None)
        return gone

    def path(self, key: str) -> Path | None:
        return self.directory / f"{key}{_EXTENSION}" if _valid_key(key) else None

    def has(self, key: str) -> bool:
        return key in self._hashes

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
        if key in self._hashes:  # a use: to the back of the eviction order, the ttl restarts
            self._hashes[key] = self._hashes.pop(key)
            if self.settings.ttl_ns:
                self._deadlines[key] = self.now_ns() + self.settings.ttl_ns
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
            if self.settings.ttl_ns:
                self._deadlines[key] = self.now_ns() + self.settings.ttl_ns
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
            self._deadlines.pop(oldest, None)
        path.write_text(text)
        os.chmod(path, 0o644)
        self._hashes[key] = digest
        self._track(key, text)
        return True

    def save_if_newer(self, key: str, text: str) -> bool:
        """``saveIfNewer`` (preloads): kept when no JWT is there or the one there is not newer."""
        existing = self.load(key)
        if existing is not None:
            try:
                new = decode(text, generic_as_v1=True).claims
            except JwtError as exc:
                raise ValueError(str(exc)) from None
            try:
                old = decode(existing, generic_as_v1=True).claims
            except JwtError:
                return self.save(key, text)  # what is there does not decode: replaced
            if old.get("jti") == new.get("jti") or _int(old.get("iat")) > _int(new.get("iat")):
                return False
            if new.get("sub") != key:
                raise ValueError("jwt subject nkey and provided nkey do not match")
            if old.get("sub") != new.get("sub"):
                raise ValueError("subject of existing and new jwt do not match")
        return self.save(key, text)

    def delete(self, key: str, how: str) -> None:
        path = self.path(key)
        self._hashes.pop(key, None)
        self._deadlines.pop(key, None)
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
