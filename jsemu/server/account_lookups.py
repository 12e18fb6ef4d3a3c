"""Which accounts an operator-mode server has looked up: nats-server's registered accounts.

In operator mode nats-server registers an account only when something looks it up
(``LookupAccount``): a client logging in to it, a ``CONNZ`` for it (``$SYS.REQ.ACCOUNT.<key>.CONNZ``,
``/connz?acc=``), an account it imports from being registered (imports are resolved then,
and each exporter so registered resolves its own), and, with JetStream, the accounts with a
folder in the store when it starts. Until then the account's JWT may be in the resolver, but
the monitoring views do not show it: ``$SYS.REQ.ACCOUNT.<key>.INFO`` and ``/accountz?acc=``
answer ``Account <key> does not exist``, the per-account JSZ ``account "<key>" not found``, and
``/accountz`` does not list it (captured in ``tests/server/test_account_lookups.py``).

jsemu loads every JWT it has when it starts; this module only keeps the set of names looked
up so far (:attr:`Server.looked_up_accounts`) and answers :func:`is_looked_up` for those
views. With configured accounts (no operator) every account is registered at start, and in a
cluster the routes' interest makes every server look accounts up, so both answer True.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .operator_auth import OperatorAuth

if TYPE_CHECKING:
    from .server import Server

__all__ = ["is_looked_up", "look_up"]


def _operator(server: Server) -> OperatorAuth | None:
    auth = server.options.auth
    if not isinstance(auth, OperatorAuth) or server.cluster is not None or server.options.cluster_size > 1:
        return None
    return auth


def look_up(server: Server, name: str) -> None:
    """``name`` was looked up: registered (with the accounts it imports from) if the
    resolver has it."""
    auth = _operator(server)
    if auth is None:
        return
    seen = server.looked_up_accounts
    pending = [name]
    while pending:
        key = pending.pop()
        account = auth.accounts.get(key)
        if key in seen or account is None:
            continue
        seen.add(key)
        pending.extend(imp.account for imp, _ in account.imports)


def is_looked_up(server: Server, name: str) -> bool:
    """Whether ``name`` is a registered account (see the module's docstring)."""
    auth = _operator(server)
    if auth is None or name in server.looked_up_accounts or name in ("$G", server.options.system_account):
        return True
    store = server.options.store_dir
    if server.options.jetstream and store and os.path.isdir(os.path.join(store, "jetstream", name)):
        look_up(server, name)
        return name in server.looked_up_accounts
    return False
