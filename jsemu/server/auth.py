"""Who may connect: nats-server's client authentication (``auth.go``) for the forms jsemu has.

One token (``--auth``, ``authorization { token }``), one user and password (``--user/--pass``,
``authorization { user, password }``) or a list of users (``authorization { users: [...] }``,
each with a name and password or an ``nkey``), with ``no_auth_user`` for clients that send no
credentials. An nkey user proves itself by signing the nonce of the connection's INFO
(``server/nkeys.py``). Secrets that look like bcrypt hashes
(``$2a$``, ``$2b$``, ``$2x$``, ``$2y$`` and a cost) are checked with bcrypt, the others compared in
constant time, as nats-server's ``comparePasswords`` does. The connection asks
:meth:`Auth.authenticate` once per CONNECT; a server without :class:`Auth` pays nothing.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass, field
from typing import Any

from .auth_callout_settings import CalloutSettings
from .nkeys import verify_signature
from .permissions import Permissions
from .routing import GLOBAL_ACCOUNT

__all__ = ["DEFAULT_AUTH_TIMEOUT", "Auth", "User", "is_bcrypt"]

#: nats-server's AUTH_TIMEOUT (seconds) for a client to send its CONNECT.
DEFAULT_AUTH_TIMEOUT = 2.0

_BCRYPT = re.compile(r"^\$2[abxy]\$\d{2}\$.*")


def is_bcrypt(secret: str) -> bool:
    return _BCRYPT.match(secret) is not None


@dataclass(frozen=True)
class User:
    """A configured user (the one ``--user`` user too)."""

    name: str
    password: str = ""
    #: ``None``: everything allowed.
    permissions: Permissions | None = None
    #: The account the user logs in to (``accounts { A: { users: [...] } }``).
    account: str = GLOBAL_ACCOUNT


@dataclass
class Auth:
    """The server's authentication settings; at least one of token, user or users is set."""

    token: str = ""
    user: User | None = None
    users: dict[str, User] = field(default_factory=dict)
    #: nkey users by public key (their ``name`` is the key, as nats-server reports them).
    nkeys: dict[str, User] = field(default_factory=dict)
    no_auth_user: str = ""
    #: Seconds to send CONNECT; ``None``: nats-server's default (2 s, or the TLS timeout + 1 s).
    timeout: float | None = None
    #: ``auth_callout``: logins decided by an external service (``server/auth_callout.py``).
    callout: CalloutSettings | None = None
    #: (hash, password) pairs bcrypt has accepted: bcrypt costs ~50 ms a check, and a
    #: test suite reconnects often. Only accepted pairs are kept.
    _verified: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def default_user(self) -> User | None:
        """The ``no_auth_user``, for a client that sends no credentials (or no CONNECT first)."""
        if not self.no_auth_user:
            return None
        return self.nkeys.get(self.no_auth_user) or self.users.get(self.no_auth_user)

    @property
    def wants_nonce(self) -> bool:
        """Whether the INFO carries a nonce for the client to sign (nkey or JWT users)."""
        return bool(self.nkeys)

    def authenticate(
        self, connect: dict[str, Any], nonce: str = "", client_ip: str = "", kind: str = "STANDARD", now_ns: int = 0
    ) -> User | None:
        """The user a CONNECT's options log in as, or ``None`` (``Authorization Violation``).
        Follows ``processClientOrLeafAuthentication``: an nkey, if the client names one and
        nkeys are configured, decides alone; the ``no_auth_user`` needs no signature. The
        client's address, kind and the server's time matter in operator mode only
        (``server/operator_auth.py``)."""
        name = connect.get("user") or ""
        password = connect.get("pass") or ""
        token = connect.get("auth_token") or ""
        nkey = connect.get("nkey") or ""
        anonymous = not name and not password and not token and not nkey
        if self.nkeys:
            if anonymous and self.no_auth_user in self.nkeys:
                nkey = self.no_auth_user
            if nkey:
                user = self.nkeys.get(nkey)
                if user is None:
                    return None
                if nkey != self.no_auth_user and not verify_signature(nkey, nonce, connect.get("sig") or ""):
                    return None
                return user
        if self.users:
            if anonymous:
                return self.users.get(self.no_auth_user) if self.no_auth_user else None
            user = self.users.get(name) if name else None
            if user is None or not self._matches(user.password, password):
                return None
            return user
        if self.token:
            return User("") if self._matches(self.token, token) else None
        if self.user is not None:
            if name != self.user.name or not self._matches(self.user.password, password):
                return None
            return self.user
        return None

    def _matches(self, secret: str, given: str) -> bool:
        """nats-server's ``comparePasswords``: bcrypt for hashes, constant time for the rest."""
        if is_bcrypt(secret):
            if (secret, given) in self._verified:
                return True
            import bcrypt  # only servers with hashed secrets pay for the import

            try:
                ok = bcrypt.checkpw(given.encode(), secret.encode())
            except ValueError:  # a malformed hash matches nothing
                return False
            if ok and len(self._verified) < 1024:
                self._verified.add((secret, given))
            return ok
        return hmac.compare_digest(secret.encode(), given.encode())
