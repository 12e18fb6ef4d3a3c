"""NATS nkeys for client authentication: the nonce in INFO and the signed nonce in CONNECT.

An nkey is an Ed25519 public key in base32 with a role prefix byte and a CRC-16 (XMODEM)
trailer, as Go's ``nkeys`` package encodes it (``U...`` for users). The PyPI ``nkeys``
package (0.2.1) can sign with a seed but cannot load a public key alone, so the key is
decoded here and the signature checked with ``cryptography``'s Ed25519 (a maintained,
typed library). The signature's base64 is decoded as nats-server does: raw URL-safe first,
then standard with padding.
"""

from __future__ import annotations

import base64
import binascii
import os
import re

__all__ = ["PREFIX_USER", "decode_public_key", "is_valid_user_key", "new_nonce", "verify_signature"]

#: Role prefix bytes (Go's ``nkeys.PrefixByte``): public keys of these roles exist.
PREFIX_USER = 20 << 3
_PUBLIC_PREFIXES = frozenset({14 << 3, 13 << 3, 2 << 3, 0, PREFIX_USER})  # operator, server, cluster, account, user
_NONCE_BYTES = 11  # nats-server's nonceRawLen
_RAW_URL = re.compile(r"^[A-Za-z0-9_-]*$")
_STD = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def new_nonce() -> str:
    """A fresh nonce for one connection's INFO (raw URL-safe base64 of 11 random bytes)."""
    return base64.urlsafe_b64encode(os.urandom(_NONCE_BYTES)).rstrip(b"=").decode()


def decode_public_key(key: str) -> tuple[int, bytes] | None:
    """``(prefix, raw key)`` of an encoded public nkey, or ``None`` if it is not one."""
    if not key or len(key) % 8 in (1, 3, 6):
        return None
    try:
        raw = base64.b32decode(key + "=" * (-len(key) % 8))
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 4:
        return None
    body, crc = raw[:-2], int.from_bytes(raw[-2:], "little")
    if binascii.crc_hqx(body, 0) != crc or body[0] not in _PUBLIC_PREFIXES:
        return None
    return body[0], body[1:]


def is_valid_user_key(key: str) -> bool:
    """Go's ``nkeys.IsValidPublicUserKey``, which nats-server checks each ``nkey:`` user with."""
    decoded = decode_public_key(key)
    return decoded is not None and decoded[0] == PREFIX_USER and len(decoded[1]) == 32


_ROLE_BYTES = {"A": 0, "X": 23 << 3}


def is_valid_public_key(key: str, role: str) -> bool:
    """Go's ``nkeys.IsValidPublicAccountKey`` (``role`` "A") and ``IsValidPublicCurveKey`` ("X")."""
    if role == "X":  # the curve prefix is not a signing role: checked here only
        try:
            raw = base64.b32decode(key + "=" * (-len(key) % 8))
        except (binascii.Error, ValueError):
            return False
        body = raw[:-2]
        ok = len(raw) == 35 and binascii.crc_hqx(body, 0) == int.from_bytes(raw[-2:], "little")
        return ok and body[0] == _ROLE_BYTES["X"]
    decoded = decode_public_key(key)
    return decoded is not None and decoded[0] == _ROLE_BYTES[role] and len(decoded[1]) == 32


def _decode_signature(sig: str) -> bytes | None:
    """Go's ``base64.RawURLEncoding`` then ``base64.StdEncoding`` (both skip CR and LF)."""
    text = sig.replace("\r", "").replace("\n", "")
    try:
        if _RAW_URL.match(text) and len(text) % 4 != 1:
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        if _STD.match(text) and len(text) % 4 == 0:
            return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return None


def verify_signature(key: str, nonce: str, sig: str) -> bool:
    """Whether ``sig`` is the signature of ``nonce`` by the nkey ``key``."""
    signature = _decode_signature(sig)
    decoded = decode_public_key(key)
    if signature is None or decoded is None or len(decoded[1]) != 32:
        return False
    # Only servers with nkey users pay for the import (as bcrypt in auth.py).
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(decoded[1]).verify(signature, nonce.encode())
    except (InvalidSignature, ValueError):
        return False
    return True
