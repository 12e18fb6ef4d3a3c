"""Operator mode in the configuration file: ``operator``, ``trusted``/``trusted_keys``,
``resolver: MEMORY`` with ``resolver_preload``, and the ``system_account`` they imply.

As nats-server's ``parseOperators``/``parseAccountResolver`` and ``validateTrustedOperators``:
``operator`` is a path to an operator JWT (a bare JWT or ``nsc``'s armoured file) or, when the
file cannot be read and the text starts with ``eyJ``, the JWT itself; ``trusted`` names operator
keys without a JWT. Each preloaded account JWT must be signed by a trusted operator (or one of
its signing keys) for an account of that key; a bad one stops the start, as nats-server's words
say. The accounts become ``AccountConfig``s named by their public keys (JetStream on when their
JWT gives it limits) and the users an :class:`OperatorAuth`. The memory resolver and the
NATS-based ``{type: full|cache, dir}`` (``config/resolver_settings.py``: its directory's
accounts join the preloaded ones) are built; ``URL(...)`` is refused with one line.
"""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path
from typing import Any

from ..protocol.jwt import JwtError, decode
from ..protocol.jwt.keys import PREFIX_ACCOUNT, PREFIX_OPERATOR
from ..protocol.jwt.validation import preload_issues
from ..server.account_resolver import load_directory
from ..server.accounts import AccountConfig
from ..server.operator_auth import OperatorAuth, account_from_jwt, is_key, operator_keys, wired_imports
from ..server.options import ServerOptions
from ..server.resolver_dir import DirStore
from .parser import ConfigError, Positions
from .resolver_settings import resolver_settings

__all__ = ["OPERATOR_KEYS", "apply_operator"]

#: The top-level keys this module reads.
OPERATOR_KEYS = frozenset(
    {"operator", "operators", "root", "roots", "trusted", "trusted_keys", "resolver", "resolver_preload"}
)
_ARMOURED = re.compile(r"-{3,}[^\n]*-{3,}\n(?P<jwt>[^\n-][^\n]*)\n")


def _at(pos: Positions, key: str, message: str) -> ConfigError:
    where, line, column = pos.get((key,), ("", 0, 0))
    return ConfigError(f"{where}:{line}:{column}: {message}" if where else message)


def _read_operator(value: str) -> str:
    """nats-server's ``readOperatorJWT``: a file (armoured or bare), else an inline JWT."""
    try:
        text = Path(value).read_text()
    except OSError as exc:
        if not value.startswith("eyJ"):
            raise ConfigError(f"error parsing operator JWT: open {value}: no such file or directory") from exc
        text = value
    match = _ARMOURED.search(text)
    return (match.group("jwt") if match else text).strip()


def _decodes_as_account(text: str) -> bool:
    """``jwt.DecodeAccountClaims`` takes it (nats-server's test of a preloaded JWT: one of
    another operator passes, one it cannot decode is a configuration error)."""
    try:
        return decode(text, generic_as_v1=True).kind == "account"
    except JwtError:
        return False


def apply_operator(conf: dict[str, Any], options: ServerOptions, pos: Positions) -> None:
    """Set operator mode from ``conf`` if it asks for it (nothing to do otherwise)."""
    if not any(key in conf for key in OPERATOR_KEYS):
        return
    trusted: set[str] = set()
    system_account = ""
    for key in ("operator", "operators", "root", "roots"):
        if key not in conf:
            continue
        values = conf[key] if isinstance(conf[key], list) else [conf[key]]
        for value in values:
            try:
                token = decode(_read_operator(str(value)), generic_as_v1=True)
            except ConfigError as exc:
                raise _at(pos, key, str(exc)) from None
            except JwtError as exc:
                raise _at(pos, key, f"error parsing operator JWT: {exc}") from None
            if token.kind != "operator":  # signed by any operator key, even not its own: as nats-server
                raise _at(pos, key, "error parsing operator JWT: not operator claim")
            trusted |= operator_keys(token)
            system_account = system_account or str(token.nats.get("system_account") or "")
    for key in ("trusted", "trusted_keys"):
        if key not in conf:
            continue
        values = conf[key] if isinstance(conf[key], list) else [conf[key]]
        for value in values:
            if not isinstance(value, str) or not is_key(value, PREFIX_OPERATOR):
                raise _at(pos, key, f'trust key "{value}" required to be a valid public operator nkey')
            trusted.add(value)
    if "accounts" in conf:
        raise ConfigError("operators do not allow Accounts to be configured directly")
    if "authorization" in conf or "no_auth_user" in conf:
        raise ConfigError("operator mode with an authorization block is not supported by jsemu")
    resolver = conf.get("resolver")
    if resolver is None:
        raise ConfigError("operator mode without a resolver is not supported by jsemu (use resolver: MEMORY)")
    settings = resolver_settings(resolver, lambda message: _at(pos, "resolver", message))
    kind = "DIR" if settings is not None else str(resolver).strip().upper()
    if kind.startswith("URL("):
        raise _at(pos, "resolver", "the URL resolver is not supported by jsemu")
    if kind not in ("MEM", "MEMORY", "DIR"):
        raise _at(
            pos,
            "resolver",
            'error parsing account resolver, should be MEM or  URL("url") or a map containing dir and type '
            "state=[FULL|CACHE])",
        )
    auth = OperatorAuth(trusted=trusted)
    preload = conf.get("resolver_preload") or {}
    if not isinstance(preload, dict):
        raise _at(pos, "resolver_preload", "preload should be a map of account_public_key:account_jwt")
    if settings is not None:
        auth.resolver_store = DirStore(settings)
    configured = conf.get("system_account") or conf.get("system") or system_account
    for public_key, text in preload.items():
        if issues := preload_issues(str(text)):  # nats-server's checkResolvePreloads
            logging.getLogger("jsemu.config").warning("Account [%s] has validation issues:", public_key)
            for issue in issues:
                logging.getLogger("jsemu.config").warning("  - %s", issue)
        where = ("resolver_preload", public_key)
        try:
            account = account_from_jwt(str(text), trusted)
        except JwtError:
            wherefile, line, column = pos.get(where, ("", 0, 0))
            if not (isinstance(text, str) and _decodes_as_account(text) and is_key(public_key, PREFIX_ACCOUNT)):
                message = "invalid account JWT"
                raise ConfigError(f"{wherefile}:{line}:{column}: {message}" if wherefile else message) from None
            if public_key == configured:
                raise ConfigError("error resolving system account: account validation failed") from None
            continue  # another operator's account: just not there (nats-server)
        if account.public_key != public_key:
            if public_key == configured:
                raise ConfigError("error resolving system account: account validation failed")
            continue
        auth.accounts[public_key] = account
        if auth.resolver_store is None:
            auth.preloaded[public_key] = str(text)
    if auth.resolver_store is not None:
        load_directory(auth, auth.resolver_store, {k: str(v) for k, v in preload.items() if k in auth.accounts})
    if configured and configured not in auth.accounts:
        raise ConfigError("error resolving system account: account missing")
    options.auth = auth
    imports = wired_imports(auth.accounts, time.time())
    options.accounts = [
        AccountConfig(
            a.public_key,
            jetstream=a.jetstream and a.public_key != configured,
            limits=a.js_limits,
            exports=tuple(export for export, _ in a.exports),
            imports=imports.get(a.public_key, ()),
        )
        for a in auth.accounts.values()
    ]
    if configured:
        options.system_account = str(configured)
