"""NATS nkey pairs: make, encode, decode and sign, with ``cryptography``'s Ed25519 alone.

An nkey seed is base32 (no padding) of two prefix bytes (``S`` for seed, then the role: ``O``
operator, ``A`` account, ``U`` user), the 32-byte Ed25519 seed and a CRC-16 (XMODEM, little
endian); the public key is one role byte, the 32-byte public key and the CRC, as Go's ``nkeys``
encodes them. The server side needs only the public half (``server/nkeys.py`` decodes it); this
module is for minting (the fixture, the tests) and for reading a ``.creds`` seed. The PyPI
``nkeys`` package does the same with PyNaCl, a dependency the server does not otherwise need.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "PREFIX_ACCOUNT",
    "PREFIX_OPERATOR",
    "PREFIX_SERVER",
    "PREFIX_USER",
    "KeyError_",
    "KeyPair",
    "decode_public",
    "verify",
]

PREFIX_OPERATOR = 14 << 3
PREFIX_ACCOUNT = 0
PREFIX_USER = 20 << 3
PREFIX_SERVER = 13 << 3
_PREFIX_SEED = 18 << 3
_ROLES = frozenset({PREFIX_OPERATOR, PREFIX_ACCOUNT, PREFIX_USER, PREFIX_SERVER, 2 << 3})


class KeyError_(ValueError):
    """Not an nkey (bad base32, checksum, role or length)."""


def _b32(raw: bytes) -> str:
    return base64.b32encode(raw + binascii.crc_hqx(raw, 0).to_bytes(2, "little")).decode().rstrip("=")


def _unb32(text: str) -> bytes:
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError) as exc:
        raise KeyError_("invalid encoding") from exc
    if len(raw) < 4 or binascii.crc_hqx(raw[:-2], 0) != int.from_bytes(raw[-2:], "little"):
        raise KeyError_("invalid checksum")
    return raw[:-2]


def decode_public(key: str, role: int | None = None) -> bytes:
    """The raw 32-byte Ed25519 key of a public nkey (of ``role`` when given)."""
    body = _unb32(key)
    if len(body) != 33 or body[0] not in _ROLES or (role is not None and body[0] != role):
        raise KeyError_("invalid public key")
    return body[1:]


def verify(public: str, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``data`` signed by the public nkey ``public``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(decode_public(public)).verify(signature, data)
    except (InvalidSignature, KeyError_, ValueError):
        return False
    return True


@dataclass(frozen=True)
class KeyPair:
    """An nkey with its seed: it can sign."""

    role: int
    raw_seed: bytes

    @classmethod
    def create(cls, role: int) -> KeyPair:
        return cls(role, os.urandom(32))

    @classmethod
    def from_seed(cls, seed: str) -> KeyPair:
        body = _unb32(seed.strip())
        if len(body) != 34 or body[0] & 0xF8 != _PREFIX_SEED:
            raise KeyError_("invalid seed")
        role = ((body[0] & 7) << 5) | ((body[1] & 0xF8) >> 3)
        if role not in _ROLES:
            raise KeyError_("invalid seed role")
        return cls(role, body[2:])

    @property
    def seed(self) -> str:
        return _b32(bytes([_PREFIX_SEED | self.role >> 5, (self.role & 31) << 3]) + self.raw_seed)

    @property
    def public_key(self) -> str:
        return _b32(bytes([self.role]) + self._private().public_key().public_bytes_raw())

    def sign(self, data: bytes) -> bytes:
        return self._private().sign(data)

    def _private(self) -> Ed25519PrivateKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return Ed25519PrivateKey.from_private_bytes(self.raw_seed)
