"""Planted bugs in small wire details outside operator mode (``leads``): the order one
connection gets a run's messages in, monitoring paths, PONG before a JetStream ack, RELOAD."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "outbound_plans_a_connection_twice",
        "server",
        "jsemu/server/outbound.py",
        "sub.max or sub.closed or conn in conns:",
        "sub.max or sub.closed:",
        (
            "tests/server/test_delivery_order.py::test_two_subscriptions_interleave",
            "tests/server/test_outbound_plans.py",
        ),
        "a connection with two matching subscriptions gets a run as a block per subscription",
    ),
]
