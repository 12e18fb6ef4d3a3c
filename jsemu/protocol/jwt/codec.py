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
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from .go_claims import go_type_error, parse_document
from .keys import KeyError_, KeyPair, decode_public, verify

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


_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: nats-io/jwt's ``MaxTokenSize``.
MAX_TOKEN_SIZE = 1024 * 1024
#: Who may sign each kind of claim (``ExpectedPrefixes``), as Go prints them.
_EXPECTED = {
    "account": ("account", "operator"),
    "activation": ("account", "operator"),
    "user": ("account",),
    "operator": ("operator",),
    "authorization_request": ("server",),
    "authorization_response": ("account",),
}
_PREFIX_NAMES = {0: "account", 14 << 3: "operator", 20 << 3: "user", 13 << 3: "server", 2 << 3: "cluster"}


def _unb64(text: str) -> bytes:
    """Go's ``base64.RawURLEncoding.DecodeString``, with its ``illegal base64 data at input
    byte N`` (line breaks are skipped, as Go does)."""
    count = 0
    last = 0
    for i, c in enumerate(text):
        if c in "\r\n":
            continue
        if c not in _B64_ALPHABET:
            raise JwtError(f"illegal base64 data at input byte {i}")
        count += 1
        last = i
    if count % 4 == 1:
        raise JwtError(f"illegal base64 data at input byte {last}")
    clean = text.replace("\r", "").replace("\n", "")
    return base64.urlsafe_b64decode(clean + "=" * (-len(clean) % 4))


#: Python's JSON complaint -> what Go's ``json.Unmarshal`` says about the character there.
_GO_JSON = {
    "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
    "Expecting ':' delimiter": "after object key",
    "Expecting ',' delimiter": "after object key:value pair",
    "Extra data": "after top-level value",
}
_GO_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


def _not_json(constant: str) -> Any:
    """``NaN``, ``Infinity``, ``-Infinity``, which Python's JSON reads and Go's does not."""
    where = "in numeric literal" if constant.startswith("-") else "looking for beginning of value"
    raise JwtError(f"invalid character {constant.lstrip('-')[0]!r} {where}")


def _json(data: bytes, target: str) -> dict[str, Any]:
    """``json.Unmarshal`` into a Go struct (``target``, its type's name): its common errors (a
    truncated document, a bad character, not an object); ``null`` is an empty struct."""
    try:
        value = json.loads(data.decode("utf-8", "replace"), parse_constant=_not_json)
    except RecursionError:  # nesting past Python's limit (Go's decoder stops at 10000 levels)
        raise JwtError("exceeded max depth") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise JwtError("unexpected end of JSON input") from None
        char = exc.doc[exc.pos]
        where = _GO_JSON.get(exc.msg, "looking for beginning of value")
        quoted = "'\\''" if char == "'" else repr(char)  # Go's %q of a rune
        raise JwtError(f"invalid character {quoted} {where}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise JwtError(f"json: cannot unmarshal {_GO_TYPES.get(type(value), 'value')} into Go value of type {target}")
    return value


#: Claim kinds with structs of their own that the server never reads as JWTs it checks.
_AUTHORIZATION = frozenset({"authorization_request", "authorization_response"})


def _go_types(document: Any, kind: str) -> None:
    """Go's ``json.Unmarshal`` error for a claim field of the wrong JSON type, if any."""
    failure = go_type_error(document, kind)
    if failure is not None:
        raise JwtError(failure)


def _is_role(key: str, role: int) -> bool:
    try:
        decode_public(key, role)
    except KeyError_:
        return False
    return True


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


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


def decode(text: str, generic_as_v1: bool = False) -> Token:
    """The token's claims, once its form and its signature by ``iss`` check out, refused with
    nats-io/jwt v2 ``Decode``'s words and in its order (size, chunks, header, claims, version,
    signature, the issuer's kind). Claims of no known type are checked as ``DecodeGeneric``
    does (a v1 signature for the ``ed25519`` algorithm only), or, with ``generic_as_v1``, as
    ``Decode`` does (always v1: what ``DecodeAccountClaims`` answers for them)."""
    if len(text) > MAX_TOKEN_SIZE:
        raise JwtError(f"token size {len(text)} exceeds maximum of {MAX_TOKEN_SIZE} bytes: token too large")
    parts = text.split(".")
    if len(parts) != 3:
        raise JwtError("expected 3 chunks")
    header = _json(_unb64(parts[0]), "jwt.Header")
    typ, alg = str(header.get("typ") or ""), str(header.get("alg") or "")
    if typ.upper() != "JWT":
        raise JwtError(f"not supported type {_go_quote(typ)}")
    if alg.lower() not in _ALGORITHMS:
        raise JwtError(f"unexpected {_go_quote(alg)} algorithm")
    raw = _unb64(parts[1])
    claims = _json(raw, "jwt.identifier")
    document = parse_document(raw.decode("utf-8", "replace"))
    _go_types(document, "identifier")  # nats-io/jwt reads every JWT as its identifier first
    nats = claims.get("nats") if isinstance(claims.get("nats"), dict) else {}
    assert isinstance(nats, dict)
    kind = claims.get("type") or nats.get("type") or ""
    version = 1 if claims.get("type") else nats.get("version", 0)
    version = version if isinstance(version, int) and not isinstance(version, bool) else 0
    if version > 2:
        raise JwtError("JWT was generated by a newer version ")
    if kind in ("cluster", "server"):
        raise JwtError(f"{kind.capitalize()}Claims are not supported")
    if kind in _EXPECTED and version not in (1, 2):
        raise JwtError(f"library supports version 2 or less - received {version}")
    if kind in _EXPECTED and version == 2:
        _go_types(document, kind)  # then as its kind's claims (v1 ones are another struct)
    elif kind not in _EXPECTED and kind not in _AUTHORIZATION:
        _go_types(document, "generic")
    if kind not in _EXPECTED:  # generic claims (a delete request): ``DecodeGeneric``'s rule
        version = 1 if alg == "ed25519" or generic_as_v1 else 2
    signature = _unb64(parts[2])
    issuer = claims.get("iss")
    signed = parts[1] if version <= 1 else f"{parts[0]}.{parts[1]}"
    if not isinstance(issuer, str) or not verify(issuer, signed.encode(), signature):
        raise JwtError(f"claim failed V{1 if version <= 1 else 2} signature verification")
    expected = _EXPECTED.get(str(kind))
    signers = [role for role, name in _PREFIX_NAMES.items() if expected is not None and name in expected]
    if expected is not None and not any(_is_role(str(issuer), role) for role in signers):
        raise JwtError(f"unable to validate expected prefixes - [{' '.join(expected)}]")
    return Token(claims, text)
