"""Compaction: the records of a store's state rebuild the same store (messages, sequences,
deletes, limits), whatever history produced it, and without judging kept messages again
under limits they were not stored under."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.store import ManualClock, StoreError, StoreLimits, new_store
from jsemu.store.compaction import state_records
from jsemu.store.records import Append, Compact, Purge, PurgeEx, Record, Remove, SkipMany, UpdateLimits

SUBJECTS = [b"a", b"b", b"c.d"]
HDRS = [b"", b"NATS/1.0\r\nNats-Msg-Id: x\r\n\r\n"]

ops = st.lists(
    st.one_of(
        st.builds(Append, st.sampled_from(SUBJECTS), st.sampled_from(HDRS), st.binary(max_size=6)),
        st.builds(Append, st.sampled_from(SUBJECTS), st.just(b""), st.binary(max_size=6)),
        st.builds(Remove, st.integers(1, 40)),
        st.builds(SkipMany, st.just(0), st.integers(1, 4)),
        st.builds(Compact, st.integers(0, 45)),
        st.builds(PurgeEx, st.sampled_from([None, b"a", b"b"]), st.integers(0, 30), st.integers(0, 2)),
        st.just(Purge()),
        st.builds(
            UpdateLimits,
            st.builds(
                StoreLimits,
                max_msgs=st.sampled_from([-1, 3, 8]),
                max_msgs_per_subject=st.sampled_from([-1, 1, 2, 3]),
                discard_new=st.booleans(),
                discard_new_per_subject=st.booleans(),
            ),
        ),
    ),
    max_size=60,
)


def _observed(store: Any) -> tuple[Any, ...]:
    state = store.state()
    if store.load(store.last_seq) is None:
        # A skipped (or removed) last sequence's time is when the skip ran, in the original
        # and in its replayed log alike: not part of the state the records carry.
        state = state._replace(last_ts=0) if hasattr(state, "_replace") else replace(state, last_ts=0)
    msgs = [(m.seq, m.subject, m.hdr, m.data, m.ts) for m in (store.load(s) for s in range(1, store.last_seq + 2)) if m]
    return state, store.deleted(), msgs, store.limits, store.subjects_totals(b">")


def _run(store: Any, records: list[Record]) -> None:
    for record in records:
        try:
            store.apply(record)
        except StoreError:
            pass


@settings(max_examples=300, deadline=None)
@given(history=ops, storage=st.sampled_from(["memory", "file"]), first_seq=st.sampled_from([0, 1, 7]))
def test_state_records_rebuild_the_same_store(history: list[Record], storage: str, first_seq: int) -> None:
    clock = ManualClock()
    original = new_store(storage, StoreLimits(), clock, first_seq=first_seq)
    _run(original, history)
    rebuilt = new_store(storage, original.limits, clock, first_seq=first_seq)
    _run(rebuilt, list(state_records(original)))
    assert _observed(rebuilt) == _observed(original)


def test_kept_messages_are_not_judged_again_under_newer_limits() -> None:
    """A message kept before ``max_msg_size`` was lowered stays (nats-server keeps it too);
    replayed under the new limits it would be refused."""
    clock = ManualClock()
    store = new_store("file", StoreLimits(), clock)
    store.append(b"a", b"", b"0123456789")
    store.append(b"a", b"", b"x")
    store.update_limits(StoreLimits(max_msg_size=4))
    rebuilt = new_store("file", store.limits, clock)
    _run(rebuilt, list(state_records(store)))
    assert [m.data for m in (rebuilt.load(s) for s in (1, 2)) if m] == [b"0123456789", b"x"]
    assert _observed(rebuilt) == _observed(store)
