"""Planted bugs that the client tests of ordered and pull consumers going away must catch: the
stream under them deleted (or re-created) and the server restarted, seen by nats-py 2.16,
nats.js 3.4 and the newest nats.py packages (``tests/clients/test_stream_gone_nats_py.py``,
``test_going_away_nats_js.py``, ``test_going_away_newest_nats_py.py``; the last needs the
new-clients venv: set ``JSEMU_NATS_NEXT_PYTHON`` when running these, as the scratch copy has no
``.venv-nats-next``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_SERVICE = "jsemu/jetstream/service.py"
_FORGET = ("            cs.clear()\n", "            cs.by_name.clear()\n")
_WHY = "a deleted stream drops its consumers without releasing their waiting pull requests"

MUTATIONS: list[Mutation] = [
    Mutation(
        "ordered_stream_delete_silent_nats_py",
        "jetstream",
        _SERVICE,
        *_FORGET,
        ("tests/clients/test_stream_gone_nats_py.py::test_fetch_when_its_stream_goes",),
        _WHY + ": nats-py's fetch(3) raises a timeout where it returns an empty list",
    ),
    Mutation(
        "ordered_stream_delete_silent_nats_js",
        "jetstream",
        _SERVICE,
        *_FORGET,
        ("tests/clients/test_going_away_nats_js.py::test_stream_gone_same_on_jsemu",),
        _WHY + ": nats.js fetch()/next() wait out their expiry, consume() hears no consumer_deleted",
    ),
    Mutation(
        "ordered_stream_delete_silent_newest_nats_py",
        "jetstream",
        _SERVICE,
        *_FORGET,
        ("tests/clients/test_going_away_newest_nats_py.py::test_going_away_same_on_jsemu",),
        _WHY + ": the newest nats.py's next()/fetch() end late without ConsumerDeletedError",
    ),
    Mutation(
        "ordered_restart_no_shutdown_status_newest_nats_py",
        "app",
        "jsemu/app.py",
        "        await self._signal_pull_consumers()\n",
        "",
        ("tests/clients/test_going_away_newest_nats_py.py::test_across_a_restart_same_on_jsemu",),
        "jsemu serve stopped by SIGTERM closes connections without 409 Server Shutdown: the newest "
        "nats.py's waiting next() calls see no status",
    ),
]
