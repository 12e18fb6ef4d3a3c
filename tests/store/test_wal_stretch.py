"""Stretches of same-shaped ``Append`` frames decoded as columns (``store/wal_stretch.py``)
read what the record loop reads, damage included: the checks of ``test_wal_runs.py`` again
with the stretch thresholds shrunk, so stretches of a few frames (and their windows growing
and starting over) occur in small logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsemu.store import wal, wal_stretch
from jsemu.store.records import Append, AppendRun, Record

from .test_wal_runs import _DAMAGE, _RECORDS, _SHAPED_RUNS, _check, _write


def _shrink(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(wal_stretch, "MIN_STRETCH", 2)
    mp.setattr(wal, "MIN_STRETCH", 2)
    mp.setattr(wal, "_STRETCH_FIRST", 2)
    mp.setattr(wal, "_STRETCH_MAX", 8)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_SHAPED_RUNS, cut=st.integers(0, 3000), damage=_DAMAGE)
def test_small_stretches_read_the_same_records(tmp_path: Path, records: list[Record], cut: int, damage: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        _shrink(mp)
        _check(tmp_path, records, cut, damage)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_RECORDS, damage=_DAMAGE)
def test_mixed_records_read_the_same_with_small_stretches(tmp_path: Path, records: list[Record], damage: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        _shrink(mp)
        _check(tmp_path, records, 13, damage)


def test_a_long_uniform_log_is_read_in_stretches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten thousand same-shaped appends come back as one run, through stretches (the record
    loop decodes at most the frames before the first stretch is tried)."""
    calls: list[int] = []
    real = wal_stretch.append_stretch

    def counted(data: bytes, view: memoryview, pos: int, limit: int) -> wal_stretch.Stretch | None:
        found = real(data, view, pos, limit)
        calls.append(0 if found is None else len(found[0]))
        return found

    monkeypatch.setattr(wal, "append_stretch", counted)
    path = tmp_path / "msgs.wal"
    appends = [Append(b"s.%d" % (i % 10), b"", b"v%03d" % (i % 1000), i + 1) for i in range(10_000)]
    _write(path, appends)
    contents = wal.read_log(path, runs=True)
    assert contents.damage == ""
    assert len(contents.records) == 1 and isinstance(contents.records[0], AppendRun)
    assert list(contents.records[0].appends()) == appends
    assert sum(calls) == 10_000 and len(calls) < 10


def test_a_flipped_byte_anywhere_ends_the_log_where_the_loop_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _shrink(monkeypatch)
    records: list[Record] = [Append(b"kv", b"", b"abc", i + 1) for i in range(12)]
    frame = (len(wal.log_bytes(records)) - 10) // 12
    for cut in range(2 * frame, 10 * frame):  # every byte of the frames in the second window
        _check(tmp_path, records, cut, "flip")


def test_frames_of_one_length_but_another_layout_are_not_one_stretch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame as long as its neighbours can still be laid out otherwise: headers where they
    have data, or a longer subject and a shorter body."""
    _shrink(monkeypatch)
    plain = Append(b"a", b"", b"0123456789abcdef", 1)  # 16 bytes of data
    with_hdr = Append(b"a", b"NATS/1.0\r\n\r\n", b"abcd", 2)  # 4 + 12 of header + 4 of data
    longer_subject = Append(b"abcde", b"", b"0123456789ab", 3)  # 4 more of subject, 4 less of data
    for pattern in ([plain, with_hdr], [plain, longer_subject], [plain, plain, with_hdr, plain, longer_subject]):
        _check(tmp_path, pattern * 6, 0, "none")
