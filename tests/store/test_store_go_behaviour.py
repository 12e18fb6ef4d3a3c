"""Pinned nats-server store behaviours, each citing the Go function (server/memstore.go unless noted)."""

from __future__ import annotations

import pytest

from jsemu.store import (
    ManualClock,
    MaxBytesExceeded,
    MaxMsgsExceeded,
    MaxMsgsPerSubjectExceeded,
    MsgTooLarge,
    SequenceMismatch,
    StoreLimits,
    StoreState,
    StreamStore,
    TooManyResults,
    new_store,
)

SEC = 1_000_000_000


def make(clock: ManualClock | None = None, storage: str = "memory", first_seq: int = 1, **kw: object) -> StreamStore:
    return new_store(storage, StoreLimits(**kw), clock or ManualClock(), first_seq=first_seq)  # type: ignore[arg-type]


def fill(store: StreamStore, *subjects: bytes, data: bytes = b"x") -> list[int]:
    return [store.append(s, b"", data)[0] for s in subjects]


# --- errors: store.go


def test_error_texts_are_gos() -> None:
    # store.go: ErrMaxMsgs, ErrMaxBytes, ErrMaxMsgsPerSubject, ErrMsgTooLarge, ErrTooManyResults, ErrSequenceMismatch
    assert str(MaxMsgsExceeded()) == "maximum messages exceeded"
    assert str(MaxBytesExceeded()) == "maximum bytes exceeded"
    assert str(MaxMsgsPerSubjectExceeded()) == "maximum messages per subject exceeded"
    assert str(MsgTooLarge()) == "message too large"
    assert str(TooManyResults()) == "too many matching results for request"
    assert str(SequenceMismatch()) == "expected sequence does not match store"


# --- sizes: memStoreMsgSize / fileStoreMsgSize


def test_msg_size_formulas() -> None:
    mem, file = make(), make(storage="file")
    # memStoreMsgSize: subj + hdr + msg + 16
    assert mem.msg_size(b"foo", b"", b"hello") == 3 + 5 + 16
    assert mem.msg_size(b"foo", b"HDR", b"hello") == 3 + 3 + 5 + 16
    # fileStoreMsgSizeRaw: 22 + subj + msg + 8, plus 4 + hdr when there are headers
    assert file.msg_size(b"foo", b"", b"hello") == 22 + 3 + 5 + 8
    assert file.msg_size(b"foo", b"HDR", b"hello") == 22 + 3 + 4 + 3 + 5 + 8
    file.append(b"foo", b"HDR", b"hello")
    assert file.state().bytes == 45


# --- sequences: newMemStoreWithMode / purge / updateFirstSeq


def test_first_seq_config() -> None:
    # cfg.FirstSeq unset: state stays zero until the first message (a new stream shows first_seq 0).
    fresh = make(first_seq=0)
    assert (fresh.state().first_seq, fresh.state().last_seq, fresh.state().num_deleted) == (0, 0, 0)
    assert fresh.append(b"a", b"", b"")[0] == 1
    # cfg.FirstSeq > 0 runs purge(FirstSeq): first = N, last = N-1.
    s = make(first_seq=100)
    assert (s.first_seq, s.last_seq) == (100, 99)
    assert s.append(b"a", b"", b"")[0] == 100


def test_purge_moves_first_past_last_and_keeps_last_time() -> None:
    clock = ManualClock()
    s = make(clock)
    fill(s, b"a", b"b", b"a")
    last_ts = s.state().last_ts
    assert s.purge() == 3
    # purge(0): FirstSeq = LastSeq+1, FirstTime zero, LastTime untouched.
    assert s.state() == StoreState(0, 0, 4, 0, 3, last_ts, 0, 0)
    assert s.append(b"a", b"", b"")[0] == 4


def test_removing_first_skips_interior_deletes() -> None:
    s = make()
    fill(s, *[b"a"] * 6)
    assert s.remove(2) and s.remove(3)
    assert s.deleted() == [2, 3]
    assert s.remove(1)
    # updateFirstSeq walks to the next live message and drops the dmap entries below it.
    assert (s.first_seq, s.deleted(), s.state().num_deleted) == (4, [], 0)
    assert not s.remove(1) and not s.remove(99)


def test_removing_last_keeps_last_seq_and_load_last_all_is_empty() -> None:
    s = make()
    fill(s, b"a", b"b", b"a")
    assert s.remove(3)
    st = s.state()
    assert (st.last_seq, st.msgs, s.deleted()) == (3, 2, [3])
    # loadLastLocked: "" / ">" read msgs[LastSeq] only (filestore's LoadLastMsg too).
    assert s.load_last(b">") is None
    assert s.load_last(b"") is None
    last_a = s.load_last(b"a")
    assert last_a is not None and last_a.seq == 1
    last_any = s.load_last(b"*")
    assert last_any is not None and last_any.seq == 2


def test_removing_everything_one_by_one_is_like_purge() -> None:
    s = make()
    fill(s, b"a", b"b")
    s.remove(2)
    s.remove(1)
    st = s.state()
    assert (st.first_seq, st.last_seq, st.first_ts, st.num_deleted, st.num_subjects) == (3, 2, 0, 0, 0)


# --- compact


def test_compact() -> None:
    s = make()
    fill(s, *[b"a", b"b"] * 5)
    assert s.compact(0) == 10  # Compact(0) is Purge()
    s = make()
    fill(s, *[b"a", b"b"] * 5)
    s.remove(5)
    s.remove(6)
    assert s.compact(5) == 4
    assert (s.first_seq, s.deleted()) == (7, [])  # first live at or after seq
    assert s.compact(3) == 0  # FirstSeq > seq: nothing
    # Past the end: purge and line up so the next message gets seq.
    assert s.compact(50) == 4
    assert (s.first_seq, s.last_seq, s.msgs) == (50, 49, 0)
    assert s.append(b"a", b"", b"")[0] == 50


# --- PurgeEx


def test_purge_ex_sequence_one_and_all_subjects() -> None:
    s = make()
    fill(s, *[b"a", b"b"] * 5)
    assert s.purge_ex(b"a", 1, 0) == 0  # "purge up to but not including 1"
    assert s.purge_ex(None, 4, 3) == 3  # no subject and seq > 1: Compact(seq), keep ignored
    assert s.first_seq == 4
    assert s.purge_ex(b">", 0, 2) == 5  # keep the newest 2 of everything
    assert [s.load(q) is not None for q in (9, 10)] == [True, True]
    assert s.purge_ex(b"", 0, 0) == 2  # plain purge
    assert (s.first_seq, s.last_seq) == (11, 10)


def test_purge_ex_keep_counts_all_matching_subjects() -> None:
    s = make()
    fill(s, b"k.1", b"k.2", b"k.1", b"k.2", b"k.1", b"other")
    # keep is over the whole filter, not per subject: 5 match, keep 2 -> purge the 3 oldest.
    assert s.purge_ex(b"k.*", 0, 2) == 3
    assert s.subjects_totals(b">") == {b"k.2": 1, b"k.1": 1, b"other": 1}
    assert s.purge_ex(b"k.*", 0, 5) == 0  # keep >= matching: nothing


def test_purge_ex_sequence_and_keep_together() -> None:
    s = make()
    fill(s, *[b"a"] * 10)
    # maxp = total - keep = 7; only seqs < 5 qualify, so 4 go.
    assert s.purge_ex(b"a", 5, 3) == 4
    assert s.first_seq == 5
    # maxp = 6 - 4 = 2, both below 9.
    assert s.purge_ex(b"a", 9, 4) == 2
    assert s.first_seq == 7


def test_purge_ex_interior_subject_leaves_deletes() -> None:
    s = make()
    fill(s, b"a", b"b", b"a", b"b")
    assert s.purge_ex(b"b", 0, 0) == 2
    assert (s.first_seq, s.last_seq, s.deleted()) == (1, 4, [2, 4])


# --- storeRawMsg limits


def test_discard_old_limits() -> None:
    s = make(max_msgs=3)
    fill(s, *[b"a"] * 5)
    assert (s.first_seq, s.msgs) == (3, 3)
    s = make(max_bytes=3 * 17)  # each message is 1 + 0 + 0 + 16 bytes
    fill(s, *[b"a"] * 5, data=b"")
    assert (s.first_seq, s.bytes) == (3, 51)


def test_discard_new_max_msgs_and_bytes() -> None:
    s = make(max_msgs=2, discard_new=True)
    fill(s, b"a", b"b")
    with pytest.raises(MaxMsgsExceeded):
        s.append(b"c", b"", b"")
    assert s.msgs == 2 and s.last_seq == 2
    s = make(max_bytes=40, discard_new=True)
    s.append(b"a", b"", b"")  # 17
    s.append(b"a", b"", b"123456")  # 23 -> 40, exactly at the limit is fine
    with pytest.raises(MaxBytesExceeded):
        s.append(b"a", b"", b"")


def test_discard_new_at_subject_limit_replaces() -> None:
    # asl: at max_msgs_per_subject the new message replaces the subject's oldest, so the stream-wide
    # checks do not reject it.
    s = make(max_msgs=2, max_msgs_per_subject=1, discard_new=True)
    fill(s, b"a", b"b")
    assert s.append(b"a", b"", b"")[0] == 3
    assert s.subjects_totals(b">") == {b"a": 1, b"b": 1}
    with pytest.raises(MaxMsgsExceeded):
        s.append(b"c", b"", b"")
    # Bytes: replacing only helps if the dropped message is at least as large as the new one.
    s = make(max_bytes=40, max_msgs_per_subject=1, discard_new=True)
    s.append(b"a", b"", b"")  # 17
    s.append(b"b", b"", b"123456")  # 23 -> 40
    with pytest.raises(MaxBytesExceeded):
        s.append(b"a", b"", b"1")  # 18 > the 17 it would replace
    assert s.append(b"a", b"", b"")[0] == 3  # same size: allowed
    assert s.append(b"b", b"", b"12345")[0] == 4  # smaller than the 23 it replaces
    assert s.bytes == 17 + 22


def test_discard_new_per_subject() -> None:
    s = make(max_msgs_per_subject=2, discard_new=True, discard_new_per_subject=True)
    fill(s, b"a", b"a")
    with pytest.raises(MaxMsgsPerSubjectExceeded):
        s.append(b"a", b"", b"")
    # Rollups pass: they purge the subject after storing (storeRawMsg checks Nats-Rollup).
    assert s.append(b"a", b"NATS/1.0\r\nNats-Rollup: sub\r\n\r\n", b"")[0] == 3
    # An empty rollup value does not count (len(sliceHeader(...)) == 0).
    with pytest.raises(MaxMsgsPerSubjectExceeded):
        s.append(b"a", b"NATS/1.0\r\nNats-Rollup:\r\n\r\n", b"")
    # Without discard new, discard_new_per_subject does nothing: the oldest of the subject goes.
    s = make(max_msgs_per_subject=1, discard_new_per_subject=True)
    fill(s, b"a", b"a")
    assert (s.first_seq, s.msgs) == (2, 1)


def test_max_msg_size() -> None:
    # stream.go: len(hdr) > max || len(msg) > max-len(hdr), i.e. hdr+msg > max.
    s = make(max_msg_size=5)
    s.append(b"a", b"12", b"345")
    with pytest.raises(MsgTooLarge) as exc:
        s.append(b"a", b"12", b"3456")
    assert exc.value.reason == "max_msg_size"
    assert s.msgs == 1


def test_file_record_too_large() -> None:
    # stream.go isFileStoreMsgTooLarge: file records above rlBadThresh (32 MiB) are refused.
    s = make(storage="file")
    limit = 32 * 1024 * 1024 - 30 - 1
    s.append(b"a", b"", b"x" * limit)
    with pytest.raises(MsgTooLarge) as exc:
        s.append(b"a", b"", b"x" * (limit + 1))
    assert exc.value.reason == "file_record"
    make().append(b"a", b"", b"x" * (limit + 1))  # memory storage has no such check


# --- UpdateConfig


def test_update_limits_enforces_at_once() -> None:
    s = make()
    fill(s, *[b"a", b"b", b"c"] * 4)
    s.update_limits(StoreLimits(max_msgs_per_subject=2))
    assert s.subjects_totals(b">") == {b"a": 2, b"b": 2, b"c": 2}
    assert s.deleted() == []  # removed 1..6, so first moved to 7
    s.update_limits(StoreLimits(max_msgs_per_subject=2, max_msgs=4))
    assert (s.first_seq, s.msgs) == (9, 4)
    # discard new: lowering max_msgs keeps what is there (enforceMsgLimit is DiscardOld only)...
    s.update_limits(StoreLimits(max_msgs=1, discard_new=True))
    assert s.msgs == 4
    # ...but per-subject limits always apply.
    s.update_limits(StoreLimits(max_msgs=1, discard_new=True, max_msgs_per_subject=1))
    assert s.subjects_totals(b">") == {b"a": 1, b"b": 1, b"c": 1}


# --- expireMsgs


def test_expiry_boundary_is_inclusive() -> None:
    clock = ManualClock()
    s = make(clock, max_age_ns=10 * SEC)
    t0 = clock.now_ns()
    s.append(b"a", b"", b"")
    clock.advance(10 * SEC - 1)
    assert s.msgs == 1
    clock.advance(1)  # ts <= now - MaxAge: expired exactly at ts + max_age
    assert s.msgs == 0
    st = s.state()
    assert (st.first_seq, st.last_seq, st.first_ts, st.last_ts) == (2, 1, 0, t0)


def test_expiry_stops_at_first_unexpired_message() -> None:
    clock = ManualClock()
    s = make(clock, max_age_ns=10 * SEC)
    s.append(b"a", b"", b"")  # t0
    clock.advance(-5 * SEC)
    s.append(b"b", b"", b"")  # t0 - 5s: older, but behind seq 1
    clock.advance(14 * SEC)  # t0 + 9s: neither expired
    assert s.msgs == 2
    clock.advance(1 * SEC)  # t0 + 10s: seq 1 expires, then seq 2 (ts t0-5s) follows
    assert s.msgs == 0


def test_expiry_is_driven_by_every_read() -> None:
    clock = ManualClock()
    s = make(clock, max_age_ns=SEC)
    fill(s, b"a", b"b")
    clock.advance(SEC)
    assert s.load(1) is None
    assert s.load_next(b">", 0) is None
    assert s.num_pending(0, b">") == 0


def test_raising_max_age_later_expires_by_new_value() -> None:
    clock = ManualClock()
    s = make(clock)
    s.append(b"a", b"", b"")
    clock.advance(5 * SEC)
    s.update_limits(StoreLimits(max_age_ns=5 * SEC))
    assert s.msgs == 0


# --- GetSeqFromTime


def test_seq_from_time() -> None:
    clock = ManualClock()
    s = make(clock)
    assert s.seq_from_time(0) == 1  # empty: LastSeq + 1
    t = []
    for _ in range(6):
        t.append(clock.now_ns())
        s.append(b"a", b"", b"")
        clock.advance(SEC)
    s.remove(3)
    s.remove(4)
    assert s.seq_from_time(0) == 1
    assert s.seq_from_time(t[0]) == 1
    assert s.seq_from_time(t[1] + 1) == 5  # skips the deleted 3 and 4
    assert s.seq_from_time(t[5]) == 6
    assert s.seq_from_time(t[5] + 1) == 7


# --- MultiLastSeqs / NumPending / SubjectsTotals


def test_multi_last_seqs() -> None:
    s = make()
    fill(s, b"k.1", b"k.2", b"k.1", b"j.1", b"k.2")
    assert s.multi_last_seqs([b">"], 0, 0) == [3, 4, 5]
    assert s.multi_last_seqs([b"k.*", b"k.1"], 0, 0) == [3, 5]  # de-duplicated
    assert s.multi_last_seqs([b"k.*"], 4, 0) == [2, 3]  # at or below max_seq
    assert s.multi_last_seqs([b""], 0, 0) == []  # stree.Match matches nothing for ""
    with pytest.raises(TooManyResults):
        s.multi_last_seqs([b"k.*", b"j.*"], 0, 2)
    assert s.multi_last_seqs([b"k.*"], 0, 2) == [3, 5]
    assert make().multi_last_seqs([b">"], 0, 1) == []


def test_num_pending_and_totals() -> None:
    s = make()
    fill(s, b"k.1", b"k.2", b"k.1", b"j.1", b"k.2")
    assert s.num_pending(0, b"k.*") == 4
    assert s.num_pending(3, b"k.*") == 2
    assert s.num_pending(3, b"k.*", last_per_subject=True) == 2
    assert s.num_pending(4, b">", last_per_subject=True) == 2
    assert s.num_pending(6, b">") == 0
    assert s.subjects_totals(b"k.*") == {b"k.1": 2, b"k.2": 2}
    assert s.subjects_totals(b"") == s.subjects_totals(b">")
    assert s.subjects_state(b"k.2") == {b"k.2": (2, 2, 5)}
    assert s.last_seq_for_subject(b"k.1") == 3 and s.last_seq_for_subject(b"nope") == 0


# --- SkipMsg / SkipMsgNoInterest / SkipMsgs


def test_skip_msgs() -> None:
    clock = ManualClock()
    s = make(clock)
    assert s.skip_msg() == 1  # empty: FirstSeq moves past it
    assert (s.first_seq, s.last_seq, s.state().last_ts) == (2, 1, clock.now_ns())
    t0 = clock.now_ns()
    clock.advance(SEC)
    s.append(b"a", b"", b"")
    clock.advance(SEC)
    assert s.skip_msg() == 3  # not empty: an interior delete; LastTime kept (already set)
    assert (s.deleted(), s.state().last_ts) == ([3], t0 + SEC)
    assert s.skip_msg(no_interest=True) == 4  # SkipMsgNoInterest always moves LastTime
    assert s.state().last_ts == clock.now_ns()
    with pytest.raises(SequenceMismatch):
        s.skip_msg(9)
    assert s.skip_msgs(5, 3) == 7
    assert s.deleted() == [3, 4, 5, 6, 7]
