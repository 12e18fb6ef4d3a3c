"""Planted bugs of which subscriptions bind a push consumer
(``jetstream/consumers/push_interest.py``, the deliver subject's update in ``Consumer``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_T = "tests/jetstream/consumers/test_push_interest.py"
_CASE = f"{_T}::test_push_interest_as_on_nats_server"
_UPDATE = f"{_T}::test_updated_consumer_interest_as_on_nats_server"
_PI = "jsemu/jetstream/consumers/push_interest.py"
_CONSUMER = "jsemu/jetstream/consumers/consumer.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "push_interest_wildcard_registers",
        "jetstream",
        _PI,
        "        return any(s.subject == subject for s in result.psubs)\n",
        "        return bool(result.psubs)\n",
        (f"{_CASE}[wildcards alone]",),
        "a wildcard subscription made before the consumer binds it",
    ),
    Mutation(
        "push_interest_wildcard_keeps_bound",
        "jetstream",
        _PI,
        "        return [s for s in result.psubs if s.subject == subject]\n",
        "        return list(result.psubs)\n",
        (f"{_CASE}[a wildcard left behind]",),
        "a wildcard subscriber keeps the consumer bound once the exact one leaves",
    ),
    Mutation(
        "push_interest_any_group_member",
        "jetstream",
        _PI,
        "members[0].queue == queue and members[0].subject == subject for members",
        "members[0].queue == queue and any(m.subject == subject for m in members) for members",
        (f"{_CASE}[group member on dlv.> first]",),
        "any exact member binds at registration, not only the group's first in match order",
    ),
    Mutation(
        "push_interest_not_new_binds",
        "jetstream",
        _PI,
        "            if not self.bound and len(exact) == 1:\n",
        "            if not self.bound:\n",
        (f"{_CASE}[group member on dlv.> first]",),
        "a second exact member binds a consumer the first did not (Go notifies the first only)",
    ),
    Mutation(
        "push_interest_group_update_registers",
        "jetstream",
        _CONSUMER,
        "        if config.deliver_subject != old.deliver_subject and self.interest is not None:\n",
        "        if (\n            config.deliver_subject != old.deliver_subject or config.deliver_group != old.deliver_group\n"
        "        ) and self.interest is not None:\n",
        (f"{_UPDATE}[no group, then G]",),
        "a new deliver_group alone moves the interest to that group",
    ),
    Mutation(
        "push_interest_moved_with_new_group",
        "jetstream",
        _CONSUMER,
        "            self.interest = DeliveryInterest(self.js.account.sublist, self._deliver_to, self.interest.queue)\n",
        "            self.interest = DeliveryInterest(\n"
        "                self.js.account.sublist, self._deliver_to, config.deliver_group.encode() or None\n"
        "            )\n",
        (f"{_UPDATE}[new subject and group while unbound]",),
        "a new deliver subject is followed with the new group (Go registers it with the old one)",
    ),
    Mutation(
        "push_heartbeat_while_unbound",
        "jetstream",
        _CONSUMER,
        "        if self.active:\n            self._send_heartbeat(self._deliver_to)\n",
        "        if True:\n            self._send_heartbeat(self._deliver_to)\n",
        (f"{_T}::test_heartbeats_only_while_bound_as_on_nats_server",),
        "idle heartbeats go to a deliver subject that does not bind the consumer",
    ),
]
