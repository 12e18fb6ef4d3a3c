"""NATS JWTs on the wire: ``header.claims.signature``, each part raw URL-safe base64.

The header is ``{"typ":"JWT","alg":"ed25519-nkey"}``; the claims are JSON whose ``iss`` is the
public nkey that signed ``header.claims`` (the bytes as sent) with Ed25519. ``jti`` is the
base32 (no padding) SHA-512/256 of the claims serialised with an empty ``jti``, as Go's
``nats-io/jwt`` v2 computes it; nats-server does not check it, so decoding does not either.
:func:`decode` checks only the form and the signature against ``iss``: which issuers are
trusted, and the times, are the server's business (``server/operator_auth.py``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from .keys import KeyPair, verify

__all__ = ["HEADER", "JwtError", "Token", "decode", "encode"]

HEADER = {"typ": "JWT", "alg": "ed25519-nkey"}
_ALGORITHMS = frozenset({"ed25519-nkey", "ed25519"})  # v2, and v1 tokens


class JwtError(ValueError):
    """Not a JWT nats-server would accept (form or signature)."""


@dataclass(frozen=True)
class Token:
    """A decoded, signature-checked JWT."""

    claims: dict[str, Any]
    text: str

    @property
    def nats(self) -> dict[str, Any]:
        value = self.claims.get("nats")
        return value if isinstance(value, dict) else {}

    @property
    def kind(self) -> str:
        return str(self.nats.get("type") or self.claims.get("type") or "")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    if "=" in text or "+" in text or "/" in text:
        raise JwtError("invalid base64")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise JwtError("invalid base64") from exc


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def encode(claims: dict[str, Any], signer: KeyPair, now: float | None = None) -> str:
    """Sign ``claims`` (a copy gets ``iss``, ``iat``, ``jti`` and ``nats.version`` 2)."""
    body = dict(claims)
    body["iss"] = signer.public_key
    body.setdefault("iat", int(time.time() if now is None else now))
    nats = body.get("nats")
    if isinstance(nats, dict):
        body["nats"] = {**nats, "version": 2}
    standard = {k: body[k] for k in ("aud", "exp", "jti", "iat", "iss", "name", "nbf", "sub") if body.get(k)}
    standard.pop("jti", None)
    digest = hashlib.new("sha512_256", _dumps(standard)).digest()
    body["jti"] = base64.b32encode(digest).decode().rstrip("=")
    signing_input = _b64(_dumps(HEADER)) + "." + _b64(_dumps(body))
    return signing_input + "." + _b64(signer.sign(signing_input.encode()))


def decode(text: str) -> Token:
    """The token's claims, once its form and its signature by ``iss`` check out."""
    parts = text.split(".")
    if len(parts) != 3:
        raise JwtError("expected 3 chunks")
    try:
        header = json.loads(_unb64(parts[0]))
        claims = json.loads(_unb64(parts[1]))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:  # nesting past Python's limit
        raise JwtError("invalid JSON") from exc
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise JwtError("invalid JSON")
    if str(header.get("typ", "")).upper() != "JWT" or str(header.get("alg", "")).lower() not in _ALGORITHMS:
        raise JwtError("unexpected header")
    issuer = claims.get("iss")
    if not isinstance(issuer, str) or not verify(issuer, f"{parts[0]}.{parts[1]}".encode(), _unb64(parts[2])):
        raise JwtError("claim failed V2 signature verification")
    return Token(claims, text)
