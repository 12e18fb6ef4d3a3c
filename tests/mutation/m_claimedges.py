"""Planted bugs in the operator-mode claim edges (issue 34, the ``claimedges`` part): an
exporter's update re-checking imports already wired, an expired account looked up again at login,
auth callout users issued by a scoped signing key."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_REV = "tests/server/test_operator_export_revisions.py"
_REWIRED = f"{_REV}::test_exporter_update_rechecks_wired_imports"
_EXPIRED = "tests/server/test_operator_expired_lookup.py"
_SCOPED = "tests/server/test_auth_callout_scoped.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "claimedges_rewire_only_own_imports",
        "server",
        "jsemu/server/claim_live.py",
        "        self._rewire_imports()\n",
        "        if old is None or old.imports != account.imports:\n            self._rewire_imports()\n",
        (_REWIRED,),
        "an exporter's update leaves the imports other accounts wired from it as they were",
    ),
    Mutation(
        "claimedges_position_services_only",
        "server",
        "jsemu/server/operator_auth.py",
        "            if positioned is False:",
        '            if positioned is False and imp.kind == "service":',
        (_REWIRED,),
        "a stream import its export's account token position no longer lets in keeps flowing",
    ),
    Mutation(
        "claimedges_memory_resolver_stores_updates",
        "server",
        "jsemu/server/claim_updates.py",
        "        auth.accounts[key] = account\n        self._apply(key)\n",
        "        auth.accounts[key] = account\n        auth.preloaded[key] = text\n        self._apply(key)\n",
        (f"{_EXPIRED}::test_expired_account_looked_up_again[]",),
        "the memory resolver keeps what a claim update pushed: an account expired by an update stays expired",
    ),
    Mutation(
        "claimedges_expired_not_fetched_again",
        "server",
        "jsemu/server/account_resolver.py",
        "            return key if fetch_again(self.server, key) and self.peers is not None else None",
        "            return None",
        (_EXPIRED,),
        "an expired account is not fetched again at login: a new JWT in the directory does not let its users in",
    ),
    Mutation(
        "claimedges_expired_fetch_skips_directory",
        "server",
        "jsemu/server/expired_accounts.py",
        "    text = store.load(key)\n",
        "    text = None if store.has(key) else store.load(key)\n",
        (f"{_EXPIRED}::test_expired_account_looked_up_again[full]",),
        "an expired account is looked up in the cluster only, never in its own directory",
    ),
    Mutation(
        "claimedges_callout_scope_template_ignored",
        "server",
        "jsemu/server/auth_callout.py",
        "            nats = scoped\n",
        "            pass\n",
        (_SCOPED,),
        "a callout user of a scoped signing key gets no permissions instead of the scope's template",
    ),
    Mutation(
        "claimedges_callout_scope_limits_applied",
        "server",
        "jsemu/server/auth_callout.py",
        "            account_name=target.name,\n",
        '            account_name=target.name,\n            max_subs=nats["subs"] if isinstance(nats.get("subs"), int) else -1,\n',
        (_SCOPED,),
        "a callout user gets the scope template's subs limit (nats-server makes it an nkey user: none)",
    ),
    Mutation(
        "claimedges_callout_user_forgets_signing_key",
        "server",
        "jsemu/server/auth_callout.py",
        '            signing_key=str(issuer) if issuer != target.public_key else "",',
        '            signing_key="",',
        (f"{_SCOPED}::test_signing_key_changes_close_callout_users",),
        "a callout user stays connected when a claim update removes (or rescopes) the key that issued it",
    ),
]
