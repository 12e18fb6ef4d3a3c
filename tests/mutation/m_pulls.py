"""Planted bugs of the pull-request checks (``pull_request.py``, ``unmarshal_request``), the
order of requests and deliveries, and the ``prioritized`` policy, with the tests that catch
them (``python -m tests.mutation <name>``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_RANDOM = "tests/jetstream/api/test_pull_requests_random.py"
_PRIORITIZED = "tests/jetstream/api/test_prioritized_config.py"
_PACING = "tests/jetstream/api/test_deliver_group_pacing.py::test_delivery_comes_with_its_puback[jsemu]"

MUTATIONS: list[Mutation] = [
    Mutation(
        "pull_request_syntax_offset",
        "protocol",
        "jsemu/protocol/gojson/decoder.py",
        "        raise GoJSONError(exc.message) from None\n",
        "        raise exc from None\n",
        (_RANDOM,),
        "a pull request's syntax error keeps the API decoder's ' at offset N' (json.Unmarshal has none)",
    ),
    Mutation(
        "pull_request_trailing_value_accepted",
        "protocol",
        "jsemu/protocol/gojson/decoder.py",
        "    if rest:\n",
        "    if rest and False:\n",
        (_RANDOM,),
        "text after the request's JSON value is ignored instead of 'invalid character ... after top-level value'",
    ),
    Mutation(
        "pull_request_negative_heartbeat",
        "jetstream",
        "jsemu/jetstream/consumers/pull_request.py",
        'heartbeat=max(values.get("idle_heartbeat") or 0, 0),',
        'heartbeat=values.get("idle_heartbeat") or 0,',
        (_RANDOM,),
        "a negative idle_heartbeat arms heartbeats (Go arms them only when > 0)",
    ),
    Mutation(
        "pull_requests_delivered_one_by_one",
        "jetstream",
        "jsemu/jetstream/consumers/consumer_set.py",
        "msg[hdr:] if hdr > 0 else msg, deliver_now=False)",
        "msg[hdr:] if hdr > 0 else msg, deliver_now=True)",
        (f"{_PRIORITIZED}::test_requests_of_one_read_are_queued_before_delivery",),
        "each request of a read is served before the next is read: priority 1 first, no 409",
    ),
    Mutation(
        "prioritized_arrival_order",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "        if prioritized:\n            PriorityGroups.place(self.waiting, wr)\n",
        "        if prioritized:\n            self.waiting.append(wr)\n",
        (_RANDOM, f"{_PRIORITIZED}::test_requests_of_one_read_are_queued_before_delivery"),
        "prioritized requests wait in arrival order: a later priority 0 is not served first",
    ),
    Mutation(
        "priority_policy_any_case",
        "jetstream",
        "jsemu/jetstream/consumers/config.py",
        '    if name in ("none", "overflow", "pinned_client", "prioritized"):\n        return name\n',
        '    if name.lower() in ("none", "overflow", "pinned_client", "prioritized"):\n        return name.lower()\n',
        (_PRIORITIZED,),
        "priority_policy accepted in any case (Go's UnmarshalJSON matches the exact text)",
    ),
    Mutation(
        "delivery_written_after_puback",
        "jetstream",
        "jsemu/jetstream/consumers/consumer_set.py",
        "            self.js.server.before_flush(self._wake)\n",
        "            self.js.server.loop.call_soon(self._wake)\n",
        (_PACING,),
        "a stored message's delivery goes out in a write after its PubAck's: read apart by the publisher",
    ),
    Mutation(
        "before_flush_skipped_in_a_read",
        "server",
        "jsemu/server/server.py",
        "        while self._before_flush:\n",
        "        while self._before_flush and not self._dirty:\n",
        (_PACING,),
        "work due before a flush waits for a flush with nothing else to write",
    ),
]
