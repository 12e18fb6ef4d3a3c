"""Planted bugs in the NATS-based account resolver across a cluster: lookups of unknown
accounts, the PACK sync on ``interval``, expiry from the directory (issue 34, ``rescluster``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_PEERS = "jsemu/server/resolver_peers.py"
_T = "tests/server/test_operator_resolver_cluster.py"
_LOOKUPS = f"{_T}::test_updates_and_lookups_cross_the_cluster"
_PACK = f"{_T}::test_late_server_catches_up_by_pack"
_TTL = f"{_T}::test_cache_forgets_after_ttl"
_STANDALONE = f"{_T}::test_standalone_unknown_account_waits_for_timeout"

MUTATIONS: list[Mutation] = [
    Mutation(
        "rescluster_own_requests_echoed",
        "server",
        "jsemu/server/account_resolver.py",
        "_Responder(router, handler, False, peers)",
        "_Responder(router, handler, False)",
        (_LOOKUPS,),
        "the server answers its own lookup (an empty answer counted) and its own PACK",
    ),
    Mutation(
        "rescluster_first_empty_answer_ends_lookup",
        "server",
        _PEERS,
        "        if not body and fetch.expected > 0:",
        "        if False:",
        (_LOOKUPS,),
        "one server's 'none' refuses the user before the others (or the timeout) are heard",
    ),
    Mutation(
        "rescluster_lookup_answer_not_stored",
        "server",
        _PEERS,
        "            if subject_key == fetch.key:\n                self._store(fetch.key, text)",
        "            pass",
        (_LOOKUPS,),
        "a JWT another server sent for a waiting user is dropped: the user is refused",
    ),
    Mutation(
        "rescluster_no_pack_on_interval",
        "server",
        _PEERS,
        "            self._every(self.store.settings.interval_ns, self._send_pack)",
        "            pass",
        (_PACK,),
        "a full resolver that started late never catches up",
    ),
    Mutation(
        "rescluster_no_ttl_eviction",
        "server",
        "jsemu/server/resolver_dir.py",
        "if deadline <= now]",
        "if deadline < 0]",
        (_TTL,),
        "the cache keeps JWTs past their ttl",
    ),
    Mutation(
        "rescluster_auth_timer_runs_during_lookup",
        "server",
        "jsemu/server/connection.py",
        "        self._cancel_auth_timer()  # as nats-server, which clears it before authenticating\n",
        "",
        (_STANDALONE,),
        "a lookup longer than the authentication timeout ends in 'Authentication Timeout'",
    ),
]
