"""Planted bugs in what waiting pull requests hear when their consumer goes away or the
server stops (``jsemu/jetstream/consumers/going_away.py`` and its callers)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_TESTS = "tests/jetstream/consumers/test_consumer_going_away.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "goaway_no_consumer_deleted",
        "jetstream",
        "jsemu/jetstream/consumers/consumer_set.py",
        "        release_deleted(consumer)\n",
        "",
        (f"{_TESTS}::test_deleted_consumer_releases_waiting_requests",),
        "a deleted consumer forgets its waiting requests silently: fetches hang until their timeout",
    ),
    Mutation(
        "goaway_no_consumer_deleted_nats_py",
        "jetstream",
        "jsemu/jetstream/consumers/consumer_set.py",
        "        release_deleted(consumer)\n",
        "",
        ("tests/clients/test_going_away_nats_py.py::test_fetch_when_its_consumer_goes",),
        "the same, seen by nats-py: fetch(n > 1) raises a timeout where it returns an empty list",
    ),
    Mutation(
        "goaway_no_consumer_deleted_nats_js",
        "jetstream",
        "jsemu/jetstream/consumers/consumer_set.py",
        "        release_deleted(consumer)\n",
        "",
        ("tests/clients/test_going_away_nats_js.py",),
        "the same, seen by nats.js: next()/fetch() wait out their expiry, no consumer_deleted notification",
    ),
    Mutation(
        "goaway_deleted_reverse_order",
        "jetstream",
        "jsemu/jetstream/consumers/going_away.py",
        "    for wr in consumer.waiting:\n        consumer.send_status(wr.reply, texts.PULL_CONSUMER_DELETED)",
        "    for wr in reversed(consumer.waiting):\n        consumer.send_status(wr.reply, texts.PULL_CONSUMER_DELETED)",
        (f"{_TESTS}::test_deleted_consumer_releases_waiting_requests",),
        "409 Consumer Deleted sent newest request first, not in the order the requests wait",
    ),
    Mutation(
        "goaway_no_shutdown_signal",
        "app",
        "jsemu/app.py",
        "        await self._signal_pull_consumers()\n",
        "",
        (f"{_TESTS}::test_stop_signals_waiting_requests",),
        "a stopping server closes connections without 409 Server Shutdown to waiting requests",
    ),
    Mutation(
        "goaway_shutdown_first_of_reply",
        "jetstream",
        "jsemu/jetstream/consumers/going_away.py",
        "latest = {wr.reply: wr for wr in consumer.waiting}",
        "latest = {wr.reply: wr for wr in reversed(consumer.waiting)}",
        (f"{_TESTS}::test_stop_signals_waiting_requests",),
        "two requests on one reply subject: the status names the first one's counts, Go's map keeps the last",
    ),
    Mutation(
        "goaway_shutdown_counts",
        "jetstream",
        "jsemu/jetstream/consumers/going_away.py",
        "texts.PULL_SERVER_SHUTDOWN % (wr.remaining, wr.bytes_left)",
        "texts.PULL_SERVER_SHUTDOWN % (wr.remaining + wr.delivered, wr.bytes_left)",
        (f"{_TESTS}::test_stop_signals_waiting_requests",),
        "Nats-Pending-Messages counts the batch asked for, not what is still to come",
    ),
    Mutation(
        "goaway_shutdown_after_lame_duck",
        "jetstream",
        "jsemu/jetstream/service.py",
        "        if not self.serving:\n            return False\n",
        "",
        (f"{_TESTS}::test_stop_after_lame_duck_mode_sends_nothing",),
        "the stop at the end of lame duck mode signals consumers that shutdownJetStream already removed",
    ),
]
