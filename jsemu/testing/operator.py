"""An operator, its system account, accounts and users minted for one test: no ``nsc``, no files
to commit.

:class:`OperatorSetup` keeps the keys it made, so a test can mint more users, re-issue an
account with other limits (a claim update) or revoke a user. :meth:`OperatorSetup.config_text`
is the configuration file nats-server and ``jsemu serve`` read (``operator``, ``system_account``,
``resolver: MEMORY`` or, with :attr:`OperatorSetup.resolver`, the NATS-based one, ``resolver_preload``); the ``jsemu_factory(operator=True)`` fixture and
``jsemu serve --operator-demo DIR`` build servers from it. Users come back as :class:`MintedUser`:
their JWT, seed and ``.creds`` file (written under ``directory`` when one is given), which is
what nats-py (``user_credentials=``) and nats.js (``credsAuthenticator``) take.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocol.jwt import PREFIX_ACCOUNT, PREFIX_OPERATOR, PREFIX_USER, KeyPair, encode
from ..protocol.jwt.mint import account_jwt, creds, operator_jwt, user_jwt

__all__ = ["MintedAccount", "MintedUser", "OperatorSetup"]


@dataclass
class MintedAccount:
    name: str
    key: KeyPair
    jwt: str
    #: The keyword arguments of :func:`~jsemu.protocol.jwt.mint.account_jwt` it was minted with.
    claims: dict[str, Any] = field(default_factory=dict)

    @property
    def public_key(self) -> str:
        return self.key.public_key


@dataclass
class MintedUser:
    name: str
    account: str
    key: KeyPair
    jwt: str
    #: The ``.creds`` file, when the setup has a directory.
    creds_path: Path | None = None

    @property
    def seed(self) -> str:
        return self.key.seed

    @property
    def public_key(self) -> str:
        return self.key.public_key

    @property
    def creds(self) -> str:
        return creds(self.jwt, self.seed)


class OperatorSetup:
    """Keys and JWTs for one operator-mode server (see the module's docstring)."""

    def __init__(self, directory: str | Path | None = None, name: str = "OP") -> None:
        self.directory = Path(directory) if directory is not None else None
        self.operator = KeyPair.create(PREFIX_OPERATOR)
        self.system = KeyPair.create(PREFIX_ACCOUNT)
        self.operator_jwt = operator_jwt(self.operator, name, system_account=self.system.public_key)
        self.accounts: dict[str, MintedAccount] = {}
        self.users: dict[str, MintedUser] = {}
        #: ``"full"`` or ``"cache"``: :meth:`config_text` serves the NATS-based resolver, its JWTs
        #: in ``<directory>/jwt`` (``allow_delete`` on for ``full``); empty: ``resolver: MEMORY``.
        self.resolver = ""
        self.account("SYS", key=self.system)

    def account(self, name: str, key: KeyPair | None = None, **claims: Any) -> MintedAccount:
        """Mint (or re-issue, same key) account ``name``; ``claims``: ``account_jwt``'s keywords
        (``jetstream={"mem_storage": ...}``, ``tiered_limits={"R1": {...}}``, ``conn``,
        ``revocations``, ``signing_keys``...)."""
        old = self.accounts.get(name)
        key = key or (old.key if old is not None else KeyPair.create(PREFIX_ACCOUNT))
        minted = MintedAccount(name, key, account_jwt(key.public_key, self.operator, name, **claims), dict(claims))
        self.accounts[name] = minted
        return minted

    def user(self, name: str, account: str, signer: KeyPair | None = None, **claims: Any) -> MintedUser:
        """Mint user ``name`` of ``account``; ``claims``: ``user_jwt``'s keywords (``pub``, ``sub``,
        ``resp``, ``subs``, ``payload``, ``exp``, ``bearer_token``...). ``signer``: one of the
        account's signing keys (``issuer_account`` is then set)."""
        owner = self.accounts[account]
        key = KeyPair.create(PREFIX_USER)
        if signer is not None:
            claims.setdefault("issuer_account", owner.public_key)
            scopes = [k for k in owner.claims.get("signing_keys", []) if isinstance(k, dict)]
            claims.setdefault("scoped", any(k.get("key") == signer.public_key for k in scopes))
        token = user_jwt(key.public_key, signer or owner.key, name, **claims)
        user = MintedUser(name, account, key, token)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            user.creds_path = self.directory / f"{name}.creds"
            user.creds_path.write_text(user.creds)
            user.creds_path.chmod(0o600)
        self.users[name] = user
        return user

    def revoke(self, account: str, user: str, at: int) -> MintedAccount:
        """Re-issue ``account`` with ``user`` (a name or public key) revoked for JWTs issued up to ``at``."""
        minted = self.accounts[account]
        key = self.users[user].public_key if user in self.users else user
        revocations = {**minted.claims.get("revocations", {}), key: at}
        return self.account(account, **{**minted.claims, "revocations": revocations})

    def config_text(self) -> str:
        """The configuration file's operator part (the same text for nats-server and jsemu)."""
        preload = "\n".join(f"  {a.public_key}: {a.jwt}" for a in self.accounts.values())
        resolver = "MEMORY"
        if self.resolver:
            if self.directory is None:
                raise ValueError("the NATS-based resolver keeps its JWTs in the set-up's directory: give one")
            delete = ", allow_delete: true" if self.resolver == "full" else ""
            resolver = f'{{ type: {self.resolver}, dir: "{self.directory / "jwt"}"{delete} }}'
        return (
            f"operator: {self.operator_jwt}\n"
            f"system_account: {self.system.public_key}\n"
            f"resolver: {resolver}\n"
            f"resolver_preload: {{\n{preload}\n}}\n"
        )

    def delete_request(self, *accounts: str) -> str:
        """What ``$SYS.REQ.CLAIMS.DELETE`` takes to delete ``accounts`` (names or keys): a JWT
        the operator signs for itself, as ``nsc delete account`` sends."""
        keys = [self.accounts[a].public_key if a in self.accounts else a for a in accounts]
        claims = {"sub": self.operator.public_key, "nats": {"accounts": keys, "type": "generic"}}
        return encode(claims, self.operator)
