"""Wildcard next/prev lookups that take a filter's remembered subjects (the match memo) or
the remembered verdicts of its walks are the lookups of a store that never remembered anything:
the memo goes when a subject comes or goes, a verdict belongs to one filter, and what one lookup
remembers serves every other query on that filter."""

from __future__ import annotations

import pytest

from jsemu.store import MemoryStore, Store, new_store, stream_store

from .store_model import matches


def _brute_next(msgs: dict[int, bytes], filter: bytes, start: int) -> int:
    return min((s for s, subj in msgs.items() if s >= start and matches(filter, subj)), default=0)


def _brute_prev(msgs: dict[int, bytes], filter: bytes, start: int) -> int:
    return max((s for s, subj in msgs.items() if s <= start and matches(filter, subj)), default=0)


def _check(store: Store, msgs: dict[int, bytes], filters: list[bytes]) -> None:
    last = max(msgs, default=0) + 2
    for f in filters:
        for start in range(1, last):
            got = store.load_next(f, start)
            assert (got.seq if got else 0) == _brute_next(msgs, f, start), (f, start)
            got = store.load_prev(f, start)
            assert (got.seq if got else 0) == _brute_prev(msgs, f, start), (f, start)


@pytest.mark.parametrize("flavour", ["memory", "file"])
def test_remembered_subjects_follow_subjects_coming_and_going(flavour: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A walk of one message before the subjects are asked (and remembered), so a store of a
    # few messages takes that path.
    for name, value in {"_SCAN_SHORT": 1, "_SCAN_MIN": 1, "_SCAN_CAP": 0}.items():
        monkeypatch.setattr(stream_store, name, value)
    store = new_store(flavour)
    msgs: dict[int, bytes] = {}

    def add(subject: bytes) -> None:
        msgs[store.append(subject, b"", b"x")[0]] = subject

    filters = [b"k.*", b"k.a.*", b"*.b", b"k.>"]
    for subject in (b"k.a", b"k.b", b"k.a", b"j.b", b"k.a"):
        add(subject)
    _check(store, msgs, filters)  # every filter's subjects now remembered
    add(b"k.c")  # a new subject after the memo was filled
    _check(store, msgs, filters)
    for seq in [s for s, subj in msgs.items() if subj == b"k.b"]:  # a subject goes
        store.remove(seq)
        del msgs[seq]
    _check(store, msgs, filters)
    add(b"k.b")  # and comes back with a new index
    add(b"k.a.z")
    _check(store, msgs, filters)
    store.purge()
    msgs.clear()
    _check(store, msgs, filters)
    add(b"k.d")
    _check(store, msgs, filters)


def test_a_lookup_remembers_no_partial_list_for_multi_last() -> None:
    """A filter with more subjects than a next lookup lists: multi-last still sees them all."""
    store = MemoryStore()
    for i in range(100):
        store.append(b"m.%d" % i, b"", b"x")
    for _ in range(20):
        store.append(b"n.x", b"", b"x")
    # the short walk from 101 meets only n.x: the subjects of m.* are asked (more than a few)
    assert store.load_next(b"m.*", 101) is None
    assert store.load_prev(b"m.*", 120) is not None
    assert store.multi_last_seqs([b"m.*"], 0, 0) == list(range(1, 101))
