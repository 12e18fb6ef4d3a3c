"""The subject tree's bulk build (``SubjectTree.insert_many``) and the store's use of it.

A tree built in one pass must answer every query exactly as one built a subject at a time,
whatever came before (subjects already in the tree, removed ones, repeated ones), and the
store's wildcard answers must not depend on whether its tree was topped up or rebuilt.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

from hypothesis import example, given, settings
from hypothesis import strategies as st

from jsemu.store import MemoryStore, SubjectTree
from jsemu.subjects import subject_matches

# Empty tokens included: ``a..b``, ``a.``, ``.a`` and the empty subject split like any other.
TOKENS = ["a", "b", "c", "foo*", ""]
subject_st = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4).map(".".join)
filter_st = st.lists(st.sampled_from([*TOKENS, "*", "*", ">"]), min_size=1, max_size=4).map(".".join)
# Valid filters for the store (``>`` last only; no ``foo*``, whose in-token wildcard the store
# answers as Go's tree does, not as the subject grammar reads it).
store_filter_st = st.builds(
    lambda toks, tail: ".".join(["*", *toks, *tail]),
    st.lists(st.sampled_from(["a", "b", "c", "", "*"]), max_size=3),
    st.sampled_from([[], [">"]]),
)
pairs_st = st.lists(st.tuples(subject_st, st.integers(0, 9)), max_size=30)


def _answers(t: SubjectTree[int], probes: list[str], filters: list[str]) -> object:
    return (
        len(t),
        sorted(t.items()),
        [t.get(p.encode()) for p in probes],
        [sorted(t.match(f.encode())) for f in filters],
    )


def _prunes_to_nothing(t: SubjectTree[int]) -> bool:
    for subject, _ in list(t.items()):
        assert t.remove(subject) is not None
    return len(t) == 0 and t._root.children is None


@settings(max_examples=400, deadline=None)
@example(before=[], removed=[], batch=[("a", 1), (".a", 2), ("", 3), (".", 4)], probes=[], filters=["*", "*.a", ">"])
@given(
    before=pairs_st,
    removed=st.lists(subject_st, max_size=8),
    batch=pairs_st,
    probes=st.lists(subject_st, max_size=8),
    filters=st.lists(filter_st, max_size=8),
)
def test_bulk_build_answers_as_one_at_a_time(
    before: list[tuple[str, int]],
    removed: list[str],
    batch: list[tuple[str, int]],
    probes: list[str],
    filters: list[str],
) -> None:
    one: SubjectTree[int] = SubjectTree()
    bulk: SubjectTree[int] = SubjectTree()
    for s, v in before:
        one.insert(s.encode(), v)
    bulk.insert_many((s.encode(), v) for s, v in before)
    for s in removed:
        assert one.remove(s.encode()) == bulk.remove(s.encode())
    for s, v in batch:
        one.insert(s.encode(), v)
    bulk.insert_many([(s.encode(), v) for s, v in batch])
    probes = probes + [s for s, _ in before + batch]
    assert _answers(bulk, probes, filters) == _answers(one, probes, filters)
    live = {s for s, _ in before if s not in removed} | {s for s, _ in batch}
    for f in filters:
        assert sorted(s for s, _ in bulk.match(f.encode())) == sorted(s.encode() for s in live if subject_matches(s, f))
    assert _prunes_to_nothing(bulk)


def test_bulk_build_refuses_none_and_counts_what_it_added() -> None:
    t: SubjectTree[int | None] = SubjectTree()
    try:
        t.insert_many([(b"a.b", 1), (b"a.c", None), (b"a.d", 3)])
    except TypeError:
        pass
    else:
        raise AssertionError("a None value was accepted")
    assert len(t) == 1 and t.get(b"a.b") == 1 and t.get(b"a.d") is None


def test_bulk_build_pauses_the_collector() -> None:
    seen: list[bool] = []

    def pairs() -> Iterator[tuple[bytes, int]]:
        for i in range(3):
            seen.append(gc.isenabled())
            yield b"s.%d" % i, i

    was = gc.isenabled()
    gc.enable()
    try:
        SubjectTree().insert_many(pairs())
        assert seen == [False, False, False]
        assert gc.isenabled()  # and turned back on after
    finally:
        if not was:
            gc.disable()


def _wild(store: MemoryStore, filt: bytes) -> dict[bytes, int]:
    return store.subjects_totals(filt)


def _expected(totals: dict[bytes, int], filt: bytes) -> dict[bytes, int]:
    return {s: n for s, n in totals.items() if subject_matches(s.decode(), filt.decode())}


@settings(max_examples=150, deadline=None)
@given(
    rounds=st.lists(
        st.tuples(
            st.lists(
                st.sampled_from(["a", "b", "c", "d"]).flatmap(lambda x: subject_st.map(lambda s: x + "." + s)),
                max_size=25,
            ),
            st.lists(st.sampled_from(["a.>", "b.*", "c", "d.a"]), max_size=3),
        ),
        min_size=1,
        max_size=5,
    ),
    filters=st.lists(store_filter_st, min_size=1, max_size=4),
)
def test_store_wildcards_after_top_ups_and_rebuilds(
    rounds: list[tuple[list[str], list[str]]], filters: list[str]
) -> None:
    """Publishes, purges by subject and wildcard queries in rounds: a round with many new subjects
    rebuilds the tree from the index, one with few tops it up; the answers are brute force's."""
    store = MemoryStore()
    for published, purged in rounds:
        for s in published:
            store.append(s.encode(), b"", b"x")
        for p in purged:
            store.purge_ex(p.encode(), 0, 0)
        totals = store.subjects_totals(b"")
        for f in filters:
            assert _wild(store, f.encode()) == _expected(totals, f.encode()), f


def test_store_top_up_leaves_out_what_went_away_meanwhile() -> None:
    """Few new subjects (a top-up, not a rebuild): one deleted, and one deleted and published
    again, before the next wildcard lookup; the tree holds the live ones only, once each."""
    store = MemoryStore()
    for i in range(20):
        store.append(b"b.%d" % i, b"", b"x")
    assert len(store.subjects_totals(b"b.*")) == 20  # the tree is built
    gone = store.append(b"d.gone", b"", b"x")[0]
    back = store.append(b"d.back", b"", b"x")[0]
    assert store.remove(gone) and store.remove(back)  # (a purge by subject brings the tree up to date first)
    store.append(b"d.back", b"", b"y")
    assert store.subjects_totals(b"d.*") == {b"d.back": 1}
    assert store.subjects_totals(b"*.*") == {**{b"b.%d" % i: 1 for i in range(20)}, b"d.back": 1}


def test_store_rebuild_keeps_what_the_tree_held() -> None:
    """Many new subjects after a lookup on a few: the tree is built again from the index and
    still holds the subjects it had."""
    store = MemoryStore()
    store.append(b"a.1", b"", b"x")
    store.append(b"a.2", b"", b"x")
    assert store.subjects_totals(b"a.*") == {b"a.1": 1, b"a.2": 1}
    gone = store.append(b"b.gone", b"", b"x")[0]
    for i in range(20):
        store.append(b"b.%d" % i, b"", b"x")
    assert store.remove(gone)
    assert store.subjects_totals(b"*.*") == {b"a.1": 1, b"a.2": 1, **{b"b.%d" % i: 1 for i in range(20)}}
