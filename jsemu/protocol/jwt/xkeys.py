"""Curve (``X``) nkeys and their sealed boxes, for the auth callout's ``xkey`` encryption.

Go's nkeys ``Seal``: ``xkv1`` + a random 24-byte nonce + NaCl ``box.Seal`` (X25519 key agreement,
XSalsa20-Poly1305) of the message, from the sender's curve key to the recipient's public one;
``Open`` checks the prefix and undoes it. A public curve key is base32 (no padding) of the role
byte ``X`` (23 << 3), the 32-byte X25519 key and a CRC-16, as the other nkeys.
``cryptography`` has X25519 but no XSalsa20-Poly1305, so this module needs PyNaCl (the ``xkey``
extra, ``pip install 'jsemu[xkey]'``); :func:`available` says whether it is installed.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass

__all__ = ["PREFIX_CURVE", "VERSION", "CurveKey", "XKeyError", "available", "decode_curve_public"]

PREFIX_CURVE = 23 << 3
#: nkeys' ``XKeyVersionV1``.
VERSION = b"xkv1"
_NONCE = 24


class XKeyError(ValueError):
    """Not a curve key, or a box that does not open."""


def available() -> bool:
    """Whether PyNaCl is installed (xkey encryption can be done)."""
    try:
        import nacl.public  # noqa: F401
    except ImportError:
        return False
    return True


def _encode_public(raw: bytes) -> str:
    body = bytes([PREFIX_CURVE]) + raw
    return base64.b32encode(body + binascii.crc_hqx(body, 0).to_bytes(2, "little")).decode().rstrip("=")


def decode_curve_public(key: str) -> bytes:
    """The raw 32-byte X25519 key of a public curve nkey."""
    try:
        raw = base64.b32decode(key + "=" * (-len(key) % 8))
    except (binascii.Error, ValueError) as exc:
        raise XKeyError("invalid curve key") from exc
    body = raw[:-2]
    if len(raw) != 35 or body[0] != PREFIX_CURVE or binascii.crc_hqx(body, 0) != int.from_bytes(raw[-2:], "little"):
        raise XKeyError("invalid curve key")
    return body[1:]


@dataclass(frozen=True)
class CurveKey:
    """A curve key pair (its private half)."""

    raw_private: bytes

    @classmethod
    def create(cls) -> CurveKey:
        from nacl.public import PrivateKey

        return cls(bytes(PrivateKey.generate()))

    @property
    def public_key(self) -> str:
        from nacl.public import PrivateKey

        return _encode_public(bytes(PrivateKey(self.raw_private).public_key))

    def seal(self, message: bytes, recipient: str) -> bytes:
        """``Seal``: ``message`` boxed for ``recipient`` (a public curve nkey)."""
        from nacl.public import Box, PrivateKey, PublicKey

        box = Box(PrivateKey(self.raw_private), PublicKey(decode_curve_public(recipient)))
        nonce = os.urandom(_NONCE)
        return VERSION + bytes(box.encrypt(message, nonce))

    def open(self, sealed: bytes, sender: str) -> bytes:
        """``Open``: a box ``sender`` (a public curve nkey) sealed for this key."""
        from nacl.exceptions import CryptoError
        from nacl.public import Box, PrivateKey, PublicKey

        if not sealed.startswith(VERSION) or len(sealed) < len(VERSION) + _NONCE:
            raise XKeyError("invalid encrypted data")
        box = Box(PrivateKey(self.raw_private), PublicKey(decode_curve_public(sender)))
        body = sealed[len(VERSION) :]
        try:
            return bytes(box.decrypt(body[_NONCE:], body[:_NONCE]))
        except CryptoError as exc:
            raise XKeyError("failed to decrypt") from exc
