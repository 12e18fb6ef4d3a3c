"""An account's new claims put in force for what already runs (operator mode).

nats-server's ``updateAccountClaimsWithRefresh`` runs for every account JWT that replaces one the
server has (a push to ``$SYS.REQ.ACCOUNT.<key>.CLAIMS.UPDATE`` with either resolver) or adds one
(the ``full`` resolver). What it does, as 2.15.1 does it on the wire:

* **Expiry** (``checkExpiration``): the account's timer is replaced. An ``exp`` ahead closes
  every client of the account with ``Account Authentication Expired`` on the server's clock,
  ``exp`` minus the current whole second from now; none clears it. Accounts loaded at start get
  their timer too. A JWT already expired (or not yet valid) never gets here: the memory
  resolver refuses it (``account validation failed``), the ``full`` one stores it and answers
  ``jwt updated`` but the account keeps the claims it had (:func:`in_time`).
* **Exports and imports**: every account's imports are verified again against every account's
  exports (an export removed or made private, an import added or removed, on either side), and
  the import subscriptions are replaced, so connected clients see or stop seeing the messages
  and requests at once (their own subscriptions stay).
* **JetStream**: limits present where there were none turn the account's JetStream on (streams
  kept in ``store_dir`` come back); none where there were some turn it off: its streams stop
  where they are (a publish hears no responders) and the API answers ``JetStream not enabled
  for account``. Changed limits apply at once.
* **Clients**, oldest first: beyond the account's ``conn`` limit each later one is closed with
  ``maximum account active connections exceeded``; the others get the new ``payload`` and
  ``subs`` limits (one holding as many subscriptions as allowed, or more, is closed with
  ``maximum subscriptions exceeded``; a larger PUB then ``Maximum Payload Violation``), a user
  without permissions of its own the new ``default_permissions``, a bearer user of an account
  that now sets ``disallow_bearer`` ``Authorization Violation``, and one the new ``revocations``
  name ``User Authentication Revoked``. Then, when the signing keys changed, a client whose user JWT a
  key signed that is gone, or whose scope changed, is closed without a word (Go's
  ``closeConnection(AuthenticationViolation)``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..protocol.texts import (
    ERR_ACCOUNT_AUTHENTICATION_EXPIRED,
    ERR_MAX_ACCOUNT_CONNECTIONS,
    ERR_MAX_SUBSCRIPTIONS,
    ERR_USER_AUTHENTICATION_REVOKED,
)
from .accounts import Account
from .jwt_session import put_limits
from .operator_auth import JwtAccount, JwtUser, OperatorAuth, jwt_permissions, wired_imports

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .server import Server
    from .timers import Cancellable

__all__ = ["ClaimLive", "in_time"]


def in_time(claims: dict[str, Any], now_s: int) -> bool:
    """An account JWT's ``exp`` and ``nbf`` hold at ``now_s`` (Go's ``verifyAccountClaims``: a
    claim expired or not yet valid is a blocking time check, so the account keeps its claims)."""
    exp, nbf = claims.get("exp"), claims.get("nbf")
    return not ((isinstance(exp, int) and 0 < exp < now_s) or (isinstance(nbf, int) and nbf > now_s))


class ClaimLive:
    """Applies account claims to a running server (see the module's docstring)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        #: The claims in force, by account key: what an update is compared with.
        self.known: dict[str, JwtAccount] = {}
        #: Each account's expiry timer.
        self.expiry: dict[str, Cancellable] = {}

    @property
    def _auth(self) -> OperatorAuth:
        auth = self.server.options.auth
        assert isinstance(auth, OperatorAuth)
        return auth

    def start(self) -> None:
        """The accounts loaded at start: their claims remembered, their expiry armed."""
        for key, account in self._auth.accounts.items():
            self.known[key] = account
            self._arm_expiry(key, account)

    def apply(self, key: str) -> None:
        """Account ``key``'s claims (now in ``auth.accounts``) replace what was in force."""
        account = self._auth.accounts[key]
        old = self.known.get(key)
        self.known[key] = account
        self._arm_expiry(key, account)
        self._rewire_imports()
        self._jetstream(key, account)
        clients = self._clients(key)
        defaults_changed = old is None or old.default_permissions != account.default_permissions
        count = 0
        for conn, user in clients:
            if 0 <= account.max_connections <= count:
                conn.close_with_error(ERR_MAX_ACCOUNT_CONNECTIONS)
                continue
            count += 1
            if put_limits(conn, user, account):
                conn.close_with_error(ERR_MAX_SUBSCRIPTIONS)
                continue
            if defaults_changed and user.default_permissions:
                conn.set_permissions(jwt_permissions(account.default_permissions))
            if user.bearer and account.disallow_bearer:
                conn.auth_violation()
                continue
            revoked = (account.revocations.get(user.name), account.revocations.get("*"))
            if any(at is not None and at >= user.issued_at for at in revoked):
                conn.close_with_error(ERR_USER_AUTHENTICATION_REVOKED)
        if old is not None and old.signing_keys != account.signing_keys:
            for conn, user in clients:
                key_ = user.signing_key
                if not key_:
                    continue
                if key_ not in account.signing_keys or account.signing_keys[key_] != old.signing_keys.get(key_):
                    conn.close_quietly("Authentication Failure")
        self.server.flush()

    def _clients(self, key: str) -> list[tuple[ClientConnection, JwtUser]]:
        """The account's connected clients, oldest first."""
        out = []
        for conn in self.server.connections.values():
            user = conn.user
            if isinstance(user, JwtUser) and user.account == key and not conn.closed:
                out.append((conn, user))
        out.sort(key=lambda pair: pair[0].cid)
        return out

    # --- expiry -------------------------------------------------------------------------

    def _arm_expiry(self, key: str, account: JwtAccount) -> None:
        timer = self.expiry.pop(key, None)
        if timer is not None:
            timer.cancel()
        now_ns = self.server.clock.now_ns()
        seconds = now_ns // 1_000_000_000  # Go: time.Now().Unix(), then exp minus that many seconds
        if account.expires <= 0 or account.expires <= seconds:
            return  # none, or already past: refused at login, the connected clients stay

        def expired() -> None:
            self.expiry.pop(key, None)
            for conn, _ in self._clients(key):
                conn.close_with_error(ERR_ACCOUNT_AUTHENTICATION_EXPIRED)
            self.server.flush()

        self.expiry[key] = self.server.timers.at(now_ns + (account.expires - seconds) * 1_000_000_000, expired)

    # --- exports and imports -----------------------------------------------------------

    def _rewire_imports(self) -> None:
        space = self.server.account_space
        accounts = {k: a for k, a in self._auth.accounts.items() if k in space.by_name}
        imports = wired_imports(accounts, time.time())
        for key, jwt_account in accounts.items():
            router = space.by_name[key]
            if isinstance(router, Account):
                exports = tuple(export for export, _ in jwt_account.exports)
                router.config = replace(router.config, exports=exports, imports=imports.get(key, ()))
        space.rewire_imports()

    # --- JetStream ----------------------------------------------------------------------

    def _jetstream(self, key: str, account: JwtAccount) -> None:
        router = self.server.account_space.by_name.get(key)
        if not isinstance(router, Account) or key == self.server.options.system_account:
            return
        was = router.config.jetstream
        router.config = replace(router.config, jetstream=account.jetstream, limits=account.js_limits)
        if was != account.jetstream:
            self.server.account_jetstream_changed(router)
        elif account.jetstream:
            self.server.account_limits_changed(key, account.js_limits)
