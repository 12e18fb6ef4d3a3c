"""Planted bugs of CONSUMER.RESET (``jetstream/consumers/reset.py``, ``Consumer.reset_to``)
and of the API endpoint list (``tools/api_coverage.py``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_API = "tests/jetstream/api/test_consumer_reset.py"
_RESET = "jsemu/jetstream/consumers/reset.py"
_CONSUMER = "jsemu/jetstream/consumers/consumer.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "reset_start_seq_inclusive",
        "jetstream",
        _RESET,
        "        if seq < cfg.opt_start_seq:\n",
        "        if seq <= cfg.opt_start_seq:\n",
        (f"{_API}::test_start_policies",),
        "a reset to opt_start_seq itself refused as below the start sequence",
    ),
    Mutation(
        "reset_empty_to_the_floor_itself",
        "jetstream",
        _RESET,
        "        return consumer.own_ack_floor[1] + 1\n",
        "        return max(consumer.own_ack_floor[1], 1)\n",
        (f"{_API}::test_effects_on_delivery_and_acks",),
        "an empty reset resumes at the ack floor, redelivering the last acked message",
    ),
    Mutation(
        "reset_error_without_reset_seq",
        "jetstream",
        _RESET,
        '        out["error"] = err.as_dict()\n        out["reset_seq"] = 0\n',
        '        out["error"] = err.as_dict()\n',
        (f"{_API}::test_request_forms_and_errors",),
        "an error reply leaves out reset_seq, which Go always marshals",
    ),
    Mutation(
        "reset_identity_needs_a_value",
        "jetstream",
        _RESET,
        "        identity = hdr and slice_header(STREAM_IDENTITY, hdr) is not None\n",
        "        identity = hdr and bool(slice_header(STREAM_IDENTITY, hdr))\n",
        (f"{_API}::test_stream_identity_header",),
        "an empty Nats-Stream-Identity header is taken as none (the server answers any)",
    ),
    Mutation(
        "reset_any_policy_allowed",
        "jetstream",
        _RESET,
        '    raise api_error(ApiErrors.JSConsumerInvalidResetErr, err="not allowed")\n',
        "    return seq\n",
        (f"{_API}::test_start_policies",),
        "a reset to a sequence allowed for deliver last / new / last_per_subject",
    ),
    Mutation(
        "reset_ignores_api_level",
        "jetstream",
        _RESET,
        "        if hdr and api_level_too_high(hdr, API_LEVEL):\n",
        "        if False:\n",
        (f"{_API}::test_request_forms_and_errors",),
        "Nats-Required-Api-Level not checked",
    ),
    Mutation(
        "reset_quotes_bytes_not_characters",
        "jetstream",
        "jsemu/protocol/gojson/decoder.py",
        '        raise GoJSONError(f"invalid character {quote_first_rune(rest)} after top-level value")\n',
        '        raise GoJSONError(f"invalid character {quote_first_rune(rest[:1])} after top-level value")\n',
        (f"{_API}::test_request_forms_and_errors",),
        "a UTF-8 character after the JSON value quoted as its first byte, not as itself",
    ),
    Mutation(
        "unmarshal_takes_a_second_value",
        "jetstream",
        "jsemu/protocol/gojson/decoder.py",
        '        raise GoJSONError(f"invalid character {quote_first_rune(rest)} after top-level value")\n',
        "        pass\n",
        ("tests/jetstream/api/test_unmarshal_bodies.py",),
        "json.Unmarshal's one-value rule dropped: UNPIN and RESET take the first of two values",
    ),
    Mutation(
        "reset_keeps_consumer_seq",
        "jetstream",
        _CONSUMER,
        "        self.next_stream_seq, self.next_consumer_seq = seq, 1\n",
        "        self.next_stream_seq = seq\n",
        (f"{_API}::test_effects_on_delivery_and_acks",),
        "consumer sequences go on after a reset instead of starting at 1 again",
    ),
    Mutation(
        "reset_keeps_redelivery_counts",
        "jetstream",
        _CONSUMER,
        "        self.pending, self.redelivery_counts, self.redelivery_queue = {}, {}, []\n",
        "        self.pending, self.redelivery_queue = {}, []\n",
        (f"{_API}::test_effects_on_delivery_and_acks",),
        "redelivery counts survive a reset (num_redelivered, the delivery count of the next fetch)",
    ),
    Mutation(
        "reset_not_saved",
        "jetstream",
        _CONSUMER,
        "        ``(0, seq - 1)``. The caller serves the waiting requests after its reply\n"
        '        (``signalNewMessages``: the server\'s delivery loop runs after the reply is out)."""\n'
        "        self.on_change()\n",
        "        ``(0, seq - 1)``. The caller serves the waiting requests after its reply\n"
        '        (``signalNewMessages``: the server\'s delivery loop runs after the reply is out)."""\n',
        ("tests/jetstream/persistence/test_consumer_reset_restart.py",),
        "a reset not marked for the consumer store: a restart brings back the state before it",
    ),
    Mutation(
        "reset_keeps_interest_messages",
        "jetstream",
        _CONSUMER,
        '        if self.stream.config.retention == "interest":\n            ack_below_floor(self.stream, self)\n',
        "",
        (f"{_API}::test_interest_stream_drops_what_lies_below_the_new_floor",),
        "an interest stream keeps what lies below a consumer's new ack floor",
    ),
    Mutation(
        "reset_waiting_not_woken",
        "jetstream",
        "jsemu/jetstream/consumers/consumer_set.py",
        "                out.send(reply, -1, body)\n            if consumer.waiting or consumer.push:\n"
        "                consumer.deliver_waiting()\n",
        "                out.send(reply, -1, body)\n",
        (f"{_API}::test_waiting_request_is_served_after_the_reply",),
        "a waiting pull request is not served from the new position until the next publish",
    ),
    Mutation(
        "reset_not_replicated",
        "jetstream",
        _CONSUMER,
        "        self._stopped_at_max_ack_pending = False\n        if self.replicas is not None:\n"
        "            self.replicas.record(self.snapshot())\n",
        "        self._stopped_at_max_ack_pending = False\n",
        ("tests/jetstream/cluster/test_consumer_reset_replicas.py",),
        "a reset stays on the leader: a new leader goes on from the state before it",
    ),
    Mutation(
        "api_list_misses_reset",
        "tools",
        "jsemu/tools/api_coverage.py",
        '    ("JSApiConsumerResetT", "CONSUMER.RESET.*.*", CONSUMER),\n',
        "",
        ("tests/tools/test_api_endpoint_list.py",),
        "the endpoint list leaves CONSUMER.RESET out again",
    ),
    Mutation(
        "api_list_misses_a_system_endpoint",
        "tools",
        "jsemu/tools/api_coverage.py",
        '    ("JSApiMetaRescue", "META.RESCUE", SYSTEM),\n',
        "",
        ("tests/tools/test_api_endpoint_list.py",),
        "a literal endpoint glued to the next string in the binary (META.RESCUEJetStream) left out",
    ),
]
