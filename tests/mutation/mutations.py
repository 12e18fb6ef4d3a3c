"""Small, plausible bugs across the layers, each with the tests that must catch it.

A mutation is an exact snippet of one file (it must occur exactly once, so code that moved
shows up as a stale entry rather than a silent pass), its replacement, and the tests to run.
``tests/test_mutation_anchors.py`` checks every anchor on each run of the normal suite;
``python -m tests.mutation`` plants them one by one in a scratch copy (see ``__main__.py``).
When a refactor moves an anchor, re-target the entry at the new code: keep the bug, not the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mutation:
    name: str
    layer: str
    file: str
    original: str
    replacement: str
    #: pytest arguments (files or node ids) whose run must fail with the mutation planted.
    tests: tuple[str, ...]
    why: str = ""


def anchor_count(root: Path, m: Mutation) -> int:
    """How often the mutation's anchor occurs in its file under ``root`` (0 if the file is gone)."""
    path = root / m.file
    return path.read_text().count(m.original) if path.exists() else 0


MUTATIONS: list[Mutation] = [
    # --- the first six: a reply twice, a status, the fast lane ------------------------------
    Mutation(
        "api_reply_twice",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        "        if reply:\n            js.send_reply(reply, body)\n",
        "        if reply:\n            js.send_reply(reply, body)\n            js.send_reply(reply, body)\n",
        ("tests/jetstream/api/test_stream_info.py",),
        "every $JS.API reply sent twice: the pair harness must see the extra frame",
    ),
    Mutation(
        "api_reply_twice_conformance",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        "        if reply:\n            js.send_reply(reply, body)\n",
        "        if reply:\n            js.send_reply(reply, body)\n            js.send_reply(reply, body)\n",
        ("tests/conformance/test_conformance.py::test_api_jsemu",),
        "the same, seen by the conformance runner's stream-API part",
    ),
    Mutation(
        "api_reply_twice_domain",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        "        if reply:\n            js.send_reply(reply, body)\n",
        "        if reply:\n            js.send_reply(reply, body)\n            js.send_reply(reply, body)\n",
        ("tests/clients/test_domain.py::test_stream_api_domain",),
        "the same, seen by the JetStream-domain harness",
    ),
    Mutation(
        "fast_lane_dedup_skipped",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        "        for k in range(n):\n            self.publish(subjects[k], replies[k], hdrs[k] if hdrs is not None else -1, msgs[k])\n",
        "        dedup, self.dedup = self.dedup, DedupWindow(0, self.js.clock)\n"
        "        try:\n"
        "            for k in range(n):\n"
        "                self.publish(subjects[k], replies[k], hdrs[k] if hdrs is not None else -1, msgs[k])\n"
        "        finally:\n"
        "            self.dedup = dedup\n",
        ("tests/pipeline/test_pipeline.py::test_write_then_read_round_trips_and_msg_ids_dedupe",),
        "fast-lane messages with headers stored without the Nats-Msg-Id lookup",
    ),
    Mutation(
        "fast_batch_num_pending",
        "jetstream",
        "jsemu/jetstream/directget/responder.py",
        "pre = self._batch_prefix(mseq, subject, hdr, data, ts)\n                    pending = _PENDING % (np, lseq)",
        "pre = self._batch_prefix(mseq, subject, hdr, data, ts)\n                    pending = _PENDING % (np + 1, lseq)",
        ("tests/conformance/test_random_diff.py",),
        "Nats-Num-Pending off by one on the fast batch path only",
    ),
    Mutation(
        "purge_ex_keep_off_by_one",
        "store",
        "jsemu/store/stream_store.py",
        "            maxp = total - keep\n",
        "            maxp = total - keep + 1\n",
        ("tests/store/test_purge_keep.py", "tests/store/test_store_stateful.py::TestStoreDefault"),
        "purge with keep removes one message too many (default thresholds)",
    ),
    Mutation(
        "queue_group_first_member",
        "server",
        "jsemu/server/routing.py",
        "start = self.rng.randrange(n) if n > 1 else 0",
        "start = 0",
        (
            "tests/clients/test_nats_py.py::test_queue_group_spreads_and_delivers_once",
            "tests/jetstream/cluster/test_peers.py::test_r3_stream_has_three_responders_and_the_cluster_shape",
        ),
        "a queue group always picks its first member",
    ),
    Mutation(
        "multi_last_limit_1023",
        "jetstream",
        "jsemu/jetstream/directget/responder.py",
        "MAX_MULTI_RESULTS = 1024  # maxAllowedResponses",
        "MAX_MULTI_RESULTS = 1023  # maxAllowedResponses",
        ("tests/conformance/test_random_diff.py",),
        "multi_last answers 1024 subjects with 'too many results'",
    ),
    # --- outbound reply path (Server.reply*) ------------------------------------------------
    Mutation(
        "reply_header_length_short",
        "server",
        "jsemu/protocol/encoder.py",
        'return b"%b%d %d\\r\\n%b\\r\\n" % (hmsg, hdr, len(msg), msg)',
        'return b"%b%d %d\\r\\n%b\\r\\n" % (hmsg, hdr - 2, len(msg), msg)',
        ("tests/jetstream/api/test_mirror.py", "tests/jetstream/api/test_stream_update.py"),
        "an HMSG reply whose header length leaves the last CRLF in the payload (same bytes joined)",
    ),
    Mutation(
        "reply_many_one_subject",
        "server",
        "jsemu/jetstream/streams/stream.py",
        "            while j < n and replies[j] == reply:\n",
        "            while j < n:\n",
        ("tests/server/test_fast_lane.py",),
        "pipelined acks to different inboxes all go to the first one",
    ),
    Mutation(
        "reply_tails_ignore_no_headers",
        "server",
        "jsemu/server/outbound.py",
        "                if not conn.headers and not conn.closed:\n                    break\n",
        "                pass\n",
        ("tests/server/test_fast_lane.py",),
        "Direct Get HMSGs sent to a client that did not ask for headers",
    ),
    Mutation(
        "reply_plan_ignores_unsub_max",
        "server",
        "jsemu/server/outbound.py",
        "if type(conn) is not ClientConnection or sub.max or sub.closed:",
        "if type(conn) is not ClientConnection or sub.closed:",
        ("tests/server/test_fast_lane.py",),
        "replies to an inbox with UNSUB <max> bypass the auto-unsubscribe count",
    ),
    Mutation(
        "direct_get_tail_header_length",
        "jetstream",
        "jsemu/protocol/encoder.py",
        'return b"%d %d\\r\\n%b%b\\r\\n" % (len(block), len(block) + len(data), block, data)',
        'return b"%d %d\\r\\n%b%b\\r\\n" % (len(block) - 2, len(block) + len(data), block, data)',
        (
            "tests/jetstream/api/test_stream_update.py",
            "tests/jetstream/api/test_mirror.py",
            "tests/jetstream/api/test_sources.py",
        ),
        "single Direct Get replies (fast path) cut their header block 2 bytes short: same bytes joined",
    ),
    # --- the connection's fast lane ----------------------------------------------------------
    Mutation(
        "fast_lane_reserved_reply",
        "server",
        "jsemu/server/connection.py",
        "if batch and (reply is None or reply == ok_reply or not _is_reserved_reply(reply)):",
        "if batch:",
        ("tests/server/test_fast_lane.py",),
        "a reserved reply subject is accepted on the fast lane",
    ),
    Mutation(
        "fast_lane_for_verbose",
        "server",
        "jsemu/server/connection.py",
        "return not self.verbose and not self.pedantic and self.perms is None and self.account.domain_api is None",
        "return not self.pedantic and self.perms is None and self.account.domain_api is None",
        ("tests/server/test_fast_lane.py", "tests/protocol/test_wire.py"),
        "verbose connections take the fast lane and get no +OK for stream publishes",
    ),
    # --- write-ahead log ---------------------------------------------------------------------
    Mutation(
        "wal_torn_tail_kept",
        "store",
        "jsemu/store/wal.py",
        "        os.truncate(path, good)\n",
        "        pass\n",
        ("tests/jetstream/persistence/test_persistence.py",),
        "a torn last record is left in the log, so later records follow garbage",
    ),
    Mutation(
        "wal_crc_ignored",
        "store",
        "jsemu/store/wal.py",
        "if crc32(view[begin:end]) != crc:",
        "if False:",
        ("tests/jetstream/persistence/test_persistence.py", "tests/store/test_wal_runs.py"),
        "a corrupted record is replayed as if whole",
    ),
    Mutation(
        "wal_no_compaction",
        "store",
        "jsemu/store/compaction.py",
        "            self.compact()\n",
        "            pass\n",
        ("tests/jetstream/persistence/test_restart_recovery.py",),
        "the log grows with the history, not the live data",
    ),
    Mutation(
        "dedup_not_rebuilt",
        "jetstream",
        "jsemu/jetstream/persistence/dedup_rebuild.py",
        "last_id = stream.dedup.rebuild(stream.store)",
        "last_id = None",
        ("tests/jetstream/persistence/test_restart_recovery.py",),
        "a retry across a restart is stored again",
    ),
    Mutation(
        "max_subscriptions_unchecked",
        "server",
        "jsemu/server/connection.py",
        "if limit > 0 and len(self.subs) >= limit:",
        "if False:",
        ("tests/server/test_server_limits.py",),
        "a subscription past max_subscriptions is accepted",
    ),
    # --- clocks and time ---------------------------------------------------------------------
    Mutation(
        "controlled_clock_advance_not_applied",
        "store",
        "jsemu/store/clock.py",
        "            self._offset += ns\n            self._retarget()\n",
        "            self._offset += ns\n",
        ("tests/jetstream/test_clock.py", "tests/control/test_control_plane.py"),
        "advancing a running clock from plain wall time does nothing",
    ),
    Mutation(
        "controlled_clock_resume_jumps_back",
        "store",
        "jsemu/store/clock.py",
        "self._offset = self._frozen_at - time.time_ns()",
        "self._offset = 0",
        ("tests/jetstream/test_clock.py", "tests/control/test_control_plane.py"),
        "resume forgets where the frozen clock was moved to",
    ),
    Mutation(
        "max_age_boundary",
        "store",
        "jsemu/store/stream_store.py",
        "            if self._ts[self._first - self._base] <= min_age:\n                self._expire(min_age)\n",
        "            if self._ts[self._first - self._base] < min_age:\n                self._expire(min_age)\n",
        ("tests/jetstream/test_clock.py", "tests/store/test_store_go_behaviour.py"),
        "a message exactly max_age old is still served",
    ),
    Mutation(
        "dedup_window_boundary",
        "store",
        "jsemu/store/dedup.py",
        # Both checks (the purge loop and the lookup) move: either alone is masked by the other.
        "        while queue and now - queue[0].ts >= window:\n"
        "            entry = queue.popleft()\n"
        "            # A later record of the same id replaced this one in the map; keep that one.\n"
        "            if mp.get(entry.msg_id) is entry:\n"
        "                del mp[entry.msg_id]\n"
        "\n"
        "    def lookup(self, msg_id: bytes | str) -> int | None:\n"
        '        """Sequence of an unexpired earlier message with this id, else None."""\n'
        "        if not msg_id or not self._map:\n"
        "            return None\n"
        "        now = self._clock.now_ns()\n"
        "        self._purge(now)\n"
        "        entry = self._map.get(_key(msg_id))\n"
        "        if entry is None or now - entry.ts >= self._window:\n",
        "        while queue and now - queue[0].ts > window:\n"
        "            entry = queue.popleft()\n"
        "            if mp.get(entry.msg_id) is entry:\n"
        "                del mp[entry.msg_id]\n"
        "\n"
        "    def lookup(self, msg_id: bytes | str) -> int | None:\n"
        "        if not msg_id or not self._map:\n"
        "            return None\n"
        "        now = self._clock.now_ns()\n"
        "        self._purge(now)\n"
        "        entry = self._map.get(_key(msg_id))\n"
        "        if entry is None or now - entry.ts > self._window:\n",
        ("tests/store/test_store_dedup.py", "tests/jetstream/test_clock.py"),
        "a message id exactly duplicate_window old still counts as a duplicate",
    ),
    # --- protocol ------------------------------------------------------------------------------
    Mutation(
        "hpub_max_payload",
        "protocol",
        "jsemu/protocol/parser.py",
        "                if hdr < 0 or size < 0 or hdr > size:\n"
        "                    append(self._fail(None))\n"
        "                    return out\n"
        "                if size > self.max_payload:\n",
        "                if hdr < 0 or size < 0 or hdr > size:\n"
        "                    append(self._fail(None))\n"
        "                    return out\n"
        "                if size >= self.max_payload:\n",
        ("tests/protocol/test_wire.py", "tests/protocol/test_parser.py"),
        "an HPUB of exactly max_payload bytes is refused",
    ),
    Mutation(
        "gojson_gt_not_escaped",
        "protocol",
        "jsemu/protocol/gojson/marshal.py",
        '"<": "\\\\u003c", ">": "\\\\u003e", ',
        '"<": "\\\\u003c", ',
        ("tests/jetstream/api/test_stream_create.py",),
        "JSON replies print > instead of Go's \\u003e",
    ),
    # --- JetStream API -------------------------------------------------------------------------
    Mutation(
        "api_errors_not_counted",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        '        if "error" in response and not isinstance(response, QuietError):\n'
        "            self.js.api_errors += 1\n",
        "        pass\n",
        ("tests/jetstream/api/test_account_info.py",),
        "$JS.API.INFO api.errors stays at 0",
    ),
    Mutation(
        "puback_duplicate_spacing",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        """b',"duplicate": true}'""",
        """b',"duplicate":true}'""",
        ("tests/jetstream/api/test_publish.py",),
        "a duplicate's PubAck loses Go's space",
    ),
    # --- subjects ------------------------------------------------------------------------------
    Mutation(
        "sublist_trailing_pwc",
        "server",
        "jsemu/server/sublist.py",
        "    if pwc is not None:\n        result._add_node(pwc, qindex)\n",
        "",
        ("tests/server/test_sublist.py",),
        "a subscription ending in * never matches",
    ),
    # --- consumer policies ---------------------------------------------------------------------
    Mutation(
        "interest_delete_keeps_messages",
        "jetstream",
        "jsemu/jetstream/streams/retention.py",
        '    if stream.config.retention != "interest":\n        return\n    store = stream.store\n    if not any',
        "    return\n    store = stream.store\n    if not any",
        ("tests/jetstream/api/test_retention.py::test_interest_consumer_delete_releases",),
        "deleting a consumer of an interest stream releases nothing",
    ),
    Mutation(
        "needack_forgets_max_delivered",
        "jetstream",
        "jsemu/jetstream/streams/retention.py",
        "    return need or seq in consumer.redelivery_counts\n",
        "    return need\n",
        ("tests/jetstream/api/test_retention.py::test_interest_keeps_what_reached_max_deliver",),
        "a message dropped at max_deliver goes once another consumer acks it",
    ),
    Mutation(
        "backoff_ignored",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "        return backoff[min(self.redelivery_counts.get(seq, 0), len(backoff) - 1)]\n",
        "        return self.config.ack_wait\n",
        ("tests/jetstream/consumers/test_consumer_backoff.py",),
        "every redelivery waits the first backoff delay",
    ),
    Mutation(
        "max_deliver_stops_at_expiry",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "        dc = max(self.redelivery_counts.get(seq, 0), 1)\n",
        "        dc = self.redelivery_counts.get(seq, 0) + 1\n",
        ("tests/jetstream/api/test_consumer_policies.py::test_term_max_deliveries_advisories_and_ack_metric",),
        "a message at max_deliver leaves pending at its ack wait, not at the next look",
    ),
    # --- consumers: the ack lane and push interest ---------------------------------------------
    Mutation(
        "ack_lane_ignores_other_subscribers",
        "server",
        "jsemu/server/ack_lane.py",
        'state = self._state[b"open"] = all(sub in own for sub in self._sublist.reaching(_ACK_TOKENS))',
        'state = self._state[b"open"] = True',
        ("tests/jetstream/api/test_ack_routing.py", "tests/server/test_ack_lane.py"),
        "acks bypass routing while a client subscribed to $JS.ACK.> should see them",
    ),
    Mutation(
        "ack_lane_shared_by_accounts",
        "server",
        "jsemu/server/accounts.py",
        "self.ack_lane = AckLane(self.sublist)",
        "self.ack_lane = server.ack_lane",
        ("tests/server/test_account_acks.py",),
        "an ack published in one account reaches another account's consumer of the same name",
    ),
    Mutation(
        "deliver_group_any_interest",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "return self.js.out.has_interest(self._deliver_to, self._deliver_group)",
        "return self.js.out.has_interest(self._deliver_to)",
        ("tests/jetstream/api/test_ack_routing.py::test_deliver_group_needs_a_member_of_that_group",),
        "a deliver_group consumer binds to any subscriber of its deliver subject",
    ),
    # --- per-account JetStream limits and nkey users in accounts ---------------------------------
    Mutation(
        "account_bytes_unchecked_at_create",
        "jetstream",
        "jsemu/jetstream/limits/storage.py",
        "if account_limit >= 0 and _reserved(js.streams.values(), storage, skip=cfg.name) + add > account_limit:",
        "if account_limit >= 0 and _reserved(js.streams.values(), storage, skip=cfg.name) > account_limit:",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "a stream whose max_bytes passes the account's max_mem / max_file is created",
    ),
    Mutation(
        "server_storage_per_account",
        "jetstream",
        "jsemu/jetstream/limits/storage.py",
        "sum(_reserved(j.streams.values(), storage) for j in js.all_jetstreams.values())",
        "_reserved(js.streams.values(), storage)",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "the server's max_mem / max_file hold for each account alone instead of all of them",
    ),
    Mutation(
        "account_publish_after_server",
        "jetstream",
        "jsemu/jetstream/limits/storage.py",
        "    account_limit = js.limits.max_bytes(storage)\n    if account_limit < 0:\n        return None\n",
        "    account_limit = js.limits.max_bytes(storage)\n    if account_limit < 0 or True:\n        return None\n",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "a publish past the account's max_mem is stored (no 10002)",
    ),
    Mutation(
        "max_streams_off_by_one",
        "jetstream",
        "jsemu/jetstream/limits/counts.py",
        "if others >= limits.max_streams:",
        "if others > limits.max_streams:",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "an account gets one stream more than its max_streams",
    ),
    Mutation(
        "max_consumers_per_account_ignored",
        "jetstream",
        "jsemu/jetstream/limits/counts.py",
        "    if stream_max <= 0 or 0 < account_max < stream_max:\n        return account_max\n",
        "    if stream_max <= 0 or 0 < account_max < stream_max:\n        return stream_max\n",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "the account's max_consumers does not cap a stream's consumers",
    ),
    Mutation(
        "limits_after_name_check",
        "jetstream",
        "jsemu/jetstream/service.py",
        "        over = stream_limits_error(self, cfg)\n",
        "        over = None if cfg.name in self.streams else stream_limits_error(self, cfg)\n",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "a repeated create skips the limits (the binary refuses it when the server's storage is full)",
    ),
    Mutation(
        "max_bytes_required_ignored",
        "jetstream",
        "jsemu/jetstream/streams/config.py",
        "if limits.max_bytes_required and cfg.max_bytes <= 0:",
        "if False and limits.max_bytes_required and cfg.max_bytes <= 0:",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "an account with max_bytes_required takes a stream without max_bytes",
    ),
    Mutation(
        "account_max_ack_pending_not_default",
        "jetstream",
        "jsemu/jetstream/consumers/config.py",
        "min(MAX_ACK_PENDING_DEFAULT, account_max_ack) if account_max_ack > 0 else MAX_ACK_PENDING_DEFAULT",
        "MAX_ACK_PENDING_DEFAULT",
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "a consumer's default max_ack_pending ignores the account's lower limit",
    ),
    Mutation(
        "account_info_limits_unlimited",
        "jetstream",
        "jsemu/jetstream/api/streams.py",
        '"limits": js.limits.to_json(),',
        '"limits": {**js.limits.to_json(), "max_streams": -1},',
        ("tests/jetstream/limits/test_account_js_limits.py::test_account_limits_as_nats_server",),
        "$JS.API.INFO does not show the account's max_streams",
    ),
    Mutation(
        "account_limits_fit_unchecked",
        "jetstream",
        "jsemu/jetstream/limits/storage.py",
        "        if options.max_memory_store >= 0 and memory > options.max_memory_store:",
        "        if options.max_memory_store >= 0 and memory > options.max_memory_store * 2:",
        ("tests/jetstream/limits/test_account_js_limits.py::test_accounts_that_do_not_fit_the_server_do_not_start",),
        "a server starts with accounts whose max_mem add up past its own",
    ),
    Mutation(
        "account_nkey_user_in_global_account",
        "config",
        "jsemu/config/server_config.py",
        'auth.nkeys[key] = User(key, "", perms, account)',
        'auth.nkeys[key] = User(key, "", perms)',
        ("tests/server/test_account_nkeys.py",),
        "an nkey user of an account logs in to $G",
    ),
    Mutation(
        "config_k_is_1024",
        "config",
        "jsemu/config/parser.py",
        '**{unit: 1000 ** (power + 1) for power, unit in enumerate("kmgtpe")},',
        '**{unit: 1024 ** (power + 1) for power, unit in enumerate("kmgtpe")},',
        ("tests/jetstream/limits/test_account_js_limits.py::test_size_units_as_nats_server",),
        "a configuration size 1K reads as 1024 where nats-server reads 1000",
    ),
    Mutation(
        "jsz_account_reserves_nothing",
        "jetstream",
        "jsemu/jetstream/monitoring.py",
        "memory, storage = js.limits.max_memory, js.limits.max_storage",
        "memory, storage = -1, -1",
        ("tests/jetstream/limits/test_account_js_limits.py::test_jsz_account_details_reserve_the_account_limits",),
        "/jsz account_details do not show the account's max_mem / max_file as its reservations",
    ),
    # --- consumer action advisories and the API audit -----------------------------------------
    Mutation(
        "consumer_action_wrong_action",
        "jetstream",
        "jsemu/jetstream/events/consumer_advisories.py",
        '"consumer": consumer, "action": action}',
        '"consumer": consumer, "action": CREATE}',
        ("tests/jetstream/api/test_consumer_advisories.py",),
        "a consumer delete advisory says create",
    ),
    Mutation(
        "consumer_delete_advisory_missing",
        "jetstream",
        "jsemu/jetstream/service.py",
        "        send_consumer_action(self, consumer.stream.name, consumer.name, CONSUMER_DELETED)\n",
        "",
        ("tests/jetstream/api/test_consumer_advisories.py::test_inactive_ephemeral_sends_delete",),
        "an ephemeral that outlived its inactive threshold goes without a delete advisory",
    ),
    Mutation(
        "consumer_deletes_missing_on_stream_delete",
        "jetstream",
        "jsemu/jetstream/service.py",
        "            for name in list(cs.by_name):\n                send_consumer_action(self, stream.name, name, CONSUMER_DELETED)\n",
        "",
        ("tests/jetstream/api/test_consumer_advisories.py",),
        "deleting a stream removes its consumers without their delete advisories",
    ),
    Mutation(
        "consumer_advisory_without_listener",
        "jetstream",
        "jsemu/jetstream/events/advisories.py",
        "    if not out.has_interest(subject):\n        return\n",
        "",
        ("tests/jetstream/events/test_advisory_interest.py",),
        "stream and consumer action advisories are built and sent with nobody listening",
    ),
    Mutation(
        "api_audit_without_listener",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        "requester = js.account.requester() if js.out.has_interest(AUDIT_SUBJECT) else None",
        "requester = js.account.requester()",
        ("tests/jetstream/events/test_advisory_interest.py",),
        "every API request builds its requester record and audit with nobody listening",
    ),
    Mutation(
        "api_audit_client_lang_missing",
        "server",
        "jsemu/server/client_info.py",
        '            ("lang", self.lang),\n',
        "",
        ("tests/jetstream/api/test_api_audit.py::test_api_audit_events",),
        "the audit's client block leaves out the client's language",
    ),
    Mutation(
        "api_audit_for_direct_sends",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        "            requester = None  # and outside the audit\n",
        "",
        ("tests/jetstream/api/test_api_audit.py::test_api_audit_events",),
        "a message found by STREAM.MSG.GET (sent directly by the server) gets an audit",
    ),
    Mutation(
        "stream_action_without_domain",
        "jetstream",
        "jsemu/jetstream/events/advisories.py",
        '        event["domain"] = js.domain\n',
        "        pass\n",
        ("tests/jetstream/api/test_api_audit.py::test_api_audit_user_and_domain",),
        "stream advisories of a server with a JetStream domain leave it out",
    ),
    # --- the system account ----------------------------------------------------------------
    Mutation(
        "sys_events_without_listener",
        "server",
        "jsemu/server/system_account.py",
        '        if not self.router.outbound.has_interest(subject):\n            return\n        event = self._event("client_connect")',
        '        event = self._event("client_connect")',
        ("tests/server/test_system_account.py::test_events_are_built_only_for_a_listener",),
        "every login builds a connect event even when nobody in the system account listens",
    ),
    Mutation(
        "sys_requests_in_every_account",
        "server",
        "jsemu/server/server.py",
        "system_router = self.account_space.by_name.get(options.system_account)",
        'system_router = self.account_space.by_name.get("A")',
        ("tests/server/test_system_account.py::test_other_accounts_do_not_see_the_system_account",),
        "another account (A) is taken for the system account: it answers $SYS.REQ.SERVER.PING",
    ),
    Mutation(
        "sys_disconnect_counts_swapped",
        "server",
        "jsemu/server/system_account.py",
        'event["sent"] = {"msgs": conn.in_msgs, "bytes": conn.in_bytes}',
        'event["sent"] = {"msgs": conn.out_msgs, "bytes": conn.out_bytes}',
        ("tests/server/test_system_account.py::test_connect_and_disconnect_events_as_nats_server",),
        "the disconnect event counts from the server's side instead of the client's",
    ),
    # --- atomic batch publish ---------------------------------------------------------------
    Mutation(
        "batch_partial_commit",
        "jetstream",
        "jsemu/jetstream/streams/atomic_batch.py",
        "                return self._error(result)\n",
        "                return stream.store_batch(batch_id, checked) if checked else self._error(result)\n",
        ("tests/jetstream/api/test_atomic_batch.py", "tests/jetstream/streams/test_atomic_batch_model.py"),
        "a batch failing a check at its commit stores the messages checked before the failure",
    ),
    Mutation(
        "batch_expected_last_seq_on_any_message",
        "jetstream",
        "jsemu/jetstream/streams/atomic_batch.py",
        "            if diff.inflight:\n                return api_error(ApiErrors.JSStreamWrongLastSequenceConstantErr)\n",
        "",
        ("tests/jetstream/api/test_atomic_batch.py::test_a_failed_commit_stores_nothing",),
        "a later message of a batch may carry Nats-Expected-Last-Sequence",
    ),
    Mutation(
        "batch_invalid_commit_keeps_batch",
        "jetstream",
        "jsemu/jetstream/streams/atomic_batch.py",
        "            self.drop(batch_id)\n            return self._error(api_error(ApiErrors.JSAtomicPublishInvalidBatchCommitErr))",
        "            return self._error(api_error(ApiErrors.JSAtomicPublishInvalidBatchCommitErr))",
        ("tests/jetstream/api/test_atomic_batch.py::test_gaps_and_restarts",),
        "an invalid Nats-Batch-Commit leaves the batch open",
    ),
    Mutation(
        "batch_ids_not_deduplicated_within",
        "jetstream",
        "jsemu/jetstream/streams/atomic_batch.py",
        "if msg_id in diff.msg_ids or stream.dedup.lookup(msg_id) is not None:",
        "if stream.dedup.lookup(msg_id) is not None:",
        ("tests/jetstream/api/test_atomic_batch.py::test_a_failed_commit_stores_nothing",),
        "two messages of one batch with the same Nats-Msg-Id commit",
    ),
    Mutation(
        "batch_timeout_not_restarted",
        "jetstream",
        "jsemu/jetstream/streams/atomic_batch.py",
        "            if batch.timer is not None:\n                batch.timer.cancel()  # each message restarts the batch's timeout\n",
        '            if batch.timer is not None:\n                return b""\n',
        ("tests/jetstream/streams/test_atomic_batch_model.py::test_a_batch_times_out_on_the_server_clock",),
        "the batch timeout runs from the first message, not the last",
    ),
    Mutation(
        "batch_inflight_never_released",
        "jetstream",
        "jsemu/jetstream/streams/atomic_batch.py",
        "            self.stream.js.atomic_inflight -= 1\n",
        "            pass\n",
        ("tests/jetstream/streams/test_atomic_batch_model.py",),
        "a dropped or committed batch still counts toward the server's inflight limit",
    ),
    Mutation(
        "batch_count_off_by_one",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        'return b\'%b%d,"batch":%b,"count":%d}\' % (self._ack_prefix, last, batch, len(messages))',
        'return b\'%b%d,"batch":%b,"count":%d}\' % (self._ack_prefix, last, batch, len(messages) + 1)',
        ("tests/jetstream/api/test_atomic_batch.py::test_end_of_batch_commit",),
        "the commit PubAck counts the eob message",
    ),
    Mutation(
        "batch_replay_loses_leader_time",
        "store",
        "jsemu/store/records.py",
        "        return cls(list(messages), result[1])",
        "        return cls(list(messages), 0)",
        (
            "tests/jetstream/streams/test_atomic_batch_model.py::test_committed_batches_survive_a_restart_and_replay_whole",
        ),
        "a replayed batch gets the replay's timestamps",
    ),
    Mutation(
        "batch_ignores_interest",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        '        if self.config.retention == "interest":  # nobody wants it: the sequence is used up only\n',
        "        if False:\n",
        ("tests/jetstream/api/test_atomic_batch.py::test_interest_retention_without_interest",),
        "a batch on an interest stream keeps messages no consumer wants",
    ),
    Mutation(
        "batch_republish_ignores_rollup",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        "                purged = True\n",
        "                purged = False\n",
        ("tests/jetstream/api/test_atomic_batch.py::test_republished_at_the_commit",),
        "a batch message republished after a rollup all names a purged message as its subject's last",
    ),
    # --- consumers: the fast loops (consumer_fast.py) and runs of acks ---------------------------
    Mutation(
        "plain_acks_floor_at_next_pending",
        "jetstream",
        "jsemu/jetstream/consumers/fast.py",
        "c.ack_floor = (nxt[0] - 1, sseq) if nxt[0] > 0 else (dseq, sseq)",
        "c.ack_floor = (nxt[0], sseq) if nxt[0] > 0 else (dseq, sseq)",
        ("tests/jetstream/api/test_consumer_runs.py::test_acks_out_of_order_in_one_read_then_a_pull_request",),
        "an in-order ack in a run moves the ack floor onto the next pending message",
    ),
    Mutation(
        "ack_stretch_skips_token_check",
        "server",
        "jsemu/server/ack_lane.py",
        """            if subject.count(b".") != 8 or b".." in subject or subject[-1:] == b".":
                break
            if not subject.startswith(head):""",
        """            if not subject.startswith(head):""",
        ("tests/jetstream/api/test_consumer_runs.py::test_acks_out_of_order_in_one_read_then_a_pull_request",),
        "an ack subject with a tenth token, inside a run of acks, acks a message",
    ),
    Mutation(
        "push_parts_not_continued",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "                        self._push_later()\n",
        "                        pass\n",
        (
            "tests/jetstream/api/test_consumer_runs.py::test_push_ack_none_delivers_a_long_stream_in_parts",
            "tests/jetstream/api/test_consumer_runs.py::test_push_ack_explicit_delivers_up_to_max_ack_pending_in_parts",
        ),
        "a push consumer stops after its first part (1,000 messages, 250 with acks) of a long stream",
    ),
    Mutation(
        "consumer_replica_drops_acks",
        "jetstream",
        "jsemu/jetstream/cluster/consumer_replication.py",
        "        elif isinstance(rec, Acked | Terminated):\n            self._acked(rec.dseq, rec.sseq)\n",
        "        elif isinstance(rec, Terminated):\n            self._acked(rec.dseq, rec.sseq)\n",
        ("tests/jetstream/cluster/test_consumer_replication.py",),
        "a consumer replica ignores acks: after a step-down acked messages are redelivered",
    ),
    Mutation(
        "consumer_takeover_keeps_leader_memory",
        "jetstream",
        "jsemu/jetstream/cluster/consumer_peers.py",
        "            self.consumer.take_over(self.replicas.elect(name))\n",
        "            self.replicas.elect(name)\n",
        ("tests/jetstream/cluster/test_consumer_replication.py",),
        "a new consumer leader keeps the old leader's in-memory state instead of its replica's",
    ),
    Mutation(
        "no_leader_elected_on_stepdown",
        "jetstream",
        "jsemu/jetstream/cluster/consumer_peers.py",
        "        if elected:\n            consumer_leader_elected(self.consumer)\n",
        "        if elected and not changed:\n            consumer_leader_elected(self.consumer)\n",
        ("tests/jetstream/cluster/test_leader_advisories.py",),
        "no CONSUMER.LEADER_ELECTED advisory when a step-down moves the leader",
    ),
    Mutation(
        "quorum_lost_without_the_10s_window",
        "jetstream",
        "jsemu/jetstream/cluster/quorum.py",
        " or now - self.down_since_ns(name) < LOST_QUORUM_NS",
        "",
        ("tests/jetstream/cluster/test_quorum_advisories.py::test_quorum_lost_as_the_real_cluster",),
        "the leader steps down (QUORUM_LOST) at its first tick after the loss, not once the peers were unheard for 10 s",
    ),
    Mutation(
        "replicated_consumer_takes_plain_acks",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "                and self.replicas is None  # each ack is a record for the replicas (``_record_ack``)\n",
        "                and True\n",
        (
            "tests/jetstream/cluster/test_consumer_replication.py::test_a_run_of_acks_and_a_batch_of_deliveries_are_records_too",
        ),
        "a run of plain acks on a replicated consumer takes the fast loop and never reaches its replicas",
    ),
    # --- message schedules --------------------------------------------------------------------
    Mutation(
        "schedule_every_no_skip_ahead",
        "jetstream",
        "jsemu/jetstream/streams/schedule_pattern.py",
        "        if fire < now:\n            fire = _round_second(now) + every\n",
        "",
        ("tests/jetstream/streams/test_msg_schedules_model.py::test_schedules_follow_the_model",),
        "an overdue @every schedule fires from its old time instead of one period from now",
    ),
    Mutation(
        "schedule_not_cancelled_by_plain_message",
        "jetstream",
        "jsemu/jetstream/streams/schedules.py",
        "        elif not hdr or not slice_header(SCHEDULER, hdr):\n            self.forget(subject)\n",
        "",
        ("tests/jetstream/streams/test_msg_schedules_model.py::test_schedules_follow_the_model",),
        "a plain message on a schedule's subject leaves the schedule running",
    ),
    Mutation(
        "schedule_cron_day_rule",
        "jetstream",
        "jsemu/jetstream/streams/schedule_pattern.py",
        "    if dom & _STAR or dow & _STAR:",
        "    if dom & _STAR and dow & _STAR:",
        ("tests/jetstream/api/test_msg_schedules.py::test_every_and_cron_repeat_on_whole_seconds",),
        "cron day-of-month and weekday combined with OR when one of them is a star",
    ),
    Mutation(
        "schedule_lost_on_restart",
        "jetstream",
        "jsemu/jetstream/service.py",
        "                    stream.schedules.rebuild()",
        "                    pass",
        (
            "tests/jetstream/streams/test_msg_schedules_model.py::test_schedules_survive_a_restart",
            "tests/jetstream/persistence/test_msg_schedules_restart.py",
        ),
        "a file stream's schedules are forgotten by a restart",
    ),
    # --- the accept queue ------------------------------------------------------------------------
    Mutation(
        "asyncio_default_backlog",
        "server",
        "jsemu/server/server.py",
        "backlog=listen_backlog(),",
        "backlog=100,",
        ("tests/server/test_listen_backlog.py::test_connects_queue_while_the_server_is_busy",),
        "the listener keeps asyncio's 100-long accept queue: connects past it wait a 1 s SYN retransmit",
    ),
    # --- consumer hot loops in columns ----------------------------------------------------------
    Mutation(
        "in_order_acks_any_start",
        "jetstream",
        "jsemu/jetstream/consumers/fast.py",
        """        dfirst != c.ack_floor[0] + 1
        or dfirst != c.own_ack_floor[0] + 1
""",
        """        False
""",
        ("tests/jetstream/consumers/test_consumer_model.py",),
        "an in-order run of acks above a pending message moves the ack floor past it",
    ),
    Mutation(
        "ack_run_bulk_skips_dot_count",
        "server",
        "jsemu/server/ack_lane.py",
        """        and list(map(bytes.count, subjects, repeat(b"."))).count(8) == n""",
        """        and True""",
        ("tests/server/test_ack_lane.py",),
        "a subject with a tenth token inside a long run of acks reaches the consumer",
    ),
    Mutation(
        "delivery_frames_one_size",
        "protocol",
        "jsemu/protocol/encoder.py",
        """repeat(b" %d\\r\\n" % size, n) if lens.count(size) == n else map(b" %d\\r\\n".__mod__, lens)""",
        """repeat(b" %d\\r\\n" % size, n)""",
        ("tests/protocol/test_delivery_frames.py",),
        "a run of deliveries is framed with its first message's size on every frame",
    ),
    # --- restart in bulk --------------------------------------------------------------------------
    Mutation(
        "append_run_limits_any_order",
        "store",
        "jsemu/store/stream_store.py",
        "            or (self._maxp and (lim.max_msgs > 0 or lim.max_bytes > 0))\n",
        "            or False\n",
        ("tests/store/test_append_run.py",),
        "a replayed run under both subject and size limits keeps a message the replay one by one removed",
    ),
    Mutation(
        "wal_run_accepts_short_append",
        "store",
        "jsemu/store/wal.py",
        "                if pos + dlen + 8 == end:",
        "                if pos + dlen + 8 <= end:",
        ("tests/store/test_wal_runs.py",),
        "an Append record with bytes left over is read back in a run instead of ending the log",
    ),
    # --- service imports mapped with wildcards ---------------------------------------------------
    Mutation(
        "service_import_mapping_ignored",
        "server",
        "jsemu/server/imports.py",
        "            target = self.mapping.match(subject) or target\n",
        "            pass\n",
        ("tests/server/test_account_imports.py::test_service_import_mapped_with_wildcards",),
        "a request on $JS.A.API.> is forwarded on its local subject, which nobody in the exporter takes",
    ),
    # --- mirrors and sources across accounts --------------------------------------------------
    Mutation(
        "external_link_deaf_ignored",
        "jetstream",
        "jsemu/jetstream/links/upstream.py",
        "        if self.upstream is None or self.deaf or self.paused:\n",
        "        if self.upstream is None or self.paused:\n",
        ("tests/jetstream/links/test_external_upstream.py",),
        "a mirror copies from another account without a stream import of its delivery subject",
    ),
    Mutation(
        "external_route_own_account",
        "jetstream",
        "jsemu/jetstream/links/external_route.py",
        "        other = js.all_jetstreams.get(exporter.name)\n",
        "        other = js\n",
        ("tests/jetstream/links/test_external_upstream.py",),
        "an external upstream is looked for in the mirror's own account",
    ),
    # --- stream snapshots and restores -------------------------------------------------------
    Mutation(
        "snapshot_end_without_status",
        "jetstream",
        "jsemu/jetstream/persistence/snapshot_transfer.py",
        "            self.end_header = STATUS_SNAPSHOT_END\n",
        "            pass\n",
        ("tests/jetstream/api/test_snapshot_restore.py",),
        "a snapshot of several chunks ends with a plain empty message instead of NATS/1.0 204",
    ),
    Mutation(
        "snapshot_ack_timeout_not_armed",
        "jetstream",
        "jsemu/jetstream/persistence/snapshot_transfer.py",
        "        if not self.done:\n            self._arm()\n",
        "        pass\n",
        ("tests/jetstream/api/test_snapshot_restore.py",),
        "a snapshot whose chunks are never acked waits forever",
    ),
    Mutation(
        "restore_keeps_archived_config",
        "jetstream",
        "jsemu/jetstream/service.py",
        "        stream.update_config(cfg)  # the log ends with the archived stream's limits\n",
        "        pass\n",
        ("tests/jetstream/api/test_snapshot_restore.py",),
        "a restored stream keeps the archived limits instead of the request's",
    ),
    # --- write_deadline ------------------------------------------------------------------------
    Mutation(
        "write_deadline_ignored",
        "server",
        "jsemu/server/write_deadline.py",
        "    if conn.handed - buffered >= conn.write_mark:  # the batch was written in time\n",
        "    if True:\n",
        (
            "tests/server/test_write_deadline.py::test_stalled_subscriber_is_cut_after_the_deadline",
            "tests/server/test_write_deadline.py::test_deadline_follows_the_controlled_clock",
        ),
        "a subscriber that never reads is never cut: its output piles up to max_pending",
    ),
    Mutation(
        "write_deadline_bad_value_accepted",
        "config",
        "jsemu/config/server_config.py",
        '            raise ConfigError(f"error parsing write_deadline: {exc}") from None\n',
        "            return 0.0\n",
        ("tests/config/test_config_refusal.py::test_write_deadline_bad_values",),
        'write_deadline: "abc" starts with the default deadline where nats-server refuses to start',
    ),
    Mutation(
        "batch_timeout_without_advisory",
        "jetstream",
        "jsemu/jetstream/streams/atomic_batch.py",
        '            self.abandon(batch_id, "timeout")\n',
        "            self.drop(batch_id)\n",
        ("tests/jetstream/api/test_batch_abandoned.py",),
        "an atomic batch that times out is dropped without the BATCH_ABANDONED advisory",
    ),
    Mutation(
        "dg_plain_run_last_seq_shifted",
        "jetstream",
        "jsemu/jetstream/directget/responder.py",
        "        last_seqs = [0, *seqs[: n - 1]]\n",
        "        last_seqs = [0, *seqs[1:n]]\n",
        ("tests/conformance/test_random_diff.py",),
        "a batch built column by column names the wrong previous message in Nats-Last-Sequence",
    ),
    # --- found by benchmarks.stress ------------------------------------------------------------
    Mutation(
        "pull_batch_completed_missing",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "            if wr.remaining <= 0 and wr.bytes_left > 0:  # the batch is filled with bytes to spare: say so\n",
        "            if False:\n",
        ("tests/jetstream/api/test_consumers.py::test_pull_batch_completed_with_bytes_left",),
        "a pull request with max_bytes ends without 409 Batch Completed when its batch fills first",
    ),
    # --- control lines of the server's send queue ---------------------------------------------
    Mutation(
        "sendq_plan_one_space",
        "server",
        "jsemu/server/outbound.py",
        '            conn.queue(message_frame(hmsg + b" ", pmsg + b" ", conn.headers, hdr, msg), 1, len(msg))\n',
        "            conn.queue(message_frame(hmsg, pmsg, conn.headers, hdr, msg), 1, len(msg))\n",
        ("tests/protocol/test_control_lines.py",),
        "an advisory from the server's send queue has one space before its size (nats-server: two)",
    ),
    Mutation(
        "sendq_routed_without_reply",
        "server",
        "jsemu/server/outbound.py",
        "            self._route(None, subject, EMPTY_REPLY, hdr, msg)\n",
        "            self._route(None, subject, None, hdr, msg)\n",
        ("tests/protocol/test_control_lines.py",),
        "a send-queue message routed (a queue group listens) loses its empty reply: one space",
    ),
    # --- a stream delete's advisories (the binary may lose them; jsemu may not) ----------------
    Mutation(
        "stream_delete_advisory_missing",
        "jetstream",
        "jsemu/jetstream/api/streams.py",
        "    send_stream_action(js, stream.name, DELETE)\n",
        "",
        (
            "tests/jetstream/api/test_stream_advisories.py",
            "tests/jetstream/api/test_consumer_advisories.py::test_stream_delete_sends_a_delete_per_consumer_and_its_own",
        ),
        "a stream delete goes without its STREAM.DELETED advisory",
    ),
    # --- TLS: bytes that come with the handshake's end ---------------------------------------
    Mutation(
        "tls_refusal_lost_at_handshake_end",
        "server",
        "jsemu/server/connection.py",
        "            secure.write(self.farewell)  # e.g. -ERR 'Authorization Violation' for its CONNECT\n",
        "            pass\n",
        ("tests/server/test_tls.py::test_a_connect_refused_as_the_handshake_ends_still_gets_its_error",),
        "a CONNECT refused in the turn the TLS handshake ends closes without its -ERR",
    ),
    # --- the stand-in stopped by a signal ----------------------------------------------------
    Mutation(
        "signal_lost_with_stderr",
        "config",
        "jsemu/cli.py",
        "    except BrokenPipeError:\n        _die_of_sigpipe()\n",
        "    except BrokenPipeError:\n        raise\n",
        ("tests/app/test_signals.py",),
        "a server whose stderr lost its reader ignores SIGTERM (its log line raises, the stop never comes)",
    ),
    # --- the default listener ----------------------------------------------------------------
    Mutation(
        "default_host_ipv4_only",
        "server",
        "jsemu/server/server.py",
        'wildcard = _dual_stack_socket(opts.port) if opts.host in ("0.0.0.0", "") else None',
        "wildcard = None",
        ("tests/server/test_listen_dual_stack.py",),
        "the default host listens on IPv4 only: [::1] is refused",
    ),
    Mutation(
        "ipv4_client_shown_mapped",
        "server",
        "jsemu/server/connection.py",
        "                self.client_ip = self.client_ip[7:]",
        "                pass",
        ("tests/server/test_listen_dual_stack.py",),
        "an IPv4 client of the dual-stack listener is shown as ::ffff:127.0.0.1",
    ),
    # --- a configuration file written as JSON -------------------------------------------------
    Mutation(
        "config_top_level_braces_refused",
        "config",
        "jsemu/config/parser.py",
        'if c == "{" and (closing is None or top_block):',
        "if False:",
        ("tests/config/test_json_config.py",),
        "a configuration written as JSON is refused at its first brace",
    ),
    # --- routes: clusters of server processes ------------------------------------------------
    Mutation(
        "route_msg_queues_ignored",
        "server",
        "jsemu/server/route.py",
        "        if group[0].queue not in queues:\n            continue\n",
        "",
        ("tests/server/test_routes.py::test_messages_from_the_route",),
        "a message from a route reaches local queue groups it does not name",
    ),
    Mutation(
        "route_msg_per_remote_sub",
        "server",
        "jsemu/server/cluster.py",
        "            targets.setdefault(client, [])\n            continue\n",
        "            client.send_msg(router.name.encode(), subject, reply, hdr, msg, [])  # type: ignore[attr-defined]\n"
        "            continue\n",
        ("tests/clients/test_cluster_nats_py.py::test_pub_sub_across_nodes_with_headers",),
        "a message goes over a route once per matching remote subscription instead of once",
    ),
    Mutation(
        "route_queue_weight_stale",
        "server",
        "jsemu/server/cluster.py",
        "            interest.queues[(subject, queue)] = n\n            self._broadcast(encode_rs_plus(account, subject, queue, n))\n",
        "            interest.queues[(subject, queue)] = n\n            if n == 1:\n"
        "                self._broadcast(encode_rs_plus(account, subject, queue, n))\n",
        ("tests/server/test_routes.py::test_interest_sent_as_rs_ops",),
        "a queue group's RS+ keeps the weight of its first member",
    ),
    Mutation(
        "route_connect_urls_not_advertised",
        "server",
        "jsemu/server/cluster.py",
        "            self.server.add_connect_urls(route.advertised)\n",
        "            pass\n",
        ("tests/clients/test_cluster_nats_py.py::test_discovery_connect_urls",),
        "clients never hear of the other servers of the cluster",
    ),
    Mutation(
        "route_cluster_name_unchecked",
        "server",
        "jsemu/server/route.py",
        "        if theirs != ours and not self.cluster.adopt_name(",
        "        if False and not self.cluster.adopt_name(",
        ("tests/server/test_routes.py::test_wrong_cluster_name_is_rejected",),
        "a route from another cluster is accepted",
    ),
    Mutation(
        "route_credentials_unchecked",
        "server",
        "jsemu/server/route.py",
        "        if copts.user is not None and (",
        "        if False and (",
        ("tests/server/test_routes.py::test_route_credentials",),
        "a route with a wrong password is accepted",
    ),
    Mutation(
        "route_gossip_ignored",
        "server",
        "jsemu/server/cluster.py",
        "        if ip:\n            self._dial(ip, explicit=False)\n",
        "        if ip:\n            return\n",
        ("tests/clients/test_cluster_nats_py.py::test_mixed_three_nodes_meet_by_gossip",),
        "a server told of a peer by gossip never dials it: nodes seeded with one route stay apart",
    ),
]
