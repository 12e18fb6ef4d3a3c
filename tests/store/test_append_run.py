"""A replayed log's run of ``Append`` records (``AppendRun``, ``StreamStore.append_run``)
against the naive model's appends one by one, in the cases where the order of the limits'
removals decides the end state (the state machine in ``test_store_stateful.py`` covers the
rest at random)."""

from __future__ import annotations

import pytest

from jsemu.store import ManualClock, StoreLimits, new_store
from jsemu.store.records import AppendRun

from .store_model import ModelStore


@pytest.mark.parametrize(
    ("limits", "pubs"),
    [
        # Appending a(30) goes past max_bytes, so b goes; then a(10) makes a(30) go too.
        # Limits applied once at the end would keep b: the run must go message by message.
        (StoreLimits(max_bytes=60, max_msgs_per_subject=1), [(b"b", 10), (b"a", 30), (b"a", 10)]),
        (StoreLimits(max_msgs=2, max_msgs_per_subject=1), [(b"b", 1), (b"a", 1), (b"c", 1), (b"a", 1)]),
        (StoreLimits(max_msgs=2), [(b"b", 1), (b"a", 1), (b"c", 1), (b"a", 1)]),
        (StoreLimits(max_bytes=90), [(b"b", 10), (b"a", 30), (b"a", 10), (b"c", 20)]),
        (StoreLimits(max_msgs_per_subject=2), [(b"b", 1), (b"a", 1), (b"a", 2), (b"a", 3), (b"b", 4)]),
        # One subject (indexed by one range): new to the store, with and without a limit.
        (StoreLimits(), [(b"a", 1), (b"a", 2), (b"a", 3)]),
        (StoreLimits(max_msgs_per_subject=2), [(b"a", 1), (b"a", 2), (b"a", 3)]),
        (StoreLimits(max_msgs=2), [(b"a", 1)]),
    ],
)
@pytest.mark.parametrize("storage", ["memory", "file"])
def test_a_run_ends_where_appends_one_by_one_end(
    limits: StoreLimits, pubs: list[tuple[bytes, int]], storage: str
) -> None:
    clock = ManualClock()
    store = new_store(storage, limits, clock)
    model = ModelStore(limits, clock, storage, 1)
    subjects = [subject for subject, _ in pubs]
    datas = [b"x" * size for _, size in pubs]
    run = AppendRun(subjects, [b""] * len(pubs), datas, [clock.now_ns()] * len(pubs))
    if not run.apply(store):
        for one in run.appends():
            one.apply(store)
    for subject, data in zip(subjects, datas, strict=True):
        model.append(subject, b"", data)
    assert store.state() == model.state()
    assert [store.load(seq) is not None for seq in range(1, len(pubs) + 1)] == [
        model.load(seq) is not None for seq in range(1, len(pubs) + 1)
    ]
