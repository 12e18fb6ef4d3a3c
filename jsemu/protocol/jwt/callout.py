"""Auth callout claims (ADR-26): the server's authorization request and the service's response.

A server with ``auth_callout`` does not decide a client's login itself: it makes a one-time
user nkey, signs an ``authorization_request`` JWT with its own server nkey (``iss`` is the
server id, ``sub`` the callout issuer, ``aud`` ``nats-authorization-request``, ``exp`` the
auth timeout from now) and publishes it to ``$SYS.REQ.USER.AUTH``. The service answers with
an ``authorization_response`` JWT signed by the issuer account (``sub`` the one-time user
nkey, ``aud`` the server id) holding either a user JWT for that nkey or an ``error``. This
module builds the request's claims in nats-io/jwt v2's field order and ``omitempty`` rules
(``ServerID``, ``ClientInformation``, ``ConnectOptions``) and checks a response in the order
nats-server's ``processClientOrLeafCallout`` does; it returns what went wrong in nats-server's
words (they go to the log: the client only ever reads ``Authorization Violation``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .codec import JwtError, decode, encode
from .keys import PREFIX_ACCOUNT, PREFIX_SERVER, PREFIX_USER, KeyError_, KeyPair, decode_public

__all__ = [
    "AUDIENCE",
    "CALLOUT_SUBJECT",
    "ResponseCheck",
    "check_response",
    "request_jwt",
    "response_jwt",
]

#: Where the server sends its requests (``AuthCalloutSubject``).
CALLOUT_SUBJECT = b"$SYS.REQ.USER.AUTH"
#: The request's ``aud`` (``AuthRequestSubject``).
AUDIENCE = "nats-authorization-request"


def _is(key: Any, role: int) -> bool:
    if not isinstance(key, str):
        return False
    try:
        decode_public(key, role)
    except KeyError_:
        return False
    return True


def _omit_empty(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Go's ``omitempty``: no empty strings, zeros or empty lists."""
    return {k: v for k, v in pairs if v not in ("", 0, None, [])}


def request_jwt(
    server: KeyPair,
    issuer: str,
    user_nkey: str,
    server_info: dict[str, Any],
    client: dict[str, Any],
    connect: dict[str, Any],
    now: int,
    timeout: float,
    client_tls: dict[str, Any] | None = None,
) -> str:
    """The signed ``authorization_request``. ``server_info``: name, host, id, version (and
    cluster, and the server's curve key when the request is sealed); ``client``: host, id, user, name, kind, type (and nonce when the client
    signed one); ``connect``: the CONNECT's options; ``client_tls``: a TLS client's version,
    cipher and verified certificate chains (``server/client_tls.py``)."""
    server_id = {
        "name": server_info.get("name", ""),
        "host": server_info.get("host", ""),
        "id": server_info.get("id", ""),
        **_omit_empty([(k, server_info.get(k)) for k in ("version", "cluster", "xkey")]),
    }
    client_info = _omit_empty(
        [(k, client.get(k)) for k in ("host", "id", "user", "name", "tags", "name_tag", "kind", "type", "nonce")]
    )
    connect_opts = _omit_empty(
        [(k, connect.get(k)) for k in ("jwt", "nkey", "sig", "auth_token", "user", "pass", "name", "lang", "version")]
    )
    protocol = connect.get("protocol")
    connect_opts["protocol"] = protocol if isinstance(protocol, int) and not isinstance(protocol, bool) else 0
    request: dict[str, Any] = {
        "server_id": server_id,
        "user_nkey": user_nkey,
        "client_info": client_info,
        "connect_opts": connect_opts,
    }
    if client_tls is not None:  # omitempty, after connect_opts as in Go's AuthorizationRequest
        request["client_tls"] = client_tls
    request["type"] = "authorization_request"
    claims: dict[str, Any] = {
        "aud": AUDIENCE,
        "exp": now + int(timeout),
        "jti": "",
        "iat": now,
        "iss": "",
        "sub": issuer,
        "nats": request,
    }
    return encode(claims, server, now)


def response_jwt(
    user_nkey: str, server_id: str, signer: KeyPair, jwt: str = "", error: str = "", issuer_account: str = ""
) -> str:
    """An ``authorization_response`` as a callout service signs it (for tests and examples)."""
    nats: dict[str, Any] = _omit_empty([("jwt", jwt), ("error", error), ("issuer_account", issuer_account)])
    nats["type"] = "authorization_response"
    return encode({"aud": server_id, "sub": user_nkey, "nats": nats}, signer)


@dataclass(frozen=True)
class ResponseCheck:
    """A response checked: the user claims it grants, or why it grants nothing."""

    user: dict[str, Any] | None
    error: str = ""


def _title(text: str) -> str:
    return text[:1].upper() + text[1:]


def check_response(
    body: bytes,
    user_nkey: str,
    server_id: str,
    issuer: str,
    account: str,
    signers: frozenset[str] | None = None,
    any_signer: bool = False,
) -> ResponseCheck:
    """``decodeResponse`` then the user JWT's checks: the response decodes as an
    ``authorization_response`` signed by ``issuer``, for ``user_nkey`` and this server, without
    an ``error``; its user JWT decodes and is for ``user_nkey``. Config mode (``signers`` None):
    the user JWT was issued by ``issuer`` itself. Operator mode: ``signers`` are the account's
    signing keys, which may sign the response too, and who issued the user JWT is the caller's
    to check (``issuer_account`` allowed); ``any_signer``: the response came sealed with the
    account's xkey, which vouches for it in place of the signer. ``account`` (the callout
    account's name) is only quoted in the errors."""
    if not body:
        return ResponseCheck(None, f'Auth callout violation: "no reason supplied" on account "{account}"')
    try:
        token = decode(body.decode("utf-8", "replace"))
    except JwtError as exc:
        return ResponseCheck(None, _title(str(exc)))
    claims, nats = token.claims, token.nats
    if token.kind != "authorization_response":
        return ResponseCheck(None, "Not an authorization request claim")
    jwt, error = nats.get("jwt") or "", nats.get("error") or ""
    if not _is(claims.get("sub"), PREFIX_USER):
        return ResponseCheck(None, "Authorization response had validation errors: Subject must be a user public key")
    if not _is(claims.get("aud"), PREFIX_SERVER):
        return ResponseCheck(None, "Authorization response had validation errors: Audience must be a server public key")
    if not isinstance(jwt, str) or not isinstance(error, str) or bool(jwt) == bool(error):
        why = "Error or Jwt is required" if not jwt and not error else "Only Error or Jwt can be set"
        return ResponseCheck(None, f"Authorization response had validation errors: {why}")
    issuer_account = nats.get("issuer_account") or ""
    if issuer_account and not _is(issuer_account, PREFIX_ACCOUNT):
        why = "issuer_account is not an account public key"
        return ResponseCheck(None, f"Authorization response had validation errors: {why}")
    if claims.get("sub") != user_nkey:
        return ResponseCheck(None, "Auth callout violation: auth callout response is not for expected user")
    if claims.get("aud") != server_id:
        return ResponseCheck(None, "Auth callout violation: auth callout response is not for server")
    if error:
        return ResponseCheck(None, f"Auth callout service returned an error: {error}")
    signer = issuer_account or claims.get("iss")
    if signer != issuer and (signers is None or signer not in signers) and not (any_signer and signers is not None):
        return ResponseCheck(None, "Auth callout signing key is unknown")
    try:
        user = decode(jwt)
    except JwtError as exc:
        return ResponseCheck(None, _title(str(exc)))
    if user.kind != "user":
        return ResponseCheck(None, "Not a user claim")
    if user.claims.get("sub") != user_nkey:
        got = user.claims.get("sub")
        return ResponseCheck(None, f'Expected authorized user of "{user_nkey}" but got "{got}" on account "{account}"')
    if signers is not None:
        return ResponseCheck(user.claims)
    if user.nats.get("issuer_account"):
        return ResponseCheck(None, f'Error non operator mode account "{account}": attempted to use issuer_account')
    if user.claims.get("iss") != issuer:
        got = user.claims.get("iss")
        return ResponseCheck(
            None, f'Wrong issuer for auth callout response on account "{account}", expected "{issuer}" got "{got}"'
        )
    return ResponseCheck(user.claims)
