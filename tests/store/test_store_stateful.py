"""StreamStore against the naive model (store_model.py) under random operation sequences.

Runs with memory and file sizing, random limits (changed mid-run too), a manual clock that
mostly moves forward but sometimes steps back, and a second configuration with tiny internal
thresholds so the SortedList, front-trimming and subject-tree fallback paths run on small stores.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from jsemu.store import ManualClock, StoreError, StoreLimits, StreamStore, new_store
from jsemu.store.records import AppendRun

from .store_model import ModelStore, matches, shrink_thresholds

SUBJECTS = [b"a", b"a.b", b"a.c", b"b.c", b"a.b.c", b"b", b"c.d.e", b"a.b.d"]
FILTERS = [b"", b">", b"a", b"a.*", b"*.c", b"a.>", b"*", b"*.*.c", b"b.c", b"x", b"*.>", b"a.b", b"a.*.*"]
HDRS = [b"", b"NATS/1.0\r\nX: 1\r\n\r\n", b"NATS/1.0\r\nNats-Rollup: sub\r\n\r\n"]

limits_st = st.just(StoreLimits()) | st.builds(
    StoreLimits,
    max_msgs=st.sampled_from([-1, -1, 1, 3, 6, 12]),
    max_bytes=st.sampled_from([-1, -1, 60, 150, 400]),
    max_age_ns=st.sampled_from([0, 0, 1_000, 5_000]),
    max_msgs_per_subject=st.sampled_from([-1, -1, 1, 2, 4]),
    max_msg_size=st.sampled_from([-1, -1, 4, 40]),
    discard_new=st.booleans(),
    discard_new_per_subject=st.booleans(),
)


def _outcome(fn: object, *args: object) -> object:
    """Result or the error class, so raising paths are compared too."""
    try:
        return fn(*args)  # type: ignore[operator]
    except StoreError as exc:
        return type(exc)


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock()
        self.sut: StreamStore
        self.model: ModelStore

    @initialize(
        limits=limits_st,
        storage=st.sampled_from(["memory", "file"]),
        first_seq=st.sampled_from([0, 1, 1, 100]),
    )
    def setup(self, limits: StoreLimits, storage: str, first_seq: int) -> None:
        self.sut = new_store(storage, limits, self.clock, first_seq=first_seq)
        self.model = ModelStore(limits, self.clock, storage, first_seq)

    # ---------------------------------------------------------------- rules
    @rule(
        subject=st.sampled_from(SUBJECTS),
        hdr=st.sampled_from(HDRS),
        size=st.integers(0, 12),
        n=st.integers(1, 4),
    )
    def append(self, subject: bytes, hdr: bytes, size: int, n: int) -> None:
        for i in range(n):
            data = bytes([97 + i]) * size
            assert _outcome(self.sut.append, subject, hdr, data) == _outcome(self.model.append, subject, hdr, data)

    @rule(
        pubs=st.lists(st.tuples(st.sampled_from(SUBJECTS), st.integers(0, 12)), min_size=1, max_size=8),
    )
    def append_columns(self, pubs: list[tuple[bytes, int]]) -> None:
        """The publish hot path's bulk append stores the whole run exactly as append would,
        or nothing when a limit is configured or the store is empty."""
        subjects = [subject for subject, _ in pubs]
        datas = [b"d" * size for _, size in pubs]
        plain_store = self.sut.limits == StoreLimits() and self.sut.msgs > 0
        stored = self.sut.append_columns(subjects, datas)
        assert stored == plain_store or (stored and self.sut.msgs > 0)
        if stored:
            for subject, data in zip(subjects, datas):
                self.model.append(subject, b"", data)

    @rule(
        pubs=st.lists(
            st.tuples(st.sampled_from(SUBJECTS), st.sampled_from(HDRS), st.integers(0, 12)), min_size=1, max_size=10
        ),
    )
    def append_run(self, pubs: list[tuple[bytes, bytes, int]]) -> None:
        """A replayed log's run of ``Append`` records: in bulk where the store takes it,
        else one ``append`` each (as a replay does); either way as the model's appends one by
        one at the run's time."""
        subjects = [subject for subject, _, _ in pubs]
        hdrs = [hdr for _, hdr, _ in pubs]
        datas = [b"r" * size for _, _, size in pubs]
        run = AppendRun(subjects, hdrs, datas, [self.clock.now_ns()] * len(pubs))
        if run.apply(self.sut):
            for subject, hdr, data in zip(subjects, hdrs, datas, strict=True):
                assert isinstance(self.model.append(subject, hdr, data), tuple)
            return
        for one, (subject, hdr, data) in zip(run.appends(), zip(subjects, hdrs, datas, strict=True), strict=True):
            assert _outcome(one.apply, self.sut) == _outcome(self.model.append, subject, hdr, data)

    @rule(subject=st.sampled_from(SUBJECTS), size=st.integers(0, 12))
    def append_plain(self, subject: bytes, size: int) -> None:
        data = b"p" * size
        got = _outcome(self.sut.append_plain, subject, data)
        want = _outcome(self.model.append, subject, b"", data)
        assert got == (want[0] if isinstance(want, tuple) else want)

    @rule(ns=st.sampled_from([0, 0, 1, 400, 999, 1_000, 1_001, 2_500, 6_000]))
    def advance(self, ns: int) -> None:
        self.clock.advance(ns)

    @rule(ns=st.sampled_from([1, 500, 3_000]))
    def step_back(self, ns: int) -> None:
        self.clock.advance(-ns)

    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        m = self.model
        seq = data.draw(st.integers(max(0, m.first - 1), m.last + 2))
        erase = data.draw(st.booleans())
        assert _outcome(self.sut.remove, seq, erase) == _outcome(m.remove, seq)

    @rule()
    def purge(self) -> None:
        assert self.sut.purge() == self.model.purge()

    @rule(
        subject=st.sampled_from([None, b"", b">", *SUBJECTS[:4], b"a.*", b"*.c", b"a.>", b"x"]),
        data=st.data(),
    )
    def purge_ex(self, subject: bytes | None, data: st.DataObject) -> None:
        m = self.model
        seq = data.draw(st.one_of(st.just(0), st.just(1), st.integers(0, m.last + 3)))
        # keep below the match count (the case that purges some and keeps some) as often as
        # the fixed values, which mostly keep everything or nothing on small stores.
        count = sum(1 for r in m.msgs if matches(subject or b">", r.subject))
        keep = data.draw(st.one_of(st.sampled_from([0, 0, 1, 2, 5]), st.integers(1, max(1, count - 1))))
        assert self.sut.purge_ex(subject, seq, keep) == m.purge_ex(subject, seq, keep)

    @rule(data=st.data())
    def compact(self, data: st.DataObject) -> None:
        m = self.model
        seq = data.draw(st.one_of(st.just(0), st.integers(max(0, m.first - 2), m.last + 3)))
        assert self.sut.compact(seq) == m.compact(seq)

    @rule(num=st.integers(1, 3), no_interest=st.booleans(), explicit=st.booleans())
    def skip(self, num: int, no_interest: bool, explicit: bool) -> None:
        seq = self.model.last + 1 if explicit else 0
        assert self.sut.skip_msgs(seq, num, no_interest) == self.model.skip_msgs(seq, num, no_interest)

    @rule(limits=limits_st)
    def update_limits(self, limits: StoreLimits) -> None:
        self.sut.update_limits(limits)
        self.model.update_limits(limits)

    @precondition(lambda self: self.model.limits.max_age_ns > 0)
    @rule()
    def expire(self) -> None:
        self.sut.expire()
        self.model.expire()

    @rule(filt=st.sampled_from(FILTERS), data=st.data())
    def probe(self, filt: bytes, data: st.DataObject) -> None:
        """Random start points, on top of the fixed ones the invariants use."""
        sut, m = self.sut, self.model
        m.expire()
        for _ in range(4):
            start = data.draw(st.integers(max(0, m.first - 1), m.last + 1))
            assert sut.load_next(filt, start) == m.load_next(filt, start), (filt, start)
            assert sut.load_prev(filt, start) == m.load_prev(filt, start), (filt, start)
            assert sut.num_pending(start, filt) == m.num_pending(start, filt, False), (filt, start)
            assert sut.num_pending(start, filt, True) == m.num_pending(start, filt, True), (filt, start)

    # ---------------------------------------------------------------- checks
    def _starts(self) -> Iterator[int]:
        m = self.model
        yield from sorted(
            {0, m.first - 1, m.first, m.first + 1, (m.first + m.last) // 2, m.last - 1, m.last, m.last + 1}
        )

    @invariant()
    def same_state(self) -> None:
        sut, m = self.sut, self.model
        m.expire()
        assert sut.state() == m.state()
        assert sut.deleted() == m.deleted()
        assert (sut.msgs, sut.bytes, sut.first_seq, sut.last_seq, sut.num_subjects) == (
            len(m.msgs),
            m.nbytes,
            m.first,
            m.last,
            len({r.subject for r in m.msgs}),
        )

    @invariant()
    def same_reads(self) -> None:
        sut, m = self.sut, self.model
        m.expire()
        for seq in range(max(0, m.first - 1), m.last + 2):
            assert sut.load(seq) == m.load(seq), seq
        starts = list(self._starts())
        for filt in FILTERS:
            assert sut.load_last(filt) == m.load_last(filt), filt
            assert sut.subjects_totals(filt) == m.subjects_totals(filt), filt
            assert sut.subjects_state(filt) == m.subjects_state(filt), filt
            for start in starts:
                assert sut.load_next(filt, start) == m.load_next(filt, start), (filt, start)
                assert sut.load_prev(filt, start) == m.load_prev(filt, start), (filt, start)
                assert sut.num_pending(start, filt) == m.num_pending(start, filt, False), (filt, start)
                assert sut.num_pending(start, filt, True) == m.num_pending(start, filt, True), (filt, start)
        for subject in SUBJECTS:
            last = [r.seq for r in m.msgs if r.subject == subject]
            assert sut.last_seq_for_subject(subject) == (last[-1] if last else 0)

    @invariant()
    def same_multi_last(self) -> None:
        sut, m = self.sut, self.model
        m.expire()
        groups = [[b">"], [b"a.*"], [b"a", b"a.>"], [b"*.c", b"b.c", b"a.b.c"], [b"", b"x"], [b"*", b"*.*"]]
        for filters in groups:
            for max_seq in {0, m.first, (m.first + m.last) // 2, m.last}:
                for max_allowed in (0, 1, 3):
                    got = _outcome(sut.multi_last_seqs, filters, max_seq, max_allowed)
                    assert got == _outcome(m.multi_last_seqs, filters, max_seq, max_allowed), (filters, max_seq)

    @invariant()
    def same_time_search(self) -> None:
        sut, m = self.sut, self.model
        m.expire()
        probes = {0, self.clock.now_ns(), self.clock.now_ns() + 1}
        for r in m.msgs:
            probes.update((r.ts - 1, r.ts, r.ts + 1))
        for ts in probes:
            assert sut.seq_from_time(ts) == m.seq_from_time(ts), ts


_SETTINGS = settings(
    max_examples=200,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

TestStoreDefault = StoreMachine.TestCase
TestStoreDefault.settings = _SETTINGS


class TinyThresholdsMachine(StoreMachine):
    """Same rules with thresholds shrunk so the large-store code paths run on a handful of messages."""


TestStoreTinyThresholds = TinyThresholdsMachine.TestCase
TestStoreTinyThresholds.settings = _SETTINGS


@pytest.fixture(autouse=True)
def _tiny_thresholds(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.cls is TestStoreTinyThresholds:
        shrink_thresholds(monkeypatch)
