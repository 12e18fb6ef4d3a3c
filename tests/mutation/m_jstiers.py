"""Planted bugs in an account JWT's JetStream tiers and ``max_bytes_required`` (issue 34, the
``jstiers`` part)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_T = "tests/server/test_operator_js_tiers.py"
_INFO = f"{_T}::test_tiers_in_account_info_and_stream_limits"
_UPDATE = f"{_T}::test_claim_update_changes_tiers"
_FUZZ = "tests/server/test_operator_js_tiers_fuzz.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "jwt_tiers_ignored",
        "server",
        "jsemu/server/operator_auth.py",
        "        js = JetStreamLimits.tiered(named)",
        "        js = named.get('R1', js)",
        (_INFO,),
        "an account with limits per tier shows no tiers and lets any replica count in",
    ),
    Mutation(
        "jwt_max_bytes_required_ignored",
        "server",
        "jsemu/server/operator_auth.py",
        '        max_bytes_required=limits.get("max_bytes_required") is True,',
        "        max_bytes_required=False,",
        (_INFO,),
        "a stream without max_bytes is accepted although the JWT requires one",
    ),
    Mutation(
        "jwt_stream_bytes_zero_kept",
        "server",
        "jsemu/server/operator_auth.py",
        "        return value if value > 0 else -1",
        "        return value if value >= 0 else -1",
        (_INFO,),
        "a JWT's 0 stream-byte limit shows as 0, not -1 (Go's toUnlimited)",
    ),
    Mutation(
        "tier_missing_not_refused",
        "jetstream",
        "jsemu/jetstream/limits/counts.py",
        "        return api_error(ApiErrors.JSNoLimitsErr)\n    if limits.max_streams <= 0:",
        "        limits = js.limits\n    if limits.max_streams <= 0:",
        (_INFO, _FUZZ),
        "a stream whose replica count has no tier is not refused with 10120",
    ),
    Mutation(
        "tier_name_ignores_replicas",
        "jetstream",
        "jsemu/server/js_limits.py",
        '        name = f"R{max(1, replicas)}"',
        '        name = "R1"',
        (_INFO,),
        "every stream is held to the R1 tier",
    ),
    Mutation(
        "tiered_account_limits_shown",
        "jetstream",
        "jsemu/server/js_limits.py",
        "            return ZERO_LIMITS.to_json()",
        "            return {k: v for k, v in asdict(self).items() if k != 'tiers'}",
        (_INFO,),
        "the account's limits beside tiers show the R1 tier's instead of Go's zero values",
    ),
    Mutation(
        "tiers_of_streams_left_out",
        "jetstream",
        "jsemu/jetstream/api/streams.py",
        "        tier = out.setdefault(name, dict.fromkeys(_usage(js, []), 0))",
        "        tier = out.get(name, dict.fromkeys(_usage(js, []), 0))",
        (_UPDATE,),
        "a tier whose limits a claim update removed disappears from the info with its streams",
    ),
    Mutation(
        "unused_tiers_always_added",
        "jetstream",
        "jsemu/jetstream/api/streams.py",
        "    if len(limits) != len(out):",
        "    if True:",
        (_UPDATE,),
        "a tier with limits is shown although as many tiers hold bytes (Go's count check)",
    ),
    Mutation(
        "stream_count_after_config_checks",
        "jetstream",
        "jsemu/jetstream/service.py",
        "        over = stream_count_error(self, config.name, config.num_replicas)\n",
        "        over = None\n",
        (_FUZZ,),
        "a create past max_streams gets the config's error (10113, 10074) instead of 10027",
    ),
    Mutation(
        "raw_bytes_check_dropped",
        "jetstream",
        "jsemu/jetstream/service.py",
        "        if over is None and config.storage and not self.clustered:",
        "        if False:",
        (_FUZZ,),
        "an R3 stream whose max_bytes passes the account's storage gets 10074 instead of 10028",
    ),
    Mutation(
        "tier_missing_update_allowed",
        "jetstream",
        "jsemu/jetstream/limits/counts.py",
        "    if limits is None:  # an update too is refused without the stream's tier\n        return api_error(",
        "    if limits is None:  # an update too is refused without the stream's tier\n        return None or (",
        (_UPDATE,),
        "a stream whose tier a claim update removed can still be updated",
    ),
]
