"""Planted bugs in the run lanes (``server/run_lanes.py``: a run of plain publishes to a
subject nobody listens to, or that one client subscription takes) and in the one copy of the
publish checks that traced publishes share (``ClientConnection.process_pub``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_LANES = "tests/server/test_run_lanes.py"
_TRACE = "tests/server/test_msg_trace.py::test_trace_events_as_nats_server"

MUTATIONS: list[Mutation] = [
    Mutation(
        "run_lane_no_interest_ignores_no_responders",
        "server",
        "jsemu/server/run_lanes.py",
        "        return not publisher.no_responders or (",
        "        return True or (",
        (f"{_LANES}::test_no_interest_runs_with_and_without_replies",),
        "a run with reply subjects nobody listens to is dropped without its no-responders statuses",
    ),
    Mutation(
        "run_lane_ignores_echo",
        "server",
        "jsemu/server/run_lanes.py",
        "        return publisher.echo or publisher is not self.conn\n",
        "        return True\n",
        (f"{_LANES}::test_no_echo_publisher_subscribed_to_its_subject",),
        "a publisher with echo: false gets its own run back through its subscription",
    ),
    Mutation(
        "run_lane_drops_reply_subjects",
        "server",
        "jsemu/server/run_lanes.py",
        "        if replies[0] is None and replies.count(None) == n:\n",
        "        if True:\n",
        (f"{_LANES}::test_one_subscription_runs",),
        "a run to one client subscription is delivered without its reply subjects",
    ),
    Mutation(
        "run_lane_not_counted_for_unsub_limit",
        "server",
        "jsemu/server/run_lanes.py",
        "        sub.nm += n\n",
        "",
        (f"{_LANES}::test_unsub_limit_after_the_route_was_learned",),
        "messages a run lane delivered do not count toward a later UNSUB limit",
    ),
    Mutation(
        "publish_refusal_not_traced",
        "server",
        "jsemu/server/connection.py",
        '            trace.ingress()["error"] = error\n',
        "            pass\n",
        (_TRACE,),
        "a traced publish the permissions refuse has no error in its ingress event",
    ),
]

MUTATIONS.append(
    Mutation(
        "run_lane_taken_for_a_mixed_run",
        "server",
        "jsemu/server/connection.py",
        "            if n > 1 and list(map(lanes.get, subjects)).count(batch) != n:\n",
        "            if False:\n",
        (f"{_LANES}::test_a_run_over_nobody_and_somebody",),
        "a run whose first subject nobody listens to is dropped whole, subjects with interest too",
    )
)
