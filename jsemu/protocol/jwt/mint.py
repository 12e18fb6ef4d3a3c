"""Minting operator, account and user JWTs and ``.creds`` files, as ``nsc`` would.

The claims follow ``nats-io/jwt`` v2's JSON (``nats`` holds the role's fields, ``type`` and
``version``). Defaults are ``nsc``'s: unlimited (-1) limits, JetStream off unless limits are given.
The functions take plain keyword arguments and return the token; ``extra`` merges raw fields into
``nats`` for the claims these helpers do not name (hostile-input tests use it too).
"""

from __future__ import annotations

from typing import Any

from .codec import encode
from .keys import KeyPair

__all__ = ["NO_LIMIT", "account_jwt", "activation_jwt", "creds", "operator_jwt", "user_jwt"]

NO_LIMIT = -1


def _claims(sub: str, name: str, nats: dict[str, Any], exp: int = 0, nbf: int = 0) -> dict[str, Any]:
    claims: dict[str, Any] = {"name": name, "sub": sub, "nats": nats}
    if exp:
        claims["exp"] = exp
    if nbf:
        claims["nbf"] = nbf
    return claims


def operator_jwt(
    operator: KeyPair,
    name: str = "OP",
    system_account: str = "",
    signing_keys: list[str] | None = None,
    extra: dict[str, Any] | None = None,
) -> str:
    nats: dict[str, Any] = {"type": "operator"}
    if signing_keys:
        nats["signing_keys"] = signing_keys
    if system_account:
        nats["system_account"] = system_account
    return encode(_claims(operator.public_key, name, {**nats, **(extra or {})}), operator)


def account_jwt(
    account: str,
    signer: KeyPair,
    name: str = "A",
    *,
    conn: int = NO_LIMIT,
    subs: int = NO_LIMIT,
    data: int = NO_LIMIT,
    payload: int = NO_LIMIT,
    jetstream: dict[str, int] | None = None,
    tiered_limits: dict[str, dict[str, Any]] | None = None,
    signing_keys: list[str | dict[str, Any]] | None = None,
    revocations: dict[str, int] | None = None,
    exports: list[dict[str, Any]] | None = None,
    imports: list[dict[str, Any]] | None = None,
    exp: int = 0,
    nbf: int = 0,
    extra: dict[str, Any] | None = None,
) -> str:
    """An account's JWT signed by the operator (or one of its signing keys). ``jetstream``:
    ``mem_storage``, ``disk_storage``, ``streams``, ``consumer``... (omitted: JetStream off).
    ``tiered_limits``: the same per tier (``{"R1": {...}}``, as ``nsc edit account --js-tier 1``
    writes them), the account's own JetStream keys then 0."""
    limits: dict[str, Any] = {
        "subs": subs,
        "data": data,
        "payload": payload,
        "imports": NO_LIMIT,
        "exports": NO_LIMIT,
        "wildcards": True,
        "conn": conn,
        "leaf": NO_LIMIT,
    }
    if jetstream is not None:
        limits.update({"mem_storage": NO_LIMIT, "disk_storage": NO_LIMIT, "streams": NO_LIMIT, "consumer": NO_LIMIT})
        limits.update(jetstream)
    if tiered_limits is not None:
        limits.setdefault("mem_storage", 0)
        limits.setdefault("disk_storage", 0)
        limits["tiered_limits"] = tiered_limits
    nats: dict[str, Any] = {"limits": limits, "default_permissions": {"pub": {}, "sub": {}}, "type": "account"}
    if signing_keys:
        nats["signing_keys"] = signing_keys
    if revocations:
        nats["revocations"] = revocations
    if exports:
        nats["exports"] = exports
    if imports:
        nats["imports"] = imports
    return encode(_claims(account, name, {**nats, **(extra or {})}, exp, nbf), signer)


def user_jwt(
    user: str,
    signer: KeyPair,
    name: str = "U",
    *,
    issuer_account: str = "",
    pub: dict[str, list[str]] | None = None,
    sub: dict[str, list[str]] | None = None,
    resp: dict[str, Any] | None = None,
    subs: int = NO_LIMIT,
    data: int = NO_LIMIT,
    payload: int = NO_LIMIT,
    bearer_token: bool = False,
    src: list[str] | None = None,
    allowed_connection_types: list[str] | None = None,
    exp: int = 0,
    nbf: int = 0,
    scoped: bool = False,
    extra: dict[str, Any] | None = None,
    iat: float | None = None,
) -> str:
    """A user's JWT signed by its account (or a signing key: then ``issuer_account`` names the
    account). ``pub``/``sub``: ``{"allow": [...], "deny": [...]}``. ``scoped``: signed by a
    scoped key, so no permissions or limits of its own (nats-server refuses a scoped user with
    any, -1 included: the scope's template is all it gets)."""
    nats: dict[str, Any] = {} if scoped else {"pub": pub or {}, "sub": sub or {}}
    for key, value in (("subs", subs), ("data", data), ("payload", payload)):
        if not scoped or value != NO_LIMIT:
            nats[key] = value
    if scoped and (pub or sub):
        nats.update(pub=pub or {}, sub=sub or {})
    if resp is not None:
        nats["resp"] = resp
    if bearer_token:
        nats["bearer_token"] = True
    if src:
        nats["src"] = src
    if allowed_connection_types:
        nats["allowed_connection_types"] = allowed_connection_types
    if issuer_account:
        nats["issuer_account"] = issuer_account
    nats["type"] = "user"
    return encode(_claims(user, name, {**nats, **(extra or {})}, exp, nbf), signer, iat)


def activation_jwt(
    importer: str, exporter: KeyPair, subject: str, kind: str = "service", exp: int = 0, iat: int | None = None
) -> str:
    """An activation token: ``exporter`` (the account, or a signing key) lets account ``importer``
    import ``subject`` (``kind``: ``service`` or ``stream``) of a private export; ``iat``: when it
    was issued (now if not given), which an export's ``revocations`` compare with."""
    nats = {"subject": subject, "kind": kind, "type": "activation"}
    return encode(_claims(importer, subject, nats, exp), exporter, iat)


def creds(jwt: str, seed: str) -> str:
    """A ``.creds`` file's text: the user JWT and its seed, in ``nsc``'s armour."""
    return (
        "-----BEGIN NATS USER JWT-----\n"
        f"{jwt}\n"
        "------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n"
        "NKEYs are sensitive and should be treated as secrets.\n\n"
        "-----BEGIN USER NKEY SEED-----\n"
        f"{seed}\n"
        "------END USER NKEY SEED------\n\n"
        "*************************************************************\n"
    )
