"""A replayed log, and a follower applying the leader's records late, expire by ``max_age`` and
TTLs what the leader had expired by the time of each record, not what is due by the clock of
the moment they apply them: a max_age lifted since expires nothing (nats-server removes an
expired message when it expires; a restart only applies the current config), a max_age
lowered expires from the time it was lowered. Limits are logged with their time
(``UpdateLimitsAt``); a log written before that (``UpdateLimits``, no time) still reads."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jsemu.jetstream.cluster.replicas import replicated_store
from jsemu.store import ManualClock, Store, StoreError, StoreLimits, new_store
from jsemu.store.column_snapshot import Columns
from jsemu.store.compaction import state_records
from jsemu.store.records import Append, AppendRun, Record, UpdateLimits, UpdateLimitsAt, decode
from jsemu.store.wal import log_bytes, read_log

SECOND = 1_000_000_000
TTL_5S = b"NATS/1.0\r\nNats-TTL: 5s\r\n\r\n"
TTL_NEVER = b"NATS/1.0\r\nNats-TTL: never\r\n\r\n"


def _limits(age_s: int, **kw: Any) -> StoreLimits:
    return StoreLimits(max_age_ns=age_s * SECOND, allow_msg_ttl=True, **kw)


#: Scripts: ("append", subject, hdr) | ("limits", StoreLimits) | ("tick", seconds) | ("remove", seq).
SCRIPTS: dict[str, list[tuple[Any, ...]]] = {
    "lifted": [("append", b"a", b""), ("limits", _limits(3)), ("limits", _limits(0)), ("tick", 3)],
    "lifted later": [("append", b"a", b""), ("limits", _limits(3)), ("tick", 2), ("limits", _limits(0)), ("tick", 9)],
    "lifted after it expired": [("append", b"a", b""), ("limits", _limits(3)), ("tick", 5), ("limits", _limits(0))],
    "an append between": [
        ("append", b"a", b""),
        ("limits", _limits(3)),
        ("tick", 1),
        ("append", b"b", b""),
        ("tick", 1),
        ("limits", _limits(0)),
        ("tick", 10),
        ("append", b"c", b""),
    ],
    "lowered": [
        ("limits", _limits(10)),
        ("append", b"a", b""),
        ("tick", 2),
        ("append", b"b", b""),
        ("tick", 2),
        ("limits", _limits(3)),  # a (4 s old) goes now, b (2 s) a second later
        ("append", b"c", b""),
        ("tick", 2),
        ("limits", _limits(0)),  # c stays
        ("tick", 20),
    ],
    "raised": [
        ("limits", _limits(3)),
        ("append", b"a", b""),
        ("tick", 2),
        ("limits", _limits(60)),
        ("tick", 30),
    ],
    "ttls with a lifted max_age": [
        ("limits", _limits(3)),
        ("append", b"t", TTL_5S),
        ("append", b"n", TTL_NEVER),
        ("append", b"p", b""),
        ("tick", 1),
        ("limits", _limits(0)),
        ("tick", 10),  # t's TTL is up; n and p stay
        ("append", b"t", TTL_5S),
        ("limits", _limits(2)),
        ("limits", _limits(0, max_msgs_per_subject=1)),
        ("tick", 3),
    ],
    "per subject under a lifted max_age": [
        ("limits", _limits(3)),
        ("append", b"a", b""),
        ("append", b"a", b""),
        ("tick", 1),
        ("remove", 1),
        ("limits", _limits(0, max_msgs_per_subject=1)),
        ("tick", 5),
    ],
}


def _observed(store: Store) -> tuple[Any, ...]:
    msgs = [(m.seq, m.subject, m.hdr, m.data, m.ts) for m in map(store.load, range(1, store.last_seq + 1)) if m]
    return store.state(), store.deleted(), msgs, store.limits, store.next_expiry()


def _leader(storage: str, clock: ManualClock, log: list[Record]) -> Store:
    store = replicated_store(storage, StoreLimits(), clock)
    store.replicas = SimpleNamespace(leader=SimpleNamespace(store=store), record=log.append)  # type: ignore[attr-defined]
    return store


def _run(script: list[tuple[Any, ...]], store: Store, clock: ManualClock) -> None:
    for op, *args in script:
        if op == "tick":
            clock.advance(args[0] * SECOND)
            continue
        try:
            if op == "append":
                store.append(args[0], args[1], b"x")
            elif op == "remove":
                store.remove(args[0])
            else:
                store.update_limits(args[0])
        except StoreError:
            pass
        store.state()  # what a reader sees now: the live store expires as it goes


def _replay(records: list[Record], store: Store) -> None:
    """``StreamFiles._replay`` for one store."""
    for record in records:
        if isinstance(record, (AppendRun, Columns)) and store.apply(record):
            continue
        ones: list[Record] = (
            list(record.appends(store.last_seq))
            if isinstance(record, Columns)
            else list(record.appends())
            if isinstance(record, AppendRun)
            else [record]
        )
        for one in ones:
            try:
                store.apply(one)
            except StoreError:
                pass


@pytest.mark.parametrize("storage", ["memory", "file"])
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_replayed_log_and_a_late_follower_expire_as_the_leader_did(tmp_path: Path, name: str, storage: str) -> None:
    clock = ManualClock(1_000 * SECOND)
    log: list[Record] = []
    leader = _leader(storage, clock, log)
    log.append(UpdateLimitsAt(leader.limits, clock.now_ns()))  # CompactingLog.start
    _run(SCRIPTS[name], leader, clock)
    clock.advance(SECOND)
    expected = _observed(leader)
    assert not any(isinstance(r, UpdateLimits) for r in log)  # limits are logged with their time

    path = tmp_path / "msgs.wal"
    path.write_bytes(log_bytes(log))
    restarted = new_store(storage, leader.limits, clock)  # a stream starts under its config
    _replay(read_log(path, runs=True).records, restarted)
    assert _observed(restarted) == expected

    follower = replicated_store(storage, StoreLimits(), clock)  # a follower caught up late
    for record in log:
        follower.apply(record)
    assert _observed(follower) == expected

    compacted = new_store(storage, leader.limits, clock)  # the log compacted, then replayed
    _replay(list(state_records(leader)), compacted)
    assert _observed(compacted) == expected


def test_limits_are_logged_with_the_leaders_time_and_followers_keep_it() -> None:
    clock = ManualClock(7 * SECOND)
    log: list[Record] = []
    leader = _leader("memory", clock, log)
    assert leader.update_limits(_limits(3)) == 7 * SECOND
    assert log == [UpdateLimitsAt(_limits(3), 7 * SECOND)]
    assert decode(log[0].encode()) == log[0]
    clock.advance(SECOND)
    follower = new_store("memory", StoreLimits(), clock)
    assert follower.apply(log[0]) == 7 * SECOND


def test_a_log_with_limits_without_their_time_still_replays() -> None:
    """``UpdateLimits`` (code 8) runs at the time of the records before it."""
    clock = ManualClock(1_000 * SECOND)
    records: list[Record] = [
        UpdateLimits(StoreLimits()),
        Append(b"a", b"", b"x", 1_000 * SECOND),
        UpdateLimits(_limits(3)),
        UpdateLimits(_limits(0)),
    ]
    data = log_bytes(records)
    assert data.count(bytes((UpdateLimits.CODE,))) >= 3
    clock.advance(10 * SECOND)
    store = new_store("file", StoreLimits(), clock)
    for record in [decode(r.encode()) for r in records]:
        store.apply(record)
    assert store.state().msgs == 1
    store.update_limits(_limits(3))  # by the store's own clock again: 10 s old
    assert store.state().msgs == 0
