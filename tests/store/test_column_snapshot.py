"""The compacted log's column records (``store/column_snapshot.py``): a store written as
columns and loaded back in bulk is the store it was, whatever history made it (publishes,
deletes, purges, expiries, compactions and restarts drawn by hypothesis against a store that
never restarted); a record that does not add up, or a damaged one in the log, is detected
and reported as the log reports a torn record; a log written in format 2 (only one-by-one
records) still loads, and its first compaction rewrites it as format 3."""

from __future__ import annotations

import struct
import zlib
from array import array
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jsemu.jetstream.cluster.replicas import replicated_store
from jsemu.store import ManualClock, Store, StoreError, StoreLimits, compaction, new_store
from jsemu.store.column_snapshot import COLUMNS_CODE, Columns, decode_columns
from jsemu.store.compaction import CHECKPOINT_BYTES, CompactingLog, state_records
from jsemu.store.records import Append, AppendRun, Compact, Record, Remove, SkipMany, UpdateLimits, UpdateLimitsAt
from jsemu.store.wal import FORMAT_VERSION, MAGIC, WriteAheadLog, log_bytes, read_log

SUBJECTS = [b"a", b"b", b"c.d", b"e.f.g"]
HDRS = [b"", b"NATS/1.0\r\nNats-Msg-Id: x\r\n\r\n", b"NATS/1.0\r\nNats-TTL: 5s\r\n\r\n"]
SECOND = 1_000_000_000


def _observed(store: Any) -> tuple[Any, ...]:
    state = store.state()
    if store.load(store.last_seq) is None:
        # A skipped or removed last sequence's time is when that ran, not part of the records.
        state = state._replace(last_ts=0) if hasattr(state, "_replace") else _replace(state)
    msgs = [(m.seq, m.subject, m.hdr, m.data, m.ts) for m in (store.load(s) for s in range(1, store.last_seq + 2)) if m]
    totals = store.subjects_totals(b">")
    lasts = {s: store.load_last(s).seq for s in totals}  # type: ignore[union-attr]
    return state, store.deleted(), msgs, store.limits, totals, lasts, store.next_expiry()


def _replace(state: Any) -> Any:
    from dataclasses import replace

    return replace(state, last_ts=0)


def _replay(records: list[Record], store: Store) -> int:
    """``StreamFiles._replay`` for one store: runs in bulk where taken, else one by one."""
    bulk = 0
    for record in records:
        if isinstance(record, (AppendRun, Columns)) and store.apply(record):
            bulk += isinstance(record, Columns)
            continue
        ones = (
            record.appends(store.last_seq)
            if isinstance(record, Columns)
            else record.appends()
            if isinstance(record, AppendRun)
            else [record]
        )
        for one in ones:
            try:
                store.apply(one)
            except StoreError:
                pass
    return bulk


def _logging_store(storage: str, limits: StoreLimits, clock: ManualClock, wal: WriteAheadLog) -> Store:
    store = replicated_store(storage, limits, clock)
    store.replicas = SimpleNamespace(leader=SimpleNamespace(store=store), record=wal.append)  # type: ignore[attr-defined]
    return store


# --- a history against a store that never restarts --------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.sampled_from(SUBJECTS), st.sampled_from(HDRS), st.binary(max_size=5)),
        st.tuples(st.just("append"), st.sampled_from(SUBJECTS), st.just(b""), st.sampled_from([b"", b"xyz"])),
        st.tuples(st.just("remove"), st.integers(1, 60)),
        st.tuples(st.just("skip"), st.integers(1, 3)),
        st.tuples(st.just("purge_ex"), st.sampled_from([None, b"a", b"c.*"]), st.integers(0, 40), st.integers(0, 2)),
        st.tuples(st.just("compact"), st.integers(0, 50)),
        st.just(("purge",)),
        st.tuples(st.just("limits"), st.sampled_from([0, 5, 12]), st.sampled_from([0, 2]), st.sampled_from([0, 3])),
        st.tuples(st.just("tick"), st.integers(1, 4)),
        st.just(("compact_log",)),
        st.just(("restart",)),
    ),
    max_size=70,
)


_LIFTED_MAX_AGE = [("append", b"a", b"", b""), ("limits", 0, 0, 3), ("limits", 0, 0, 0), ("tick", 3)]


@settings(max_examples=150, deadline=None)
@given(history=ops, storage=st.sampled_from(["memory", "file"]), chunk=st.sampled_from([3, 1 << 20]))
@example(history=_LIFTED_MAX_AGE, storage="memory", chunk=3)  # a lifted max_age expires nothing on replay
@example(history=_LIFTED_MAX_AGE, storage="file", chunk=3)
@example(history=[*_LIFTED_MAX_AGE, ("restart",), ("tick", 1)], storage="file", chunk=1 << 20)
def test_a_store_restarted_through_its_log_is_the_store_that_never_stopped(
    tmp_path_factory: pytest.TempPathFactory, history: list[tuple[Any, ...]], storage: str, chunk: int
) -> None:
    path = tmp_path_factory.mktemp("wal") / "msgs.wal"
    clock = ManualClock(1_000 * SECOND)
    model = new_store(storage, StoreLimits(), clock)
    current: list[Store] = []  # the store the log compacts (the one since the last restart)
    wal = CompactingLog(path, lambda: current[-1])
    live = _logging_store(storage, StoreLimits(), clock, wal)
    current.append(live)
    wal.start()
    original = compaction.CHUNK_MSGS
    compaction.CHUNK_MSGS = chunk  # small chunks: subjects and gaps span several records
    try:
        for op in history:
            kind, args = op[0], op[1:]
            if kind == "tick":
                clock.advance(args[0] * SECOND)
                continue
            if kind == "compact_log":
                wal.compact()
                continue
            if kind == "restart":
                wal.close()
                limits = live.limits
                wal = CompactingLog(path, lambda: current[-1], read_log(path).columns_end)
                live = _logging_store(storage, StoreLimits(), clock, wal)
                current.append(live)
                live.apply(UpdateLimits(limits))  # as a new stream starts under its config
                _replay(read_log(path, runs=True).records, live)
                continue
            for store in (model, live):
                try:
                    if kind == "append":
                        store.append(*args)
                    elif kind == "remove":
                        store.remove(*args)
                    elif kind == "skip":
                        store.skip_msgs(0, *args)
                    elif kind == "purge_ex":
                        store.purge_ex(*args)
                    elif kind == "compact":
                        store.compact(*args)
                    elif kind == "purge":
                        store.purge()
                    else:
                        max_msgs, per_subject, age = args
                        store.update_limits(
                            StoreLimits(
                                max_msgs=max_msgs,
                                max_msgs_per_subject=per_subject,
                                max_age_ns=age * SECOND,
                                allow_msg_ttl=True,
                            )
                        )
                except StoreError:
                    pass
            assert _observed(live) == _observed(model)
        wal.close()
        restarted = new_store(storage, StoreLimits(), clock)
        restarted.apply(UpdateLimits(live.limits))
        _replay(read_log(path, runs=True).records, restarted)
        assert _observed(restarted) == _observed(model)
    finally:
        compaction.CHUNK_MSGS = original
        wal.close()


# --- the bulk load is the one-by-one replay ---------------------------------------------------


def _store_with(n: int, subjects: int, gaps: int = 0, hdr_every: int = 0) -> Store:
    store = new_store("file", StoreLimits(), ManualClock(5 * SECOND))
    for i in range(n):
        hdr = b"NATS/1.0\r\nX: %d\r\n\r\n" % i if hdr_every and i % hdr_every == 0 else b""
        store.append(b"s.%d" % (i % subjects), hdr, b"%d" % i)
    for seq in range(3, n, gaps) if gaps else ():
        store.remove(seq)
    return store


@pytest.mark.parametrize(
    ("n", "subjects", "gaps", "hdr_every"),
    [(5000, 1, 0, 0), (5000, 5000, 0, 0), (5000, 7, 0, 3), (5000, 3, 4, 0), (300, 2, 2, 5), (1, 1, 0, 0)],
)
def test_loading_columns_in_bulk_is_replaying_them_one_by_one(n: int, subjects: int, gaps: int, hdr_every: int) -> None:
    source = _store_with(n, subjects, gaps, hdr_every)
    records = list(state_records(source))
    assert any(isinstance(r, Columns) for r in records)
    bulk = new_store("file", StoreLimits(), source.clock)
    assert _replay(records, bulk) == sum(isinstance(r, Columns) for r in records)
    one_by_one = new_store("file", StoreLimits(), source.clock)
    for record in records:
        for one in record.appends(one_by_one.last_seq) if isinstance(record, Columns) else [record]:
            one_by_one.apply(one)
    assert _observed(bulk) == _observed(one_by_one) == _observed(source)


def test_a_store_under_limits_takes_the_columns_one_by_one() -> None:
    source = _store_with(20, 2)
    chunk = next(r for r in state_records(source) if isinstance(r, Columns))
    limited = new_store("file", StoreLimits(max_msgs=5), source.clock)
    assert limited.load_columns(chunk) is False
    assert limited.state().msgs == 0  # nothing done: the caller replays it one by one


def test_a_replicated_store_takes_columns_only_as_a_replay() -> None:
    chunk = next(r for r in state_records(_store_with(10, 1)) if isinstance(r, Columns))
    store = replicated_store("file", StoreLimits())
    assert store.load_columns(chunk) is False  # a call of its own would not be logged
    assert store.apply(chunk) is True
    assert store.state().msgs == 10


# --- the record's encoding and its checks -----------------------------------------------------


@pytest.mark.parametrize(("subjects", "gaps", "hdr_every"), [(1, 0, 0), (3, 0, 2), (300, 5, 0), (4, 3, 7)])
def test_columns_round_trip(subjects: int, gaps: int, hdr_every: int) -> None:
    chunk = next(r for r in state_records(_store_with(600, subjects, gaps, hdr_every)) if isinstance(r, Columns))
    data = chunk.encode()
    assert data[0] == COLUMNS_CODE
    assert decode_columns(data) == chunk
    assert decode_columns(b"xx" + data + b"yy", 2, 2 + len(data)) == chunk


def _chunk_bytes() -> bytes:
    chunk = next(r for r in state_records(_store_with(40, 3, 0, 4)) if isinstance(r, Columns))
    return chunk.encode()


def _with(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


_HEAD = 11  # code, flags, width, n, k
BAD = {
    "truncated": lambda d: d[:-1],
    "bytes left over": lambda d: d + b"\x00",
    "no header": lambda d: d[:5],
    "unknown flag": lambda d: _with(d, 1, "<B", 0x80),
    "bad width": lambda d: _with(d, 2, "<B", 3),
    "no messages": lambda d: _with(d, 3, "<I", 0),
    "more subjects than messages": lambda d: _with(d, 7, "<I", 41),
    "sequence 0": lambda d: _with(d, _HEAD, "<Q", 0),
    "sequences out of order": lambda d: _with(d, _HEAD + 8, "<Q", 40),
    "last before first": lambda d: _with(d, _HEAD + 39 * 8, "<Q", 2),
    "a subject number past the table": lambda d: _with(d, _HEAD + 80 * 8 + 12 + 9, "<B", 3),
    "counts that do not add up": lambda d: _with(d, _HEAD + 80 * 8 + 12 + 9 + 40, "<I", 99),
}


@pytest.mark.parametrize("damage", sorted(BAD))
def test_a_record_that_does_not_add_up_is_refused(damage: str) -> None:
    data = _chunk_bytes()
    assert decode_columns(data).table == [b"s.0", b"s.1", b"s.2"]
    with pytest.raises(ValueError):
        decode_columns(BAD[damage](data))


def test_a_damaged_column_record_ends_the_log_like_a_torn_one(tmp_path: Path) -> None:
    """A flipped byte inside the columns fails the record's checksum: the records before it
    are kept, the rest is set aside and reported in one line."""
    source = _store_with(50, 2)
    records = [UpdateLimits(StoreLimits()), *state_records(source)]
    path = tmp_path / "msgs.wal"
    path.write_bytes(log_bytes(records))
    good = read_log(path, runs=True)
    assert good.damage == "" and good.columns_end == len(path.read_bytes()) - _tail_bytes(records)
    data = bytearray(path.read_bytes())
    at = data.index(b"s.1", 40)  # inside the Columns record's subject table
    data[at] ^= 0x20
    path.write_bytes(bytes(data))
    contents = read_log(path, runs=True)
    assert "checksum mismatch" in contents.damage and "kept 3 records" in contents.damage
    assert not any(isinstance(r, Columns) for r in contents.records)
    assert (tmp_path / "msgs.wal.damaged").exists()


def _tail_bytes(records: list[Record]) -> int:
    """Bytes of the records after the last Columns record (framed)."""
    last = max(i for i, r in enumerate(records) if isinstance(r, Columns))
    return sum(8 + len(r.encode()) for r in records[last + 1 :])


def test_a_column_record_with_a_good_checksum_that_does_not_add_up_is_damage(tmp_path: Path) -> None:
    payload = BAD["counts that do not add up"](_chunk_bytes())
    path = tmp_path / "msgs.wal"
    path.write_bytes(
        MAGIC + struct.pack("<H", FORMAT_VERSION) + struct.pack("<II", len(payload), zlib.crc32(payload)) + payload
    )
    contents = read_log(path, runs=True)
    assert "undecodable record" in contents.damage and contents.records == []


# --- format 2 logs and the compaction that moves them on --------------------------------------


def test_a_format_2_log_loads_and_is_rewritten_in_the_current_format_at_its_compaction(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    old = [UpdateLimits(StoreLimits())] + [
        Append(b"s.%d" % (i % 3), b"", b"v%d" % i, (i + 1) * SECOND) for i in range(30)
    ]
    old += [Remove(4), SkipMany(0, 2), Append(b"t", b"NATS/1.0\r\nX: 1\r\n\r\n", b"h", 99 * SECOND)]
    path.write_bytes(MAGIC + struct.pack("<H", 2) + log_bytes(old)[len(MAGIC) + 2 :])
    expected = new_store("file", StoreLimits(), ManualClock(SECOND))
    for record in old:
        expected.apply(record)
    loaded = new_store("file", StoreLimits(), ManualClock(SECOND))
    contents = read_log(path, runs=True)
    assert contents.damage == "" and contents.columns_end == 0
    _replay(contents.records, loaded)
    assert _observed(loaded) == _observed(expected)
    wal = CompactingLog(path, lambda: loaded, contents.columns_end)
    wal.append(Append(b"t", b"", b"more", 100 * SECOND))  # a format 2 log takes records as it is
    loaded.append(b"t", b"", b"more", 100 * SECOND)
    assert path.read_bytes()[len(MAGIC) : len(MAGIC) + 2] == struct.pack("<H", 2)
    wal.compact()
    wal.close()
    assert path.read_bytes()[len(MAGIC) : len(MAGIC) + 2] == struct.pack("<H", FORMAT_VERSION)
    again = new_store("file", StoreLimits(), ManualClock(SECOND))
    contents = read_log(path, runs=True)
    assert contents.columns_end > 0
    assert _replay(contents.records, again) == 1
    assert _observed(again) == _observed(loaded)


def test_a_clean_stop_compacts_only_a_tail_worth_it(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    store = new_store("file", StoreLimits(), ManualClock(SECOND))
    wal = CompactingLog(path, lambda: store)
    wal.start()
    for _ in range(10):
        _, ts = store.append(b"s", b"", b"x")
        wal.append(Append(b"s", b"", b"x", ts))
    before = path.read_bytes()
    wal.checkpoint()
    assert path.read_bytes() == before  # a few records: replayed quicker than rewritten
    payload = b"y" * 1000
    while wal.size - len(before) <= CHECKPOINT_BYTES:
        _, ts = store.append(b"s", b"", payload)
        wal.append(Append(b"s", b"", payload, ts))
    wal.checkpoint()
    wal.close()
    contents = read_log(path, runs=True)
    assert contents.columns_end == len(path.read_bytes()) - _tail_bytes(contents.records)
    assert [type(r) for r in contents.records] == [UpdateLimitsAt, Compact, Columns, UpdateLimitsAt]


def test_columns_counts_and_table() -> None:
    chunk = Columns.of_live(
        range(5, 10), [b"a", b"b", b"a", b"c", b"b"], [b"1", (b"H", b"2"), b"3", b"4", b"5"], [1, 2, 3, 4, 5]
    )
    assert chunk.table == [b"a", b"b", b"c"]
    assert list(chunk.counts) == [2, 2, 1]
    assert chunk.grouped == array("Q", [5, 7, 6, 9, 8])
    assert chunk.hdrs == [b"", b"H", b"", b"", b""]
    assert chunk.bodies() == [b"1", (b"H", b"2"), b"3", b"4", b"5"]
    assert chunk.count == 5
