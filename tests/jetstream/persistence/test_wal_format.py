"""The write-ahead log's saved format: versioned, free of Python names, and a store saved in
the old pickle format (format 1) still loads and is upgraded in place."""

from __future__ import annotations

import asyncio
import json
import pickle
import shutil
import struct
import zlib
from pathlib import Path
from typing import Any

import nats
import pytest

from jsemu.store import StoreLimits, StreamStore, new_store
from jsemu.store.records import Append, Compact, Purge, PurgeEx, Record, Remove, Skip, SkipMany, UpdateLimits
from jsemu.store.wal import FORMAT_VERSION, MAGIC, WriteAheadLog, replay

from .test_persistence import Proc

FIXTURE = Path(__file__).parent / "fixtures" / "wal_v1"


def _v1(entries: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> bytes:
    """A format 1 log, as jsemu wrote it before the records: pickled (method, args, kwargs)."""
    out = b""
    for entry in entries:
        payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        out += struct.pack("<II", len(payload), zlib.crc32(payload)) + payload
    return out


V1_ENTRIES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("append", (b"a.1", b"", b"one"), {"ts": 10}),
    ("append", (b"a.2", b"NATS/1.0\r\nX: 1\r\n\r\n", b"two"), {"ts": 11}),
    ("append", (b"a.1", b"", b"three"), {"ts": 12}),
    ("remove", (2,), {"erase": True}),
    ("skip_msg", (), {"no_interest": True}),
    ("skip_msgs", (0, 2), {}),
    ("append", (b"a.3", b"", b"four"), {"ts": 13}),
    ("purge_ex", (b"a.1", 0, 1), {}),
    ("update_limits", (StoreLimits(max_msgs=5),), {}),
    ("compact", (3,), {}),
    ("purge", (), {}),
    ("append", (b"b", b"", b"five"), {"ts": 14}),
]
V1_RECORDS: list[Record] = [
    Append(b"a.1", b"", b"one", 10),
    Append(b"a.2", b"NATS/1.0\r\nX: 1\r\n\r\n", b"two", 11),
    Append(b"a.1", b"", b"three", 12),
    Remove(2, True),
    Skip(0, True),
    SkipMany(0, 2),
    Append(b"a.3", b"", b"four", 13),
    PurgeEx(b"a.1", 0, 1),
    UpdateLimits(StoreLimits(max_msgs=5)),
    Compact(3),
    Purge(),
    Append(b"b", b"", b"five", 14),
]


def test_a_format_1_log_is_read_and_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    path.write_bytes(_v1(V1_ENTRIES))
    assert replay(path) == V1_RECORDS
    data = path.read_bytes()
    assert data.startswith(MAGIC + struct.pack("<H", FORMAT_VERSION))
    assert b"append" not in data and b"jsemu" not in data  # no Python names any more
    assert replay(path) == V1_RECORDS  # read back in format 2
    wal = WriteAheadLog(path)
    wal.append(Append(b"c", b"", b"six", 15))
    wal.close()
    assert replay(path) == [*V1_RECORDS, Append(b"c", b"", b"six", 15)]


def test_a_format_1_log_opened_for_writing_is_upgraded_first(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    path.write_bytes(_v1(V1_ENTRIES[:2]))
    wal = WriteAheadLog(path)
    wal.append(Purge())
    wal.close()
    assert replay(path) == [*V1_RECORDS[:2], Purge()]


def test_a_log_survives_renaming_the_store_methods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "msgs.wal"
    wal = WriteAheadLog(path)
    for record in V1_RECORDS:
        wal.append(record)
    wal.close()
    expected = new_store("memory")
    for record in V1_RECORDS:
        expected.apply(record)
    # Rename remove -> delete_msg, as a refactoring might; the saved log does not name it.
    monkeypatch.setattr(StreamStore, "delete_msg", StreamStore.remove, raising=False)
    monkeypatch.delattr(StreamStore, "remove")
    monkeypatch.setattr(Remove, "METHOD", "delete_msg")
    store = new_store("memory")
    for record in replay(path):
        store.apply(record)
    assert store.state() == expected.state()
    assert store.deleted() == expected.deleted()


def test_a_newer_format_is_refused_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    path.write_bytes(MAGIC + struct.pack("<H", FORMAT_VERSION + 1) + b"\x00" * 20)
    with pytest.raises(ValueError, match="newer"):
        replay(path)


def test_a_header_torn_by_a_crash_is_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "msgs.wal"
    path.write_bytes(MAGIC[:5])  # not the magic: read as a (torn) format 1 log
    assert replay(path) == []
    path.write_bytes(MAGIC + b"\x02")
    assert replay(path) == []
    assert path.read_bytes() == b""


async def _state(port: int) -> dict[str, Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")

    async def api(subject: str, body: Any) -> Any:
        return json.loads((await nc.request(subject, json.dumps(body).encode(), timeout=5)).data)

    res = {}
    for name in ("F", "R"):
        info = await api(f"$JS.API.STREAM.INFO.{name}", {"deleted_details": True, "subjects_filter": ">"})
        st = info["state"]
        msgs = [
            await api(f"$JS.API.STREAM.MSG.GET.{name}", {"seq": q}) for q in range(st["first_seq"], st["last_seq"] + 1)
        ]
        res[name] = {"state": st, "config": info["config"], "msgs": msgs}
    await nc.close()
    return res


def test_a_store_dir_saved_by_the_old_jsemu_still_loads(tmp_path: Path) -> None:
    """``fixtures/wal_v1``: written by jsemu before the records (see make_fixture.py there)."""
    store = tmp_path / "store"
    shutil.copytree(FIXTURE / "store", store)
    expected = json.loads((FIXTURE / "restored.json").read_text())
    for _ in range(2):  # the first start upgrades the logs, the second reads format 2
        proc = Proc("jsemu", store)
        try:
            assert asyncio.run(_state(proc.port)) == expected
        finally:
            proc.stop()
        for wal in store.glob("jetstream/*/streams/*/msgs.wal"):
            assert wal.read_bytes().startswith(MAGIC)
