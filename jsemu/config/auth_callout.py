"""``authorization { auth_callout { ... } }``: nats-server's ``parseAuthCallout``, its words.

``issuer`` (an account public key, required), ``account`` (``acc``; default ``$G``), ``auth_users``
(``users``; required: they log in without the callout, the service among them), ``xkey`` (``key``)
and ``allowed_accounts``. Keys are matched without case, as Go's ``strings.ToLower(k)``. An
``xkey`` needs NaCl's curve25519 box (XSalsa20-Poly1305), which ``cryptography`` does not offer:
without PyNaCl (the ``xkey`` extra) it is refused in one line.
"""

from __future__ import annotations

from typing import Any

from ..protocol.jwt.xkeys import available
from ..server.auth_callout_settings import CalloutSettings
from ..server.nkeys import is_valid_public_key
from ..server.routing import GLOBAL_ACCOUNT
from .go_types import go_type

__all__ = ["XKEY_NOT_SUPPORTED", "CalloutConfigError", "parse_auth_callout"]

XKEY_NOT_SUPPORTED = "auth callout xkey encryption needs PyNaCl: pip install 'jsemu[xkey]'"


class CalloutConfigError(ValueError):
    """A refusal; ``key`` is the block's key it is about ("" for the block)."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.key = key


def _strings(value: Any, key: str, what: str) -> list[str]:
    if not isinstance(value, list):
        raise CalloutConfigError(f"Expected {what} field to be an array, got {go_type(value)}", key)
    if not all(isinstance(v, str) for v in value):
        raise CalloutConfigError(f"interface conversion: interface {{}} is {go_type(value)}, not string", key)
    return list(value)


def parse_auth_callout(block: Any) -> CalloutSettings:
    if not isinstance(block, dict):
        raise CalloutConfigError(f"Expected authorization callout to be a map/struct, got {block}")
    issuer, account, xkey = "", GLOBAL_ACCOUNT, ""
    users: list[str] = []
    allowed: list[str] = []
    for key, value in block.items():
        name = key.lower()
        if name in ("issuer", "account", "acc", "xkey", "key") and not isinstance(value, str):
            raise CalloutConfigError(f"interface conversion: interface {{}} is {go_type(value)}, not string", key)
        if name == "issuer":
            issuer = value
            if not is_valid_public_key(issuer, "A"):
                raise CalloutConfigError(
                    f'Expected callout user to be a valid public account nkey, got "{issuer}"', key
                )
        elif name in ("account", "acc"):
            account = value or GLOBAL_ACCOUNT
        elif name in ("auth_users", "users"):
            users = _strings(value, key, "auth_users")
        elif name in ("xkey", "key"):
            xkey = value
            if not is_valid_public_key(xkey, "X"):
                raise CalloutConfigError(f'Expected callout xkey to be a valid public xkey, got "{xkey}"', key)
            if not available():
                raise CalloutConfigError(XKEY_NOT_SUPPORTED, key)
        elif name == "allowed_accounts":
            allowed = _strings(value, key, "allowed accounts")
        else:
            raise CalloutConfigError(f'Unknown field "{key}" parsing authorization callout', key)
    if not issuer:
        raise CalloutConfigError("Authorization callouts require an issuer to be specified")
    if not users:
        raise CalloutConfigError("Authorization callouts require authorized users to be specified")
    return CalloutSettings(issuer, account, tuple(users), tuple(allowed), xkey=xkey)
