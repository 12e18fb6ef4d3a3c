"""``read_log(path, runs=True)`` (a restart's reader: consecutive ``Append`` records as
``AppendRun`` columns, decoded inline) against ``read_log(path)`` (one ``decode`` per
record): the same records in the same order, and the same damage report where a record is
torn, corrupt or a malformed ``Append``."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsemu.store.limits import StoreLimits
from jsemu.store.records import Append, AppendRun, Purge, Record, Remove, Skip, UpdateLimits
from jsemu.store.wal import WriteAheadLog, read_log

_APPEND = st.builds(
    Append,
    st.sampled_from([b"a", b"kv.k1", b"s.\xff"]),
    st.sampled_from([b"", b"NATS/1.0\r\nX: 1\r\n\r\n"]),
    st.binary(max_size=20),
    st.integers(1, 2**63 - 1),
)
_OTHER = st.one_of(
    st.builds(Remove, st.integers(1, 50), st.booleans()),
    st.just(Purge()),
    st.builds(Skip, st.integers(0, 50), st.booleans()),
    st.just(UpdateLimits(StoreLimits(max_msgs=5))),
)
_RECORDS = st.lists(st.one_of(_APPEND, _APPEND, _APPEND, _OTHER), max_size=40)
# Long stretches of appends of one shape (subject and body lengths, no headers): the frames a
# kill leaves behind, one record per publish since the last compaction.
_SHAPED = st.builds(
    Append,
    st.sampled_from([b"a", b"b", b"a", b"kv"]),
    st.sampled_from([b"", b"", b"", b"", b"NATS/1.0\r\n\r\n"]),
    st.sampled_from([b"abc", b"xyz", b"abc", b"abc", b"", b"four"]),
    st.integers(1, 2**63 - 1),
)
_SHAPED_RUNS = st.lists(
    st.one_of(st.tuples(_SHAPED, st.integers(1, 80)), st.tuples(_OTHER, st.just(1))), min_size=1, max_size=12
).map(lambda blocks: [record for record, times in blocks for record in [record] * times])


def _flat(records: list[Record]) -> list[Record]:
    return [one for r in records for one in (r.appends() if isinstance(r, AppendRun) else [r])]


def _write(path: Path, records: list[Record]) -> None:
    wal = WriteAheadLog(path)
    for record in records:
        wal.append(record)
    wal.close()


def _malformed_append(subject: bytes, data_len: int) -> bytes:
    """An ``Append`` frame with a good checksum and three bytes of data whose stated data
    length is wrong: past the record's end, or short of it (bytes left over)."""
    payload = b"\x01" + struct.pack("<I", len(subject)) + subject + struct.pack("<I", 0)
    payload += struct.pack("<I", data_len) + b"xyz" + struct.pack("<q", 1)
    return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


_DAMAGE = st.sampled_from(["none", "torn", "flip", "past", "short"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_RECORDS, cut=st.integers(0, 400), damage=_DAMAGE)
def test_runs_read_the_same_records_as_one_by_one(tmp_path: Path, records: list[Record], cut: int, damage: str) -> None:
    _check(tmp_path, records, cut, damage)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_SHAPED_RUNS, cut=st.integers(0, 12_000), damage=_DAMAGE)
def test_stretches_of_one_shape_read_the_same_records(
    tmp_path: Path, records: list[Record], cut: int, damage: str
) -> None:
    _check(tmp_path, records, cut, damage)


def _check(tmp_path: Path, records: list[Record], cut: int, damage: str) -> None:
    path = tmp_path / "msgs.wal"
    path.unlink(missing_ok=True)
    for extra in ("msgs.wal.damaged",):
        (tmp_path / extra).unlink(missing_ok=True)
    _write(path, records)
    data = path.read_bytes()
    if damage == "torn":
        data = data[: max(10, len(data) - cut)]
    elif damage == "flip" and len(data) > 12:
        at = 10 + cut % (len(data) - 10)
        data = data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1 :]
    elif damage in ("past", "short"):
        data += _malformed_append(b"a", 99 if damage == "past" else 1) + data[10:]
    copy = tmp_path / "copy.wal"
    path.write_bytes(data)
    copy.write_bytes(data)
    one_by_one = read_log(path)
    (tmp_path / "msgs.wal.damaged").unlink(missing_ok=True)
    in_runs = read_log(copy, runs=True)
    assert _flat(in_runs.records) == one_by_one.records
    assert in_runs.damage.replace("copy.wal", "msgs.wal") == one_by_one.damage
    assert not any(
        isinstance(a, AppendRun) and isinstance(b, AppendRun) for a, b in zip(in_runs.records, in_runs.records[1:])
    )


def test_a_corrupt_body_inside_a_long_stretch_ends_the_log_there(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    _write(path, [Append(b"a", b"", b"abc", i + 1) for i in range(300)])
    data = bytearray(path.read_bytes())
    frame = 8 + 21 + len(b"a") + len(b"abc")
    data[10 + 200 * frame + frame - 9] ^= 0x40  # the last byte of record 201's body
    path.write_bytes(bytes(data))
    contents = read_log(path, runs=True)
    assert sum(r.count for r in contents.records if isinstance(r, AppendRun)) == 200
    assert f"damaged at byte {10 + 200 * frame} (checksum mismatch)" in contents.damage
