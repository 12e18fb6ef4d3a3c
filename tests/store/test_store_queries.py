"""Every query at every start point against brute force, on random stores with holes.

The stateful test checks a few start points after each step; this one builds a store once and
sweeps all of them, with and without the tiny thresholds that force the subject-tree fallback.
The expected messages are tracked from the operations themselves and matched with the model's
own brute-force subject matching (``store_model.matches``), never read back from the store.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsemu.store import ManualClock, MemoryStore, StoredMsg, StoreLimits

from .store_model import matches, shrink_thresholds

SUBJECTS = [b"a.b", b"a.c", b"b.c", b"a", b"a.b.c"]
FILTERS = [b"", b">", b"a.*", b"*.c", b"a.>", b"*", b"a.b", b"*.*.c", b"zz"]

ops_st = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(SUBJECTS)),
        st.tuples(st.just("del"), st.integers(1, 60)),
    ),
    max_size=60,
)


@pytest.fixture(params=["default", "tiny"])
def thresholds(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "tiny":
        shrink_thresholds(monkeypatch)
    return str(request.param)


# The fixture only patches constants, so sharing it across examples is fine.
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_st, maxp=st.sampled_from([-1, 2]))
def test_queries_match_brute_force(thresholds: str, ops: list[tuple[str, object]], maxp: int) -> None:
    clock = ManualClock()
    store = MemoryStore(StoreLimits(max_msgs_per_subject=maxp), clock)
    # The expected contents come from the operations, not from the store: a list of
    # (seq, subject, ts), with the per-subject limit applied by hand.
    expected: list[tuple[int, bytes, int]] = []
    added = 0
    for op, arg in ops:
        clock.advance(10)
        if op == "add":
            assert isinstance(arg, bytes)
            added += 1
            seq, ts = store.append(arg, b"", b"x")
            assert seq == added
            expected.append((seq, arg, ts))
            same = [e for e in expected if e[1] == arg]
            if maxp > 0 and len(same) > maxp:
                expected.remove(same[0])
        else:
            assert isinstance(arg, int)
            removed = store.remove(arg)
            assert removed == any(e[0] == arg for e in expected), arg
            expected = [e for e in expected if e[0] != arg]
    state = store.state()
    live = [StoredMsg(subject, b"", b"x", seq, ts) for seq, subject, ts in expected]
    assert state.msgs == len(live)
    for filt in FILTERS:
        hits = [m for m in live if matches(filt, m.subject)]
        for start in range(state.last_seq + 3):
            after = [m for m in hits if m.seq >= start]
            before = [m for m in hits if m.seq <= start]
            assert store.load_next(filt, start) == (after[0] if after else None), (filt, start)
            want_prev = before[-1] if before and start >= state.first_seq else None
            assert store.load_prev(filt, start) == want_prev, (filt, start)
            assert store.num_pending(start, filt) == len(after), (filt, start)
            assert store.num_pending(start, filt, True) == len({m.subject for m in after}), (filt, start)
