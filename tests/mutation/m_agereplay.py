"""Planted bugs in replaying limits and ages: a replayed log (or a late follower) must expire by
``max_age`` at the time of each record, under the limits of then, not by the clock of the replay."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_STORE = "jsemu/store/stream_store.py"
_RECORDS = "jsemu/store/records.py"
_AGE = "tests/store/test_age_replay.py"
_HISTORY = "tests/store/test_column_snapshot.py::test_a_store_restarted_through_its_log_is_the_store_that_never_stopped"

MUTATIONS: list[Mutation] = [
    Mutation(
        "agereplay_apply_by_the_replay_clock",
        "store",
        _STORE,
        "        self._age_clock = clock\n        try:\n            return record.apply(self)",
        "        self._age_clock = self._clock\n        try:\n            return record.apply(self)",
        (_AGE, _HISTORY),
        "a record applied expires by the applier's clock: a max_age lifted since empties the replayed store",
    ),
    Mutation(
        "agereplay_limits_logged_without_time",
        "store",
        _RECORDS,
        "        return cls(limits, result)\n",
        "        return cls(limits, 0)\n",
        (_AGE,),
        "limits logged without the leader's time: a replay misses what expired before a max_age was lifted",
    ),
    Mutation(
        "agereplay_age_clock_left_on_the_record",
        "store",
        _STORE,
        "        finally:\n            self._age_clock = self._clock\n",
        "        finally:\n            pass\n",
        (_AGE,),
        "after a record the store keeps expiring at the record's time: reads no longer expire by its clock",
    ),
    Mutation(
        "agereplay_replay_reads_between_records",
        "jetstream",
        "jsemu/jetstream/persistence/stream_files.py",
        "    if isinstance(record, AppendRun):\n        return list(record.appends())\n    if isinstance(record, Columns):\n",
        "    last_seq = store.last_seq\n    if isinstance(record, AppendRun):\n        return list(record.appends())\n"
        "    if isinstance(record, Columns) and last_seq >= 0:\n",
        ("tests/jetstream/persistence/test_restart_lifted_max_age.py",),
        "the replay reads the store between records: it expires by the restart's clock under a max_age lifted since",
    ),
]
