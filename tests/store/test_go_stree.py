"""GoSubjectTree: the port of nats-server's ``server/stree``.

Most tests are ports of ``server/stree/stree_test.go`` (named after the Go test they port);
the partial wildcard expectations come from nats-server 2.15.1's recorded replies (the
``partialwild-*`` conformance scenarios). Hypothesis checks that, for filters whose wildcards
are whole tokens, the port agrees with jsemu's own ``SubjectTree``, and that the layout depends
only on the key set.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.store import ManualClock, StoreLimits, SubjectTree, new_store
from jsemu.store.go_stree import (
    NO_PIVOT,
    GoSubjectTree,
    _Inner,
    _Leaf,
    _Node48,
    _Node256,
    gen_parts,
    match_keys,
    match_parts,
)


def new() -> GoSubjectTree[int]:
    return GoSubjectTree()


def insert_all(st_: GoSubjectTree[int], *items: tuple[str, int]) -> None:
    for subj, v in items:
        st_.insert(subj.encode(), v)


def count(st_: GoSubjectTree[int], filter: str) -> int:
    return len(st_.matches(filter.encode()))


def subjects(st_: GoSubjectTree[int], filter: str) -> set[str]:
    return {s.decode() for s, _ in st_.matches(filter.encode())}


def root(st_: GoSubjectTree[int]) -> _Inner[int]:
    r = st_._root
    assert isinstance(r, _Inner)
    return r


SIX = [("foo.bar.A", 1), ("foo.bar.B", 2), ("foo.bar.C", 3), ("foo.baz.A", 11), ("foo.baz.B", 22), ("foo.baz.C", 33)]


# --- stree_test.go -----------------------------------------------------------------------


def test_basics() -> None:
    t = new()
    assert len(t) == 0
    assert t.insert(b"foo.bar.baz", 22) == (None, False)
    assert len(t) == 1
    assert t.find(b"foo.bar.*") is None  # Find does not do wildcards
    assert t.find(b"foo.bar.baz") == 22
    assert t.insert(b"foo.bar.baz", 33) == (22, True)
    assert len(t) == 1
    assert t.insert(b"foo.bar", 22) == (None, False)  # splits the leaf
    assert len(t) == 2
    assert t.find(b"foo.bar") == 22
    assert t.find(b"foo.bar.baz") == 33


def test_node_grow() -> None:
    t = new()
    expect = {4: "NODE4", 5: "NODE10", 10: "NODE10", 11: "NODE16", 16: "NODE16", 17: "NODE48", 48: "NODE48"}
    for i in range(48):
        assert t.insert(f"foo.bar.{chr(ord('A') + i)}".encode(), 22) == (None, False)
        if i + 1 in expect:
            assert root(t).kind() == expect[i + 1]
    t.insert(f"foo.bar.{chr(ord('A') + 49)}".encode(), 22)
    assert root(t).kind() == "NODE256"


def test_node_prefix_mismatch() -> None:
    t = new()
    insert_all(t, ("foo.bar.A", 11), ("foo.bar.B", 22), ("foo.bar.C", 33))
    before = t._root
    t.insert(b"foo.foo.A", 44)
    assert t._root is not before
    for subj, v in [("foo.bar.A", 11), ("foo.bar.B", 22), ("foo.bar.C", 33), ("foo.foo.A", 44)]:
        assert t.find(subj.encode()) == v


def test_node_delete() -> None:
    t = new()
    t.insert(b"foo.bar.A", 22)
    assert t.delete(b"foo.bar.A") == (22, True)
    assert t._root is None
    assert t.delete(b"foo.bar.A") == (None, False)
    assert t.find(b"foo.foo.A") is None
    # Kick to a node4, then shrink back to a leaf.
    insert_all(t, ("foo.bar.A", 11), ("foo.bar.B", 22), ("foo.bar.C", 33))
    assert t.delete(b"foo.bar.C") == (33, True)
    assert t.delete(b"foo.bar.B") == (22, True)
    assert isinstance(t._root, _Leaf)
    assert t.delete(b"foo.bar.A") == (11, True)
    assert t._root is None
    # node10 shrinks to node4.
    for i in range(5):
        t.insert(f"foo.bar.{chr(ord('A') + i)}".encode(), 22)
    assert root(t).kind() == "NODE10"
    assert t.delete(b"foo.bar.A") == (22, True)
    assert root(t).kind() == "NODE4"
    # node16 shrinks to node10.
    for i in range(11):
        t.insert(f"foo.bar.{chr(ord('A') + i)}".encode(), 22)
    assert root(t).kind() == "NODE16"
    assert t.delete(b"foo.bar.A") == (22, True)
    assert root(t).kind() == "NODE10"
    assert t.find(b"foo.bar.B") == 22
    # node48 shrinks to node16.
    t = new()
    for i in range(17):
        t.insert(f"foo.bar.{chr(ord('A') + i)}".encode(), 22)
    assert root(t).kind() == "NODE48"
    assert t.delete(b"foo.bar.A") == (22, True)
    assert root(t).kind() == "NODE16"
    assert t.find(b"foo.bar.B") == 22
    # node256 shrinks to node48.
    t = new()
    for i in range(49):
        t.insert(f"foo.bar.{chr(ord('A') + i)}".encode(), 22)
    assert root(t).kind() == "NODE256"
    assert t.delete(b"foo.bar.A") == (22, True)
    assert root(t).kind() == "NODE48"
    assert t.find(b"foo.bar.B") == 22


def test_nodes_and_paths() -> None:
    t = new()
    insert_all(t, ("foo.bar.A", 22), ("foo.bar.B", 22), ("foo.bar.C", 22), ("foo.bar", 22))
    for s in ["foo.bar.A", "foo.bar.B", "foo.bar.C", "foo.bar"]:
        assert t.find(s.encode()) == 22
    t.delete(b"foo.bar")
    for s in ["foo.bar.A", "foo.bar.B", "foo.bar.C"]:
        assert t.find(s.encode()) == 22


def test_construction() -> None:
    t = new()
    insert_all(t, *SIX, ("foo.bar", 42))

    def check(n: object, kind: str, path: bytes, num_children: int) -> None:
        assert isinstance(n, (_Leaf, _Inner))
        assert (n.kind(), n.path(), n.num_children()) == (kind, path, num_children)

    r = root(t)
    check(r, "NODE4", b"foo.ba", 2)
    nn = r.find_child(ord("r"))
    check(nn, "NODE4", b"r", 2)
    assert isinstance(nn, _Inner)
    check(nn.find_child(NO_PIVOT), "LEAF", b"", 0)
    rnn = nn.find_child(ord("."))
    check(rnn, "NODE4", b".", 3)
    assert isinstance(rnn, _Inner)
    for c in "ABC":
        check(rnn.find_child(ord(c)), "LEAF", c.encode(), 0)
    znn = r.find_child(ord("z"))
    check(znn, "NODE4", b"z.", 3)
    assert isinstance(znn, _Inner)
    for c in "ABC":
        check(znn.find_child(ord(c)), "LEAF", c.encode(), 0)

    # Delete "foo.bar": the tree puts itself back together.
    assert t.delete(b"foo.bar") == (42, True)
    r = root(t)
    check(r, "NODE4", b"foo.ba", 2)
    nn = r.find_child(ord("r"))
    check(nn, "NODE4", b"r.", 3)
    assert isinstance(nn, _Inner)
    for c in "ABC":
        check(nn.find_child(ord(c)), "LEAF", c.encode(), 0)
    znn = r.find_child(ord("z"))
    check(znn, "NODE4", b"z.", 3)


def test_match_leaf_only() -> None:
    t = new()
    t.insert(b"foo.bar.baz.A", 1)
    for f in ["foo.bar.*.A", "foo.*.baz.A", "foo.*.*.A", "foo.*.*.*", "*.*.*.*"]:
        assert count(t, f) == 1, f
    for f in [">", "foo.>", "foo.*.>", "foo.bar.>", "foo.bar.*.>"]:
        assert count(t, f) == 1, f
    # Partials do not trigger on leafs.
    assert count(t, "foo.bar.baz") == 0


@pytest.mark.parametrize("with_foo_bar", [False, True])
def test_match_nodes(with_foo_bar: bool) -> None:
    t = new()
    insert_all(t, *SIX)
    if with_foo_bar:
        t.insert(b"foo.bar", 42)
    cases = {
        "foo.bar.A": 1,
        "foo.baz.A": 1,
        "foo.bar": 1 if with_foo_bar else 0,
        "foo.*.A": 2,
        "foo.bar.*": 3,
        "foo.baz.*": 3,
        ">": 7 if with_foo_bar else 6,
        "foo.>": 7 if with_foo_bar else 6,
        "foo.bar.>": 3,
        "foo.baz.>": 3,
        "foo.ba": 0,  # no false positives on prefix matches
    }
    for f, n in cases.items():
        assert count(t, f) == n, f


def test_match_until() -> None:
    t = new()
    insert_all(t, *SIX, ("foo.bar", 42))

    def until(filter: str, stop_after: int) -> tuple[int, bool]:
        n = 0

        def cb(_s: bytes, _v: int) -> bool:
            nonlocal n
            n += 1
            return n < stop_after

        done = t.match_until(filter.encode(), cb)
        return n, done

    assert until("foo.>", 3) == (3, False)
    assert until("foo.bar", 3) == (1, True)
    assert until("foo.baz.*", 4) == (3, True)


def test_no_prefix() -> None:
    t = new()
    for i in range(26):
        assert t.insert(chr(ord("A") + i).encode(), 22) == (None, False)
    n = root(t)
    assert isinstance(n, _Node48) and n.num_children() == 26
    assert t.delete(b"B") == (22, True)
    assert n.num_children() == 25
    assert t.delete(b"Z") == (22, True)
    assert n.num_children() == 24


def test_partial_terminal_wildcard_bug_match() -> None:
    t = new()
    for i, c in enumerate("ABC"):
        t.insert(f"STATE.GLOBAL.CELL1.7PDSGAALXNN000010.PROPERTY-{c}".encode(), i)
    assert count(t, "STATE.GLOBAL.CELL1.7PDSGAALXNN000010.*") == 3


def test_match_subject_param() -> None:
    t = new()
    items = [*SIX, ("foo.bar", 42)]
    insert_all(t, *items)
    got = t.matches(b">")
    assert sorted((s.decode(), v) for s, v in got) == sorted(items)


def test_match_random_double_pwc() -> None:
    rng = random.Random(1)
    t = new()
    for i in range(1, 3001):
        t.insert(f"foo.{rng.randint(1, 20)}.{i}".encode(), 42)
    assert count(t, "foo.*.*") == 3000
    every = [s.decode().split(".") for s, _ in t.iter_ordered()]
    assert all(len(toks) == 3 for toks in every)
    assert count(t, "*.2.*") == sum(1 for toks in every if toks[1] == "2")
    assert count(t, "*.*.222") == sum(1 for toks in every if toks[2] == "222")


def test_iter_ordered_and_fast() -> None:
    t = new()
    insert_all(t, *SIX, ("foo.bar", 42))
    want = [
        ("foo.bar", 42),
        ("foo.bar.A", 1),
        ("foo.bar.B", 2),
        ("foo.bar.C", 3),
        ("foo.baz.A", 11),
        ("foo.baz.B", 22),
        ("foo.baz.C", 33),
    ]
    assert [(s.decode(), v) for s, v in t.iter_ordered()] == want
    assert sorted((s.decode(), v) for s, v in t.iter_fast()) == want


def test_insert_same_pivot_bug() -> None:
    t = new()
    for subj in [
        b"0d00.2abbb82c1d.6e16.fa7f85470e.3e46",
        b"534b12.3486c17249.4dde0666",
        b"6f26aabd.920ee3.d4d3.5ffc69f6",
        b"8850.ade3b74c31.aa533f77.9f59.a4bd8415.b3ed7b4111",
        b"5a75047dcb.5548e845b6.76024a34.14d5b3.80c426.51db871c3a",
        b"825fa8acfc.5331.00caf8bbbd.107c4b.c291.126d1d010e",
    ]:
        assert t.insert(subj, 22) == (None, False)
        assert t.find(subj) == 22


def test_match_tsep_second_then_partial_part_bug() -> None:
    t = new()
    for s in [
        "foo.xxxxx.foo1234.zz",
        "foo.yyy.foo123.zz",
        "foo.yyybar789.zz",
        "foo.yyy.foo12345.zz",
        "foo.yyy.foo12345.yy",
        "foo.yyy.foo123456789.zz",
    ]:
        t.insert(s.encode(), 22)
    assert count(t, "foo.*.foo123456789.*") == 1
    assert count(t, "foo.*.*.zzz.foo.>") == 0


def test_match_multiple_wildcard_basic() -> None:
    t = new()
    insert_all(t, ("A.B.C.D.0.G.H.I.0", 22), ("A.B.C.D.1.G.H.I.0", 22))
    assert count(t, "A.B.*.D.1.*.*.I.0") == 1


def test_match_invalid_wildcard() -> None:
    t = new()
    insert_all(t, ("foo.123", 22), ("one.two.three.four.five", 22), ("'*.123", 22), ("bar", 22))
    assert count(t, "invalid.>") == 0
    assert count(t, "foo.>.bar") == 0
    assert count(t, ">") == 4
    assert count(t, "'*.*") == 1
    assert count(t, "'*.*.*'") == 0
    for f in ["`>`", '">"', "'>'", "'*.>'", "'*.>.", "`invalid.>`", "'*.*'"]:
        assert count(t, f) == 0, f


def test_random_track_entries() -> None:
    rng = random.Random(7)
    t = new()
    seen: set[bytes] = set()
    for _ in range(1000):
        subj = ".".join(rng.randbytes(rng.randint(2, 5)).hex() for _ in range(rng.randint(1, 6))).encode()
        if subj in seen:
            continue
        seen.add(subj)
        assert t.insert(subj, 22) == (None, False)
        assert len(t) == len(seen)
    assert all(t.find(s) == 22 for s in seen)


def test_long_tokens() -> None:
    t = new()
    insert_all(t, ("a1.aaaaaaaaaaaaaaaaaaaaaa0", 1), ("a2.0", 2), ("a1.aaaaaaaaaaaaaaaaaaaaaa1", 3), ("a2.1", 4))
    t.delete(b"a2.0")
    t.delete(b"a2.1")  # simulates a purge of a2.>
    assert len(t) == 2
    assert t.find(b"a1.aaaaaaaaaaaaaaaaaaaaaa0") == 1
    assert t.find(b"a1.aaaaaaaaaaaaaaaaaaaaaa1") == 3


def test_node48() -> None:
    a, b, c = _Leaf(b"a", 1), _Leaf(b"b", 2), _Leaf(b"c", 3)
    n: _Node48[int] = _Node48()
    n.add_child(ord("A"), a)
    assert n.key[ord("A")] == 1 and n.child[0] is a and len(n.children()) == 1
    assert n.find_child(ord("A")) is a
    n.add_child(ord("B"), b)
    assert n.key[ord("B")] == 2 and n.child[1] is b and len(n.children()) == 2
    n.add_child(ord("C"), c)
    assert n.key[ord("C")] == 3 and n.child[2] is c and len(n.children()) == 3
    n.delete_child(ord("A"))
    assert len(n.children()) == 2
    assert (n.key[ord("A")], n.key[ord("B")], n.key[ord("C")]) == (0, 2, 1)  # C moved to where A was
    assert n.find_child(ord("A")) is None
    assert n.child[0] is c and n.child[1] is b and n.child[2] is None
    assert n.find_child(ord("B")) is b and n.find_child(ord("C")) is c
    assert [x for x in n.children() if x is not None] == [c, b]
    # Byte 255 (nats-server PR 5826).
    n.add_child(255, c)
    assert n.key[255] == 3
    assert n.grow().find_child(255) is not None
    shrunk = n.shrink()
    assert isinstance(shrunk, _Inner) and shrunk.kind() == "NODE16" and shrunk.find_child(255) is not None


def test_match_no_callback_dupe() -> None:
    t = new()
    insert_all(t, ("foo.bar.A", 1), ("foo.bar.B", 1), ("foo.bar.C", 1), ("foo.bar.>", 1))
    for f in [b">", b"foo.>", b"foo.bar.>"]:
        got = [s for s, _ in t.matches(f)]
        assert len(got) == len(set(got)), f


def test_insert_longer_leaf_suffix_with_trailing_nulls() -> None:
    t = new()
    subj = b"foo.bar.baz_" + b"\x00" * 10
    subj2 = subj + b"\x00"  # Go's loop re-appends to subj, so one more null
    t.insert(subj, 1)
    t.insert(subj2, 2)
    assert t.find(subj) == 1
    assert t.find(subj2) == 2


def test_insert_with_no_pivot() -> None:
    t = new()
    assert t.insert(b"foo.bar.baz.\x7f", 22) == (None, False)
    assert len(t) == 0
    assert t.insert(b"foo\x7fbar", 1) == (None, False)
    assert len(t) == 0


def test_match_has_fwc_no_panic() -> None:
    t = new()
    t.insert(b"foo", 1)
    assert t.matches(b".") == []


def test_delete_short_subject_no_panic() -> None:
    t = new()
    insert_all(t, ("foo.bar.baz", 1), ("foo.bar.qux", 2))
    assert t.delete(b"foo.bar") == (None, False)
    assert t.find(b"foo.bar.baz") == 1
    assert t.find(b"foo.bar.qux") == 2


def test_empty() -> None:
    t = new()
    insert_all(t, ("foo.bar", 1), ("foo.baz", 2), ("bar.baz", 3))
    assert len(t) == 3
    t.empty()
    assert len(t) == 0 and t._root is None
    assert t.find(b"foo.bar") is None
    assert t.insert(b"new.entry", 42) == (None, False)
    assert t.find(b"new.entry") == 42


def test_node256_operations_and_shrink() -> None:
    n: _Node256[int] = _Node256(b"prefix")
    assert not n.is_full()
    assert n.find_child(ord("a")) is None
    n.add_child(ord("a"), _Leaf(b"suffix", 42))
    assert n.find_child(ord("a")) is not None and n.size == 1
    assert len(n.children()) == 256
    with pytest.raises(RuntimeError, match="grow can not be called on node256"):
        n.grow()
    n = _Node256(b"prefix")
    for i in range(49):
        n.add_child(i, _Leaf(bytes([i]), i))
    assert n.shrink() is None
    n.delete_child(0)
    assert n.size == 48
    shrunk = n.shrink()
    assert isinstance(shrunk, _Node48)
    assert all(shrunk.find_child(i) is not None for i in range(1, 49))


def test_match_parts_edge_cases() -> None:
    parts = gen_parts(b"foo.*.bar.>")
    rest, ok = match_parts(parts, b"foo.test")
    assert ok and rest
    parts = gen_parts(b"foo.*")
    assert match_parts(parts, b"") == (parts, True)


def test_insert_and_delete_edge_cases() -> None:
    t = new()
    insert_all(t, ("a.b", 1), ("a.c", 2))
    assert len(t) == 2
    t = new()
    insert_all(t, ("a", 1), ("aa", 2), ("aaa", 3))
    assert len(t) == 3
    assert [t.find(s) for s in (b"a", b"aa", b"aaa")] == [1, 2, 3]
    t = new()
    assert t.delete(b"foo") == (None, False)
    t.insert(b"foo", 1)
    assert t.delete(b"") == (None, False)
    t = new()
    insert_all(t, ("verylongprefix.suffix", 1), ("verylongprefix.suffix2", 2))
    assert t.delete(b"very") == (None, False)


def test_match_edge_cases() -> None:
    t = new()
    t.insert(b"foo.bar", 1)
    assert t.matches(b"") == []
    t = new()
    insert_all(t, ("foo.bar.baz", 1), ("foo.bar.qux", 2), ("foo.baz.bar", 3), ("bar.foo.baz", 4))
    assert count(t, "foo.bar.>") == 2


def test_iter_complex_tree() -> None:
    t = new()
    for i in range(20):
        t.insert(f"level1.level2.level3.item{i}".encode(), i)
    assert len(list(t.iter_ordered())) == 20


# --- genParts / matchParts -------------------------------------------------------------


@pytest.mark.parametrize(
    ("filter", "parts"),
    [
        (b"foo.bar", [b"foo.bar"]),
        (b"foo.*.bar", [b"foo.", b"*", b"bar"]),
        (b"foo.*", [b"foo.", b"*"]),
        (b"*.foo", [b"*", b"foo"]),
        (b"*", [b"*"]),
        (b">", [b">"]),
        (b"foo.>", [b"foo.", b">"]),
        (b"foo.*.>", [b"foo.", b"*", b">"]),
        (b"*.*.222", [b"*", b"*", b"222"]),
        (b"foo.>.bar", [b"foo.>.bar"]),  # a non-terminal '>' makes everything literal
        # Wildcards inside tokens stay in literal parts.
        (b"m.0*", [b"m.0*"]),
        (b"m.0>", [b"m.0>"]),
        (b"m.*0", [b"m.*0"]),
        (b"m.>x", [b"m.>x"]),
        (b"n.0*.a", [b"n.0*.a"]),
        (b"*.01", [b"*", b"01"]),
    ],
)
def test_gen_parts(filter: bytes, parts: list[bytes]) -> None:
    assert gen_parts(filter) == parts


def test_match_parts_cuts_a_part_at_the_fragment_end() -> None:
    # The node prefix "m.0" consumes "m.0" of the part "m.0*": what is left is the bare "*",
    # which Match then treats as a wildcard over the node's children.
    assert match_parts([b"m.0*"], b"m.0") == ([b"*"], True)
    assert match_parts([b"m.0*"], b"m.01") == ([b"m.0*"], False)
    parts = [b"m.0>"]
    assert match_parts(parts, b"m.") == ([b"0>"], True)
    assert parts == [b"m.0>"]  # the caller's parts are not changed


# --- partial wildcards: layout dependent, as recorded from nats-server 2.15.1 -----------------

PARTIALWILD_SUBJECTS = ["m.01", "m.02", "m.10", "m.100", "m.x0", "m.0", "n.01.a", "n.02.b"]
# jsemu/conformance/fixtures.json, partialwild-*: the subjects multi_last returned.
PARTIALWILD_EXPECTED = {
    "m.0*": {"m.01", "m.02"},
    "m.*0": set(),
    "m.1*0": set(),
    "m*": set(),
    "m.0>": {"m.01", "m.02", "m.0"},
    "m.1>": set(),
    "n.0*": set(),
    "n.0*.a": set(),
    "n.0>": {"n.01.a", "n.02.b"},
    "m.0**": set(),
    "*.01": {"m.01"},
    "m.0*.x": set(),
    "m.>x": set(),
    "m.*x": set(),
    "m.1*": set(),
    "m.10>": {"m.10", "m.100"},
}


def test_partial_wildcards_match_as_nats_server() -> None:
    t = new()
    for i, s in enumerate(PARTIALWILD_SUBJECTS, 1):
        t.insert(s.encode(), i)
    for f, want in PARTIALWILD_EXPECTED.items():
        assert subjects(t, f) == want, f


def test_partial_wildcards_depend_on_the_layout() -> None:
    t = new()
    t.insert(b"m.01", 1)
    assert subjects(t, "m.0*") == set()  # one leaf "m.01": the part never splits at "m.0"
    t.insert(b"m.02", 2)
    assert subjects(t, "m.0*") == {"m.01", "m.02"}  # node "m.0" + leaves "1", "2"
    t.insert(b"m.03.x", 3)
    assert subjects(t, "m.0*") == {"m.01", "m.02"}  # "3.x" spans a '.', not within the '*'
    assert subjects(t, "m.0>") == {"m.01", "m.02", "m.03.x"}
    t.delete(b"m.02")
    t.delete(b"m.03.x")
    assert subjects(t, "m.0*") == set()  # back to the single leaf


@pytest.mark.parametrize("storage", ["memory", "file"])
def test_store_multi_last_uses_the_go_matcher_for_in_token_wildcards(storage: str) -> None:
    s = new_store(storage, StoreLimits(), ManualClock())
    seq = {subj: s.append(subj.encode(), b"", b"x")[0] for subj in PARTIALWILD_SUBJECTS}
    for f, want in PARTIALWILD_EXPECTED.items():
        assert s.multi_last_seqs([f.encode()], 0, 0) == sorted(seq[x] for x in want), f
    assert s.multi_last_seqs([b"m.0*", b"m.1*"], 0, 0) == [1, 2]
    assert s.multi_last_seqs([b"m.0*", b"m.1*"], 1, 0) == [1]
    assert s.multi_last_seqs([b"m.0*", b"m.10"], 0, 0) == [1, 2, 3]  # mixed with the fast path
    # A later message on m.01 moves its last sequence.
    s.append(b"m.01", b"", b"y")
    assert s.multi_last_seqs([b"m.0*"], 0, 0) == [2, 9]
    s.remove(2)  # m.02 is gone; node "m.0" still has the children "1" and "" (m.0)
    assert s.multi_last_seqs([b"m.0*"], 0, 0) == [9]
    assert s.multi_last_seqs([b"m.0>"], 0, 0) == [6, 9]
    s.remove(6)  # m.0 is gone too: m.01 is the leaf "01" under "m.", and no filter part splits
    assert s.multi_last_seqs([b"m.0*"], 0, 0) == []
    assert s.multi_last_seqs([b"m.0>"], 0, 0) == []
    assert s.multi_last_seqs([b"m.*"], 0, 0) == [3, 4, 5, 9]  # whole-token wildcards: fast path


# --- hypothesis -------------------------------------------------------------------------

TOKENS = ["a", "ab", "abc", "b", "ba", "0", "01", "10", "x*", "y>", "\x00"]
literal = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4).map(".".join).map(str.encode)
keysets = st.lists(literal, max_size=40, unique=True)


@st.composite
def whole_token_filters(draw: st.DrawFn) -> bytes:
    """Valid filters whose wildcards are whole tokens (``>`` only last), no ``*``/``>`` inside
    a token: the subject tokens above with ``*``/``>`` removed, plus ``*`` and ``>``."""
    toks = draw(st.lists(st.sampled_from(["a", "ab", "abc", "b", "ba", "0", "01", "10", "x", "*"]), min_size=1))
    if draw(st.booleans()):
        toks.append(">")
    return ".".join(toks[:5]).encode()


@settings(max_examples=300, deadline=None)
@given(keys=keysets, filters=st.lists(whole_token_filters(), min_size=1, max_size=8))
def test_whole_token_wildcards_agree_with_subject_tree(keys: list[bytes], filters: list[bytes]) -> None:
    go: GoSubjectTree[int] = GoSubjectTree()
    ours: SubjectTree[int] = SubjectTree()
    for i, k in enumerate(keys):
        go.insert(k, i)
        ours.insert(k, i)
    for f in filters:
        got = go.matches(f)
        assert len(got) == len({s for s, _ in got}), f  # no subject twice
        assert sorted(got) == sorted(ours.match(f)), f


@settings(max_examples=200, deadline=None)
@given(keys=keysets, data=st.data())
def test_layout_depends_only_on_the_key_set(keys: list[bytes], data: st.DataObject) -> None:
    """Any order of inserts, with deletes in between, ends in the same node prefixes and leaf
    suffixes as inserting the surviving keys in sorted order; so partial wildcard results
    depend only on the set of subjects, and the store can build the tree on demand."""
    extra = data.draw(st.lists(literal, max_size=20, unique=True))
    order = data.draw(st.permutations(keys + [k for k in extra if k not in keys]))
    doomed = {k for k in extra if k not in keys}
    t: GoSubjectTree[int] = GoSubjectTree()
    for k in order:
        t.insert(k, 1)
        # Delete a doomed key some time after inserting it.
        drop: bool = data.draw(st.booleans())
        if doomed and drop:
            victim = data.draw(st.sampled_from(sorted(doomed)))
            if victim in t:
                assert t.delete(victim) == (1, True)
                doomed.discard(victim)
    for victim in doomed:
        assert t.delete(victim) == (1, True)
    fresh: GoSubjectTree[int] = GoSubjectTree()
    for k in sorted(keys):
        fresh.insert(k, 1)
    assert len(t) == len(keys)
    assert t.shape() == fresh.shape()
    assert sorted(s for s, _ in t.iter_ordered()) == sorted(keys)
    assert [s for s, _ in t.iter_ordered()] == [s for s, _ in fresh.iter_ordered()]


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), literal), max_size=60))
def test_insert_find_delete_against_a_dict(ops: list[tuple[bool, bytes]]) -> None:
    t: GoSubjectTree[int] = GoSubjectTree()
    model: dict[bytes, int] = {}
    for i, (add, k) in enumerate(ops):
        if add:
            assert t.insert(k, i) == ((model[k], True) if k in model else (None, False))
            model[k] = i
        else:
            assert t.delete(k) == ((model.pop(k), True) if k in model else (None, False))
        assert len(t) == len(model)
    assert {s: v for s, v in t.iter_fast()} == model
    assert all(t.find(k) == v for k, v in model.items())
    assert sorted(s for s, _ in t.matches(b">")) == sorted(model)


@st.composite
def cut_filters(draw: st.DrawFn, keys: list[bytes]) -> bytes:
    """Any filter, mostly a stored key cut at some byte with wildcard characters appended."""
    tail = st.sampled_from([b"*", b">", b"**", b"*.a", b">x", b"*0", b".*", b".>", b"*.>", b"0*", b"a>"])
    cut: int = draw(st.integers(0, 3))
    if keys and cut:
        key = draw(st.sampled_from(keys))
        return key[: draw(st.integers(0, len(key)))] + draw(tail)
    return draw(st.sampled_from([b"*", b">", b"*a", b"a*", b"*.*", b"a.*b", b"*.0*", b">.a", b"a.>"]))


@settings(max_examples=300, deadline=None)
@given(keys=keysets, data=st.data())
def test_match_keys_is_the_full_tree_match(keys: list[bytes], data: st.DataObject) -> None:
    """match_keys builds the tree from the keys starting with the filter's literal head only."""
    full: GoSubjectTree[int] = GoSubjectTree()
    items = [(k, i) for i, k in enumerate(keys)]
    for k, i in items:
        full.insert(k, i)
    for _ in range(6):
        f = data.draw(cut_filters(keys))
        assert sorted(match_keys(items, f)) == sorted(full.matches(f)), f
