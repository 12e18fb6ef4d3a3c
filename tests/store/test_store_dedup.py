"""DedupWindow against Go's checkMsgId / storeMsgId / purgeMsgIds (server/stream.go)."""

from __future__ import annotations

from jsemu.store import DedupWindow, ManualClock

SEC = 1_000_000_000


def test_window_boundary() -> None:
    clock = ManualClock()
    dd = DedupWindow(2 * SEC, clock)
    dd.record(b"id-1", 5, clock.now_ns())
    assert dd.lookup(b"id-1") == 5
    assert dd.lookup("id-1") == 5  # str and bytes ids are the same id
    clock.advance(2 * SEC - 1)
    assert dd.lookup(b"id-1") == 5
    clock.advance(1)  # purgeMsgIds: now - ts >= window drops it
    assert dd.lookup(b"id-1") is None
    assert len(dd) == 0


def test_disabled_and_empty_ids() -> None:
    clock = ManualClock()
    dd = DedupWindow(0, clock)  # storeMsgIdLocked: Duplicates <= 0 means disabled
    dd.record(b"x", 1, clock.now_ns())
    assert dd.lookup(b"x") is None
    dd.set_window(SEC)
    dd.record(b"", 2, clock.now_ns())  # checkMsgId ignores the empty id
    assert dd.lookup(b"") is None
    dd.record(b"x", 3, clock.now_ns())
    assert dd.lookup(b"x") == 3
    dd.set_window(0)
    assert dd.lookup(b"x") is None and len(dd) == 0


def test_rerecord_after_expiry_survives_old_entry_purge() -> None:
    clock = ManualClock()
    dd = DedupWindow(10, clock)
    dd.record(b"a", 1, clock.now_ns())
    clock.advance(10)
    dd.record(b"b", 2, clock.now_ns() - 5)  # recorded late: still in the queue behind nothing
    dd.record(b"a", 3, clock.now_ns())
    assert dd.lookup(b"a") == 3
    clock.advance(5)
    assert dd.lookup(b"b") is None
    assert dd.lookup(b"a") == 3
    clock.advance(5)
    assert dd.lookup(b"a") is None


def test_expiry_is_amortised_in_insertion_order() -> None:
    clock = ManualClock()
    dd = DedupWindow(100, clock)
    for i in range(1000):
        dd.record(b"%d" % i, i, clock.now_ns())
        clock.advance(1)
    # now = start + 1000; ids 0..900 have now - ts >= 100.
    assert len(dd) == 99
    assert dd.lookup(b"900") is None and dd.lookup(b"901") == 901
    dd.clear()
    assert len(dd) == 0
