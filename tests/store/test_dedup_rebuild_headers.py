"""The duplicate window rebuilt after a restart (``DedupWindow.rebuild``) skips its scan
when no stored message ever had headers (``may_have_headers``: a message without headers
carries no ``Nats-Msg-Id``). Every way a message with headers gets into a store must say so:
one at a time, a run of logged appends, a compacted log's columns."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from jsemu.store import DedupWindow, ManualClock, Store, StoreLimits, new_store
from jsemu.store.column_snapshot import Columns
from jsemu.store.compaction import state_records

SEC = 1_000_000_000
HDR = b"NATS/1.0\r\nNats-Msg-Id: m2\r\n\r\n"


def _one_by_one(store: Store) -> None:
    store.append(b"a", b"", b"1")
    store.append(b"a", HDR, b"2")
    store.append(b"a", b"", b"3")


def _run(store: Store) -> None:
    ts = store.clock.now_ns()
    assert store.append_run([b"a"] * 3, [b"", HDR, b""], [b"1", b"2", b"3"], [ts] * 3)


def _columns(store: Store) -> None:
    source = new_store("memory", StoreLimits(), store.clock)
    _one_by_one(source)
    (chunk,) = [r for r in state_records(source) if isinstance(r, Columns)]
    assert store.load_columns(chunk)


@pytest.mark.parametrize("fill", [_one_by_one, _run, _columns])
@pytest.mark.parametrize("storage", ["memory", "file"])
def test_an_id_stored_any_way_is_in_the_rebuilt_window(fill: Callable[[Store], None], storage: str) -> None:
    clock = ManualClock(10 * SEC)
    store = new_store(storage, StoreLimits(), clock)
    fill(store)
    assert store.may_have_headers
    window = DedupWindow(60 * SEC, clock)
    assert window.rebuild(store) == b""  # the last message has no id
    assert window.lookup(b"m2") == 2


@pytest.mark.parametrize("storage", ["memory", "file"])
def test_without_headers_the_rebuild_only_says_whether_the_last_message_is_there(storage: str) -> None:
    clock = ManualClock(10 * SEC)
    store = new_store(storage, StoreLimits(), clock)
    for i in range(3):
        store.append(b"a", b"", b"%d" % i)
    assert not store.may_have_headers
    assert DedupWindow(60 * SEC, clock).rebuild(store) == b""
    store.remove(3)
    assert DedupWindow(60 * SEC, clock).rebuild(store) is None
