"""The write-ahead log's saved format: versioned, free of Python names, and a file without
its header is damage at byte 0 (reported in one line and set aside, like a torn record)."""

from __future__ import annotations

import json
import logging
import struct
import zlib
from pathlib import Path
from typing import Any

import nats
import pytest

import jsemu
from jsemu.store import StreamStore, new_store
from jsemu.store.limits import StoreLimits
from jsemu.store.records import (
    Append,
    Compact,
    Purge,
    PurgeEx,
    Record,
    Remove,
    Skip,
    SkipMany,
    UpdateLimits,
    UpdateLimitsAt,
)
from jsemu.store.wal import FORMAT_VERSION, MAGIC, WriteAheadLog, read_log

RECORDS: list[Record] = [
    Append(b"a.1", b"", b"one", 10),
    Append(b"a.2", b"NATS/1.0\r\nX: 1\r\n\r\n", b"two", 11),
    Append(b"a.1", b"", b"three", 12),
    Remove(2, True),
    Skip(0, True),
    SkipMany(0, 2),
    Append(b"a.3", b"", b"four", 13),
    PurgeEx(b"a.1", 0, 1),
    UpdateLimits(StoreLimits(max_msgs=5)),
    UpdateLimitsAt(StoreLimits(max_msgs=6), 15),
    Compact(3),
    Purge(),
    Append(b"b", b"", b"five", 14),
]

#: Records framed as a log body but with no file header: what a file that is not this
#: format's log looks like to the reader.
HEADERLESS = b"".join(
    struct.pack("<II", len(payload), zlib.crc32(payload)) + payload for payload in (b"\x80\x05stale", b"more")
)


def test_a_log_survives_renaming_the_store_methods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "msgs.wal"
    wal = WriteAheadLog(path)
    for record in RECORDS:
        wal.append(record)
    wal.close()
    assert path.read_bytes().startswith(MAGIC + struct.pack("<H", FORMAT_VERSION))
    assert b"append" not in path.read_bytes()  # no Python names
    expected = new_store("memory")
    for record in RECORDS:
        expected.apply(record)
    # Rename remove -> delete_msg, as a refactoring might; the saved log does not name it.
    monkeypatch.setattr(StreamStore, "delete_msg", StreamStore.remove, raising=False)
    monkeypatch.delattr(StreamStore, "remove")
    monkeypatch.setattr(Remove, "METHOD", "delete_msg")
    store = new_store("memory")
    for record in read_log(path).records:
        store.apply(record)
    assert store.state() == expected.state()
    assert store.deleted() == expected.deleted()


def test_a_newer_format_is_refused_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    path.write_bytes(MAGIC + struct.pack("<H", FORMAT_VERSION + 1) + b"\x00" * 20)
    with pytest.raises(ValueError, match="newer"):
        read_log(path)


def test_a_header_torn_by_a_crash_is_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    for torn in (MAGIC[:5], MAGIC + b"\x02"):
        path.write_bytes(torn)
        contents = read_log(path)
        assert (contents.records, contents.damage) == ([], "")
        assert path.read_bytes() == b""
        assert not (tmp_path / "msgs.wal.damaged").exists()


def test_a_file_without_the_header_is_damage_at_byte_0(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    path.write_bytes(HEADERLESS)
    contents = read_log(path)
    assert contents.records == []
    assert "damaged at byte 0 (no write-ahead log header)" in contents.damage
    assert f"kept 0 records before it, moved {len(HEADERLESS)} bytes" in contents.damage
    assert (tmp_path / "msgs.wal.damaged").read_bytes() == HEADERLESS
    assert path.read_bytes() == b""


def test_records_are_never_appended_to_a_file_without_the_header(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    path.write_bytes(HEADERLESS)
    wal = WriteAheadLog(path)
    wal.append(Purge())
    wal.close()
    assert (tmp_path / "msgs.wal.damaged").read_bytes() == HEADERLESS
    assert read_log(path).records == [Purge()]


async def test_a_stream_whose_log_has_no_header_comes_back_empty_with_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def names_and_msgs(url: str) -> tuple[list[str], int]:
        nc = await nats.connect(url)

        async def api(subject: str, body: Any = None) -> Any:
            data = b"" if body is None else json.dumps(body).encode()
            return json.loads((await nc.request(subject, data, timeout=5)).data)

        try:
            names = (await api("$JS.API.STREAM.NAMES"))["streams"]
            return names, (await api("$JS.API.STREAM.INFO.S"))["state"]["messages"]
        finally:
            await nc.close()

    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"])
        await js.publish("s", b"x")
        await nc.close()
    wal = tmp_path / "jetstream" / "$G" / "streams" / "S" / "msgs.wal"
    wal.write_bytes(HEADERLESS)
    with caplog.at_level(logging.WARNING, logger="jsemu"):
        async with jsemu.Server(store_dir=str(tmp_path)) as srv:
            assert await names_and_msgs(srv.url) == (["S"], 0)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "damaged at byte 0 (no write-ahead log header)" in warnings[0], warnings
    assert wal.with_name("msgs.wal.damaged").read_bytes() == HEADERLESS
