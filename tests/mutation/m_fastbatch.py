"""Planted bugs in fast batch publish (``jsemu/jetstream/streams/fast_batch.py``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_FILE = "jsemu/jetstream/streams/fast_batch.py"
_DIFF = "tests/jetstream/api/test_fast_batch.py"
_MODEL = "tests/jetstream/streams/test_fast_batch_model.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "fast_batch_no_backward_gap_report",
        "jetstream",
        _FILE,
        "        if b.lseq != req.seq:\n            self._gap(reply, b.lseq, req.seq)\n",
        "        if b.lseq != req.seq:\n            if req.seq > b.lseq:\n                self._gap(reply, b.lseq, req.seq)\n",
        (f"{_DIFF}::test_gaps",),
        "a repeated sequence is not reported as a gap (newer sources; 2.15.1 reports it)",
    ),
    Mutation(
        "fast_batch_no_ramp_up",
        "jetstream",
        _FILE,
        "        if b.ack < target:\n            b.ack = min(b.ack * 2, target)\n",
        "        if b.ack < target:\n            b.ack = target\n",
        (f"{_DIFF}::test_flow_acks_and_their_pace",),
        "a batch that starts at one ack per message jumps to the target pace instead of doubling",
    ),
    Mutation(
        "fast_batch_ping_opens_a_batch",
        "jetstream",
        _FILE,
        "            if req.seq != 1 or req.ping:",
        "            if req.seq != 1:",
        (f"{_DIFF}::test_pings",),
        "a ping for an unknown batch at sequence 1 opens it (HEAD's sources) instead of 10208",
    ),
    Mutation(
        "fast_batch_duplicate_reported_as_error",
        "jetstream",
        _FILE,
        "        duplicate = err.err_code == _DUPLICATE\n",
        "        duplicate = False\n",
        (f"{_DIFF}::test_message_ids",),
        "a duplicate Nats-Msg-Id in a batch gets an err frame and ends it instead of being skipped",
    ),
    Mutation(
        "fast_batch_rejected_message_not_pending",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        "        if answer is not None and self._acks:\n            self.js.send_reply(reply, answer)\n        return False\n",
        "        if answer is not None and self._acks:\n            self.js.send_reply(reply, answer)\n        return True\n",
        (f"{_DIFF}::test_expected_last_msg_id_leaves_the_message_pending",),
        "a message refused after its checks counts as stored: acks and the PubAck come too early",
    ),
    Mutation(
        "fast_batch_timer_not_restarted",
        "jetstream",
        _FILE,
        "        if not b.commit:\n            self._arm(req.id, b)  # each message restarts the batch's timeout\n",
        "        if not b.commit and b.timer is None:\n            self._arm(req.id, b)  # each message restarts the batch's timeout\n",
        (f"{_MODEL}::test_a_batch_times_out_on_the_server_clock_without_an_advisory",),
        "the batch's timeout runs from its first message, not its last",
    ),
    Mutation(
        "fast_batch_plain_lane_ignores_the_reply",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        "            and (replies.count(None) == n or not any(r is not None and r.endswith(FAST_SUFFIX) for r in replies))\n",
        "",
        (f"{_MODEL}::test_a_run_on_the_connection_fast_lane_is_a_batch",),
        "a run of header-less fast batch publishes on the connection fast lane is stored as plain publishes",
    ),
    Mutation(
        "fast_batch_refusal_reads_the_batch_gap_mode",
        "jetstream",
        "jsemu/jetstream/streams/fast_batch.py",
        "        if req.gap_ok and not req.commit:\n",
        "        if b.gap_ok and not req.commit:\n",
        ("tests/jetstream/api/test_fast_batch.py::test_a_refusal_follows_the_messages_own_gap_mode",),
        "a refused message in a batch opened with gap mode ok lets the batch go on though the message says fail",
    ),
]
