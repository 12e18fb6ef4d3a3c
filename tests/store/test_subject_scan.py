"""The scan of joined subjects (``store/subject_scan.py``) that answers a store's first wildcard
lookups instead of building the subject tree: the same subjects as the tree and as the brute-force
model, for any token (regular-expression metacharacters included), and a store answering through it
agrees with one answering through the tree while subjects come, go and come back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.store import Store, new_store, stream_store
from jsemu.store.subject_scan import joined, scan, scannable
from jsemu.store.subject_tree import SubjectTree

from .store_model import matches

# Tokens with the characters a regular expression would misread, and short ones that collide.
_TOKENS = st.sampled_from([b"a", b"b", b"ab", b"a+", b"(", b"$", b"^", b"\\", b"[x]", b"a*", b"*b", b">x", b"|", b"?"])
_SUBJECT = st.lists(_TOKENS, min_size=1, max_size=4).map(b".".join)
_FILTER = st.lists(_TOKENS | st.just(b"*"), min_size=1, max_size=4).flatmap(
    lambda toks: st.sampled_from([b".".join(toks), b".".join([*toks, b">"]), b">"])
)


@settings(max_examples=300, deadline=None)
@given(subjects=st.lists(_SUBJECT, max_size=30, unique=True), filt=_FILTER)
def test_scan_matches_what_the_tree_and_the_model_match(subjects: list[bytes], filt: bytes) -> None:
    tree: SubjectTree[int] = SubjectTree()
    for i, s in enumerate(subjects):
        tree.insert(s, i + 1)
    blob = joined(subjects, len(subjects))
    assert blob is not None and scannable(filt)
    found, read = scan(blob, filt)
    assert read == len(blob)
    assert sorted(found) == sorted(s for s, _ in tree.match(filt))
    assert sorted(found) == sorted(s for s in subjects if matches(filt, s))
    for limit in (1, 2, 5):
        first, _ = scan(blob, filt, limit)
        assert first == found[:limit]


def test_newlines_are_left_to_the_tree() -> None:
    assert joined([b"a", b"b\nc"], 2) is None
    assert not scannable(b"a\n.*")
    assert not scannable(b"a.>.b")  # the tree takes a ``>`` before the end as the whole subtree
    assert scannable(b"a.*.>")


_OPS = st.lists(
    st.tuples(st.sampled_from(["pub", "pub", "pub", "remove", "purge_subject"]), _SUBJECT, st.integers(0, 50)),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(ops=_OPS, filters=st.lists(_FILTER, min_size=1, max_size=4), flavour=st.sampled_from(["memory", "file"]))
def test_a_store_scanning_answers_as_one_with_its_tree(
    ops: list[tuple[str, bytes, int]], filters: list[bytes], flavour: str
) -> None:
    answers = []
    for scan_from in (1, 1 << 60):  # scans (then the tree), and the tree alone
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(stream_store, "_SCAN_FROM", scan_from)
            mp.setattr(stream_store, "_SCANS_PER_BUILD", 3)
            store = new_store(flavour)
            # Lookups interleaved with the changes, and at the end.
            answers.append((_replay(store, ops, filters), _answers(store, filters)))
    assert answers[0] == answers[1]


def _replay(store: Store, ops: list[tuple[str, bytes, int]], filters: list[bytes]) -> list[object]:
    seen = []
    for i, (op, subject, n) in enumerate(ops):
        if op == "pub":
            store.append(subject, b"", b"x")
        elif op == "remove" and store.msgs:
            store.remove(store.first_seq + n % (store.last_seq - store.first_seq + 1))
        elif op == "purge_subject":
            store.purge_ex(subject, 0, 0)
        if i % 7 == 0:
            seen.append(_answers(store, filters))
    return seen


def _answers(store: Store, filters: list[bytes]) -> object:
    out: list[object] = []
    for f in filters:
        last = store.load_last(f)
        nxt = store.load_next(f, 1)
        out.append(
            (
                sorted(store.subjects_totals(f).items()),
                store.num_pending(1, f),
                store.num_pending(1, f, True),
                store.multi_last_seqs([f], 0, 0),
                last.seq if last else 0,
                nxt.seq if nxt else 0,
            )
        )
    return out


def test_a_limited_scan_does_not_count_removed_subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan that stops after a few matches must not take a removed subject, or one stored
    again, for a live one: the filter would be remembered as matching fewer subjects than it
    does, and its next lookups would look in those alone."""
    monkeypatch.setattr(stream_store, "_SCAN_FROM", 1)
    monkeypatch.setattr(stream_store, "_FEW_SUBJECTS", 2)
    monkeypatch.setattr(stream_store, "_SCAN_SHORT", 1)
    store = new_store("memory")
    for s in (b"k.1", b"k.2", b"k.3", b"x", b"x", b"k.4"):
        store.append(s, b"", b"x")
    assert len(store.subjects_totals(b"k.*")) == 4  # joins the subjects: k.1 k.2 k.3 x k.4
    store.remove(1)
    store.remove(2)
    # A walk of one message (x) finds nothing; the first three scanned are k.1, k.2 (gone), k.3.
    assert store.load_next(b"k.*", 4).seq == 6  # type: ignore[union-attr]
    assert store.load_next(b"k.*", 4).seq == 6  # type: ignore[union-attr]
    store.append(b"k.1", b"", b"x")  # back, after the join: in the joined subjects twice
    assert store.load_next(b"k.*", 4).seq == 6  # type: ignore[union-attr]
    assert store.num_pending(1, b"k.*") == 3
    assert sorted(store.subjects_totals(b"k.*")) == [b"k.1", b"k.3", b"k.4"]
