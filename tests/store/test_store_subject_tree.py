"""SubjectTree: trie operations, wildcard semantics against brute force, and match cost."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.store import SubjectTree
from jsemu.subjects import subject_matches

TOKENS = ["a", "b", "c", "foo*", ""]


def test_insert_get_remove_and_prune() -> None:
    t: SubjectTree[int] = SubjectTree()
    assert t.insert(b"foo.bar", 1) is None
    assert t.insert(b"foo", 2) is None
    assert t.insert(b"foo.bar", 3) == 1
    assert len(t) == 2
    assert t.get(b"foo.bar") == 3 and t.get(b"foo") == 2 and t.get(b"foo.baz") is None
    assert b"foo" in t and b"fo" not in t
    assert t.remove(b"foo.bar") == 3
    assert t.remove(b"foo.bar") is None
    assert t.get(b"foo") == 2  # the prefix subject survives pruning of its child
    assert t.remove(b"foo") == 2
    assert len(t) == 0
    assert t._root.children is None  # everything pruned


def test_match_semantics() -> None:
    t: SubjectTree[int] = SubjectTree()
    for i, s in enumerate([b"foo", b"foo.bar", b"foo.bar.baz", b"foo.baz", b"bar.foo", b"foo*"]):
        t.insert(s, i)

    def m(f: bytes) -> set[bytes]:
        return {s for s, _ in t.match(f)}

    assert m(b"foo") == {b"foo"}
    assert m(b"foo.*") == {b"foo.bar", b"foo.baz"}
    assert m(b"foo.>") == {b"foo.bar", b"foo.bar.baz", b"foo.baz"}  # '>' needs at least one token
    assert m(b">") == {b"foo", b"foo.bar", b"foo.bar.baz", b"foo.baz", b"bar.foo", b"foo*"}
    assert m(b"*") == {b"foo", b"foo*"}
    assert m(b"*.foo") == {b"bar.foo"}
    assert m(b"foo*") == {b"foo*"}  # not a wildcard token: literal
    assert m(b"*.*.*") == {b"foo.bar.baz"}
    assert m(b"") == set()
    assert m(b"nope.>") == set()


subject_st = st.lists(st.sampled_from(TOKENS[:4]), min_size=1, max_size=4).map(".".join)
filter_st = st.lists(st.sampled_from([*TOKENS, "*", "*", ">"]), min_size=1, max_size=4).map(".".join)


@settings(max_examples=300, deadline=None)
@given(
    subjects=st.sets(subject_st, max_size=25),
    removed=st.sets(subject_st, max_size=8),
    filters=st.lists(filter_st, max_size=8),
)
def test_match_equals_brute_force(subjects: set[str], removed: set[str], filters: list[str]) -> None:
    t: SubjectTree[str] = SubjectTree()
    for s in subjects:
        t.insert(s.encode(), s)
    for s in removed:
        assert (t.remove(s.encode()) is not None) == (s in subjects)
    live = subjects - removed
    assert len(t) == len(live)
    assert sorted(v for _, v in t.items()) == sorted(live)
    for f in filters:
        got = sorted(v for k, v in t.match(f.encode()) if k == v.encode())
        assert len(got) == len(list(t.match(f.encode())))
        assert got == sorted(s for s in live if subject_matches(s, f)), f


def test_match_only_visits_matching_branches() -> None:
    t: SubjectTree[int] = SubjectTree()
    for i in range(50_000):
        t.insert(b"big.%d" % i, i)
    t.insert(b"small.1", 1)
    started = time.perf_counter()
    for _ in range(2_000):
        assert [s for s, _ in t.match(b"small.*")] == [b"small.1"]
        assert {s for s, _ in t.match(b"*.1")} == {b"big.1", b"small.1"}
    # A walk over all 50k subjects per call would take many seconds here.
    assert time.perf_counter() - started < 2.0
