"""Planted bugs in small fixes made while merging: the control plane's clock is the server's, not
``$G``'s JetStream's; int32 options refused where they are read."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "clock_timers_of_jetstream_only",
        "control",
        "jsemu/control/plane.py",
        "        self.server.timers.run_due()\n",
        "        self.js.timers.run_due()\n",
        ("tests/testing/test_plugin_operator.py::test_the_clock_controls_an_operator_server",),
        "a clock step runs only the global account's JetStream timers (an operator server has none)",
    ),
]
MUTATIONS += [
    Mutation(
        "config_int32_unchecked",
        "config",
        "jsemu/config/server_config.py",
        "        if number > (1 << 31) - 1:\n",
        "        if False:\n",
        ("tests/config/test_config_lexer.py::test_a_generated_file_reads_as_nats_server_reads_it",),
        "max_payload over int32 refused by the max_pending check, not where it is read",
    ),
]
MUTATIONS += [
    Mutation(
        "jwt_cidr_list_takes_an_object",
        "protocol",
        "jsemu/protocol/jwt/go_claims.py",
        '    if _json_kind(value) == "array" and all(_json_kind(v) == "string" for v in value):\n',
        '    if isinstance(value, list) and all(_json_kind(v) == "string" for v in value):\n',
        ("tests/server/test_operator_fuzz.py::test_generated_user_claims",),
        "a user JWT's src given as an object passes as an empty CIDR list (Go refuses the login)",
    ),
]
