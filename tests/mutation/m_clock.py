"""Planted bugs in the control plane's clock: it is the server's, not ``$G``'s JetStream's."""

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
