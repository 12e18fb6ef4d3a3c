"""An expired account looked up again at the next login (operator mode).

Once an account JWT's ``exp`` has passed, nats-server has closed the account's clients
(``Account Authentication Expired``) and marks it expired. Its ``lookupAccount`` at the next login
finds the account expired and, having a resolver, fetches the account's JWT again
(``updateAccount`` -> ``updateAccountWithClaimJWT``); what it finds depends on the resolver
(captured on 2.15.1):

* ``MEMORY``: the JWT preloaded for it. A claim update is applied to the account but never stored
  in the memory resolver (``accountClaimUpdate`` does not ``Store``), so an account that an update
  made expire comes back with its preloaded claims at the next login, unless those expired too.
* ``full`` and ``cache``: the JWT in the directory, read from its file at that moment (one written
  there by hand counts; pushing it is not needed); when the directory has none (its expiry
  removed it), the cluster is asked, as for an account the server does not have.

A JWT found that verifies and holds now replaces the account's claims, as a claim update does
(``server/claim_live.py``), and the login goes on with them; otherwise the login is refused
(``Authorization Violation``). Not modelled: nats-server skips the fetch, and refuses the login,
when the account was updated less than a second before (``ErrAccountResolverUpdateTooSoon``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .operator_auth import JwtAccount, OperatorAuth

if TYPE_CHECKING:
    from .server import Server

__all__ = ["fetch_again", "has_expired"]


def has_expired(account: JwtAccount, now_s: int) -> bool:
    """Whether the account's JWT ``exp`` has come at ``now_s`` (Unix seconds; Go's
    ``checkExpiration``: ``exp <= now``)."""
    return 0 < account.expires <= now_s


def fetch_again(server: Server, key: str) -> bool:
    """A login's account ``key``, held and expired, fetched again from the resolver and put in
    force when it holds now (see the module's docstring). True when the directory has no JWT for
    it: the caller asks the cluster."""
    auth = server.options.auth
    if not isinstance(auth, OperatorAuth):
        return False
    account = auth.accounts.get(key)
    if account is None or not has_expired(account, server.clock.now_ns() // 1_000_000_000):
        return False
    store = auth.resolver_store
    if store is None:
        text = auth.preloaded.get(key)
        if text is not None:
            server.claim_updates.take(key, text)
        return False
    text = store.load(key)
    if text is None:
        return True
    server.account_resolver.take(key, text)
    return False
