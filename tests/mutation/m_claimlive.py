"""Planted bugs in account claim updates applied to a running server (issue 34, the
``claimlive`` part: ``server/claim_live.py`` and what it calls)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_LIVE = "jsemu/server/claim_live.py"
_T = "tests/server/test_operator_claim_live.py"
_CLIENTS = f"{_T}::test_claim_updates_reach_connected_clients"
_IMPORTS = f"{_T}::test_import_and_export_updates_as_nats_server"

MUTATIONS: list[Mutation] = [
    Mutation(
        "claimlive_conn_keeps_newest",
        "server",
        _LIVE,
        "        out.sort(key=lambda pair: pair[0].cid)",
        "        out.sort(key=lambda pair: -pair[0].cid)",
        (_CLIENTS,),
        "a lowered conn limit closes the oldest clients instead of the newest",
    ),
    Mutation(
        "claimlive_conn_off_by_one",
        "server",
        _LIVE,
        "            if 0 <= account.max_connections <= count:",
        "            if 0 <= account.max_connections < count:",
        (_CLIENTS,),
        "one client more than the conn limit is kept",
    ),
    Mutation(
        "claimlive_removed_key_kept",
        "server",
        _LIVE,
        "                if key_ not in account.signing_keys or account.signing_keys[key_]",
        "                if account.signing_keys.get(key_, old.signing_keys[key_])",
        (_CLIENTS,),
        "a user of a signing key the update removed stays connected",
    ),
    Mutation(
        "claimlive_rescoped_key_kept",
        "server",
        _LIVE,
        "account.signing_keys[key_] != old.signing_keys.get(key_)",
        "False",
        (_CLIENTS,),
        "a user of a scoped key whose template the update changed stays connected",
    ),
    Mutation(
        "claimlive_key_removal_says_why",
        "server",
        _LIVE,
        '                    conn.close_quietly("Authentication Failure")',
        '                    conn.close_with_error("Authorization Violation")',
        (_CLIENTS,),
        "a client whose signing key went gets an -ERR, where nats-server closes it without a word",
    ),
    Mutation(
        "claimlive_full_resolver_applies_expired",
        "server",
        "jsemu/server/account_resolver.py",
        "        if account.public_key != key or not in_time(",
        "        if account.public_key != key or in_time(",
        (_IMPORTS,),
        "an expired account JWT pushed to the full resolver replaces the account's claims",
    ),
    Mutation(
        "claimlive_expiry_not_armed",
        "server",
        _LIVE,
        "        self.expiry[key] = self.server.timers.at(",
        "        return\n        self.expiry[key] = self.server.timers.at(",
        (_CLIENTS,),
        "an account's exp ahead never closes its clients",
    ),
    Mutation(
        "claimlive_imports_not_rewired",
        "server",
        _LIVE,
        "        space.rewire_imports()",
        "        pass",
        (_IMPORTS,),
        "imports and exports changed by an update are not applied to the running server",
    ),
    Mutation(
        "claimlive_rewire_only_when_imports_change",
        "server",
        "jsemu/server/accounts.py",
        "        if wanted != self.wired:\n            unwire_imports(self.wiring)",
        "        if False:\n            unwire_imports(self.wiring)",
        (_IMPORTS,),
        "the import subscriptions are never replaced at run time",
    ),
    Mutation(
        "claimlive_jetstream_toggle_ignored",
        "server",
        _LIVE,
        "        if was != account.jetstream:\n            self.server.account_jetstream_changed(router)",
        "        if False:\n            self.server.account_jetstream_changed(router)",
        (_CLIENTS,),
        "an update that turns JetStream on or off leaves the account as it was",
    ),
    Mutation(
        "claimlive_jetstream_on_again_not_serving",
        "app",
        "jsemu/app.py",
        "        api.start()\n        js.resume()",
        "        api.start()",
        (_CLIENTS,),
        "JetStream turned on again answers its API but its streams take no publishes",
    ),
    Mutation(
        "claimlive_memory_update_expired_taken",
        "server",
        "jsemu/server/claim_updates.py",
        "        if not in_time(token.claims, self.server.clock.now_ns() // 1_000_000_000):",
        "        if False:",
        (_CLIENTS,),
        "the memory resolver takes an account JWT that has expired (nats-server: account validation failed)",
    ),
]
