"""Every store mutation is a typed record: none can be added without one, a follower that
applies the leader's records ends in the leader's state, and records survive the log's
encoding without any Python name in it."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any

import pytest

from jsemu.jetstream.cluster.replicas import ReplicatedStore, replicated_store
from jsemu.store import FLAVOURS, ManualClock, MemoryStore, Store, StoreError, StoreLimits, StoreReader, new_store
from jsemu.store.records import (
    RECORDS,
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
    decode,
)


def _members(proto: type) -> set[str]:
    return {n for n in vars(proto) if not n.startswith("_")}


READS = _members(StoreReader)
MUTATIONS = _members(Store)


def public(cls: type) -> set[str]:
    """The public methods and properties of a store class (not constants or data slots)."""
    return {
        n
        for n in dir(cls)
        if not n.startswith("_")
        and (inspect.isfunction(getattr(cls, n)) or isinstance(inspect.getattr_static(cls, n), property))
    }


def unregistered(cls: type) -> list[str]:
    """Public methods of ``cls`` that are neither a declared read nor a registered mutation."""
    out = []
    for name in sorted(public(cls)):
        if name in READS:
            continue
        if getattr(getattr(cls, name), "__mutation__", None) is None and name != "apply":
            out.append(name)
    return out


FLAVOUR_CLASSES = [*FLAVOURS.values(), *(type(replicated_store(s)) for s in FLAVOURS)]


@pytest.mark.parametrize("cls", FLAVOUR_CLASSES, ids=lambda c: c.__name__)
def test_every_public_method_is_a_read_or_a_recorded_mutation(cls: type) -> None:
    assert unregistered(cls) == []
    assert public(cls) == READS | MUTATIONS, "the Store protocol lists exactly what a store offers"


def test_an_unrecorded_mutator_is_caught() -> None:
    class Planted(MemoryStore):
        __slots__ = ()

        def drop_everything(self) -> None:
            self._reset_empty(self._last + 1, self._last)

    assert unregistered(Planted) == ["drop_everything"]


@pytest.mark.parametrize("cls", FLAVOUR_CLASSES, ids=lambda c: c.__name__)
def test_record_fields_are_the_method_parameters(cls: type) -> None:
    """So ``Record(*args, **kwargs)`` captures any call of the method, and ``apply`` replays it."""
    logged = []
    for name in MUTATIONS - {"apply"}:
        fn = getattr(cls, name)
        kind = getattr(fn, "__mutation__", None)
        if kind == "local":
            continue
        record: type[Record] = fn.__record__
        if kind == "batched":
            continue
        logged.append(record)
        assert record.METHOD == name
        params = list(inspect.signature(getattr(FLAVOURS["memory"], name)).parameters.values())[1:]
        fields = list(inspect.signature(record).parameters.values())
        assert [(p.name, p.default) for p in params] == [(f.name, f.default) for f in fields], name
    assert sorted(r.CODE for r in logged) == sorted(RECORDS)


@pytest.mark.parametrize("storage", sorted(FLAVOURS))
def test_replicated_store_logs_every_mutator_and_routes_batched_ones(storage: str) -> None:
    cls = type(replicated_store(storage))
    flavour = FLAVOURS[storage]
    for name in MUTATIONS:
        kind = getattr(getattr(flavour, name), "__mutation__", None)
        if kind == "logged":
            assert getattr(cls, name) is not getattr(flavour, name), f"{name} is not logged"
        elif kind == "batched":
            assert getattr(cls, name) is getattr(ReplicatedStore, name), f"{name} bypasses the log"


def _script(s: Store) -> None:
    """One of every mutation, with arguments that matter (ts, erase, keep, no_interest)."""
    for i in range(12):
        s.append(b"a.%d" % (i % 3), b"", b"v%d" % i)
    s.append(b"h", b"NATS/1.0\r\nX: 1\r\n\r\n", b"hdr")
    s.append_plain(b"a.9", b"plain")
    s.append_columns([b"a.1", b"b"], [b"c1", b"c2"])
    s.remove(5)
    s.remove(6, erase=True)
    s.skip_msg(0, no_interest=True)
    s.skip_msgs(0, 3)
    s.purge_ex(b"a.1", 0, 1)
    s.update_limits(StoreLimits(max_msgs_per_subject=2))
    s.compact(4)
    s.append(b"late", b"", b"x", ts=123)
    s.purge()
    s.append(b"after", b"", b"y")
    s.append_batch(
        [
            (b"b.1", b"", b"one", 0),
            (b"b.1", b"NATS/1.0\r\nX: 1\r\n\r\n", b"two", 1),
            (b"b.2", b"", b"3", 0),
            (b"b.3", b"", b"gone", 3),
        ]
    )
    s.restore_last_ts(4_321)


def _snapshot(s: Store) -> Any:
    st = s.state()
    msgs = [s.load(q) for q in range(st.first_seq, st.last_seq + 1)]
    return st, s.deleted(), s.limits, msgs


@pytest.mark.parametrize("storage", sorted(FLAVOURS))
def test_a_follower_applying_the_records_ends_in_the_leaders_state(storage: str) -> None:
    clock = ManualClock(1_000)
    leader = replicated_store(storage, StoreLimits(), clock)
    log: list[Record] = []
    leader.replicas = SimpleNamespace(leader=SimpleNamespace(store=leader), record=log.append)  # type: ignore[assignment]
    _script(leader)
    assert {type(r) for r in log} == set(RECORDS.values())
    clock.advance(5_000)  # a follower applies later: the leader's timestamps must travel
    follower = new_store(storage, StoreLimits(), clock)
    for record in log:
        follower.apply(record)
    assert _snapshot(follower) == _snapshot(leader)
    decoded = [decode(r.encode()) for r in log]
    assert decoded == log
    again = new_store(storage, StoreLimits(), clock)
    for record in decoded:
        again.apply(record)
    assert _snapshot(again) == _snapshot(leader)


EXAMPLES: list[Record] = [
    Append(b"s", b"", b"d", 5),
    Append(b"s.x", b"NATS/1.0\r\n\r\n", b"\x00" * 300, -1),
    Skip(),
    Skip(7, True),
    SkipMany(3, 4, True),
    Remove(3),
    Remove(9, True),
    Purge(),
    PurgeEx(None, 0, 2),
    PurgeEx(b"", 1, 0),
    PurgeEx(b"a.>", 3, 0),
    Compact(9),
    UpdateLimits(StoreLimits(3, 4, 5, 6, 7, True, False)),  # an older log's: still read
    UpdateLimitsAt(StoreLimits(3, 4, 5, 6, 7, True, False), 1_000),
    UpdateLimitsAt(StoreLimits(max_age_ns=9)),
]


@pytest.mark.parametrize("record", EXAMPLES, ids=repr)
def test_encoding_round_trips_without_python_names(record: Record) -> None:
    data = record.encode()
    assert data[0] == record.CODE
    assert decode(data) == record
    assert type(record).__name__.encode() not in data and record.METHOD.encode() not in data
    with pytest.raises(ValueError):
        decode(data + b"\x00")
    if len(data) > 1:
        with pytest.raises(ValueError):
            decode(data[:-1])


def test_unknown_record_types_are_refused() -> None:
    for bad in (b"", b"\x00", b"\xff"):
        with pytest.raises(ValueError):
            decode(bad)


def test_file_store_answers_live_in_the_file_store() -> None:
    """The differences callers used to special-case (msg delete, multi last, detailed state)."""
    mem, file = new_store("memory", first_seq=0), new_store("file", first_seq=0)
    assert mem.detailed_deleted() == [] and file.detailed_deleted() == [0]
    for s in (mem, file):
        s.append(b"a", b"", b"1")
        s.append(b"a", b"", b"2")
    assert mem.remove(9) is False
    with pytest.raises(StoreError, match="stream store EOF"):
        file.remove(9)
    with pytest.raises(StoreError, match="no message found"):
        file.remove(0)
    assert mem.multi_last_seqs([b">"], 5, 0) == [2]
    assert file.multi_last_seqs([b">"], 5, 0) == []
