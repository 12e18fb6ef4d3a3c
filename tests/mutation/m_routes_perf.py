"""Planted bugs in routes' runs (``server/route_batch.py``, the bulk parse of
``protocol/route_ops.py`` and the route's fast lane in ``server/routing.py``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_BATCH = "jsemu/server/route_batch.py"
_OPS = "jsemu/protocol/route_ops.py"
_RUNS = "tests/server/test_route_runs.py"
_PARSE = "tests/protocol/test_route_ops.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "route_heads_shared_by_accounts",
        "server",
        _BATCH,
        "        heads = self._heads.get(account)\n"
        "        if heads is None or len(heads) >= _HEADS_MAX:\n"
        "            heads = self._heads[account] = {}\n",
        '        heads = self._heads.get(b"*")\n'
        "        if heads is None or len(heads) >= _HEADS_MAX:\n"
        '            heads = self._heads[b"*"] = {}\n',
        (f"{_RUNS}::test_runs_in_two_accounts_name_their_account",),
        "a cached RMSG head is keyed without its account: a run in B goes out named A",
    ),
    Mutation(
        "route_mixed_run_drops_replies",
        "server",
        _BATCH,
        '                    b"%b%d\\r\\n%b\\r\\n" % (head(account, s, r or None), len(m), m)\n',
        '                    b"%b%d\\r\\n%b\\r\\n" % (head(account, s, None), len(m), m)\n',
        (f"{_RUNS}::test_runs_of_publishes_cross_the_route",),
        "a run of publishes to several subjects loses their reply subjects on the route",
    ),
    Mutation(
        "route_fast_lane_for_a_remote_queue_group",
        "server",
        "jsemu/server/routing.py",
        "        if target.queue is None:\n            account_batch = ",
        "        if True:\n            account_batch = ",
        (f"{_RUNS}::test_a_run_to_a_lone_remote_queue_group_names_it",),
        "a lone remote queue group gets a run as plain RMSGs (no ``| <queue>``): nobody there takes it",
    ),
    Mutation(
        "route_parse_drops_the_last_run_of_a_read",
        "protocol",
        _OPS,
        "        del buf[:pos]\n        if key is not None:\n            on_run(*key, run)\n",
        "        del buf[:pos]\n",
        (
            f"{_PARSE}::test_a_read_of_one_run_is_handed_over_whole",
            f"{_RUNS}::test_runs_from_the_route_reach_local_subscribers",
        ),
        "the frames of a read's last run are parsed and never delivered",
    ),
    Mutation(
        "route_bulk_parse_trusts_the_first_size",
        "protocol",
        _OPS,
        "            if size <= max_payload and min(map(len, payloads)) == size == max(map(len, payloads)):\n",
        "            if size <= max_payload:\n",
        (_PARSE,),
        "a window of identical control lines is taken without checking each payload's length",
    ),
    Mutation(
        "route_run_delivery_drops_reply",
        "server",
        _BATCH,
        '        conn.queue(frames(pmsg + reply + b" " if reply is not None else pmsg, payloads), n, size)\n',
        "        conn.queue(frames(pmsg, payloads), n, size)\n",
        (f"{_RUNS}::test_runs_from_the_route_reach_local_subscribers",),
        "a routed run with a reply subject reaches local subscribers without it",
    ),
]
MUTATIONS += [
    Mutation(
        "route_run_to_two_subscriptions_of_one_client_in_blocks",
        "server",
        _BATCH,
        "    if targets is None or (len(targets) > 1 and len({id(t[1]) for t in targets}) < len(targets)):\n",
        "    if targets is None:\n",
        (f"{_RUNS}::test_runs_from_the_route_beside_route_interest_and_a_queue_group",),
        "a client with two subscriptions on a routed run's subject gets the run on one, then on the other",
    ),
    Mutation(
        "route_run_ignores_unsub_limits",
        "server",
        _BATCH,
        "        if conn.__class__ is not ClientConnection or sub.max or sub.closed:\n",
        "        if conn.__class__ is not ClientConnection or sub.closed:\n",
        (f"{_RUNS}::test_runs_from_the_route_reach_local_subscribers",),
        "a routed run goes past a subscription's UNSUB limit",
    ),
]
