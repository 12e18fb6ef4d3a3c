"""Planted bugs of the subject tree's bulk build (``store/subject_tree.py``: ``insert_many``,
``paused_gc``) and of the store's use of it (``store/stream_store.py``: ``_wtree``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_TREE = "jsemu/store/subject_tree.py"
_STORE = "jsemu/store/stream_store.py"
_BULK = "tests/store/test_subject_tree_bulk.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "subjtree_bulk_single_token_under_empty",
        "store",
        _TREE,
        "parent = get_parent(head) if dot else root",
        "parent = get_parent(head)",
        (f"{_BULK}::test_bulk_build_answers_as_one_at_a_time",),
        "the parent cache keyed by the prefix alone: ``a`` (the root) and ``.a`` (under an empty token) share one",
    ),
    Mutation(
        "subjtree_bulk_parent_cached_by_tail",
        "store",
        _TREE,
        "parent = parents[head] = make_parent(head, dot)",
        "parent = parents[tail] = make_parent(head, dot)",
        (f"{_BULK}::test_bulk_build_answers_as_one_at_a_time",),
        "the parent node remembered under the wrong prefix: later subjects hang off another branch",
    ),
    Mutation(
        "subjtree_bulk_new_leaf_not_counted",
        "store",
        _TREE,
        "                    if tail not in leaves:\n                        added += 1\n",
        "                    if tail in leaves:\n                        added += 1\n",
        (f"{_BULK}::test_bulk_build_answers_as_one_at_a_time",),
        "the tree's size counts the subjects a bulk build replaced, not the ones it added",
    ),
    Mutation(
        "subjtree_fwc_one_level",
        "store",
        _TREE,
        "                yield from self._subtree(node)\n                continue\n",
        "                yield from (node.leaves or {}).values()\n                continue\n",
        ("tests/store/test_store_subject_tree.py::test_match_equals_brute_force", _BULK),
        "``>`` matches one more token only, not every deeper subject (now that leaves sit in their parent)",
    ),
    Mutation(
        "subjtree_bulk_gc_left_on",
        "store",
        "jsemu/store/collector.py",
        "    collecting = gc.isenabled()\n    gc.disable()\n",
        "    collecting = gc.isenabled()\n",
        (f"{_BULK}::test_bulk_build_pauses_the_collector",),
        "the collector runs through a million-node build (about a third of its time)",
    ),
    Mutation(
        "subjtree_topup_removed_subjects",
        "store",
        _STORE,
        "[(st.subject, st) for st in pending if get(st.subject) is st]",
        "[(st.subject, st) for st in pending]",
        (f"{_BULK}::test_store_top_up_leaves_out_what_went_away_meanwhile",),
        "a subject purged before the tree caught up joins it anyway (a wildcard finds a subject with no messages)",
    ),
    Mutation(
        "subjtree_rebuild_from_new_only",
        "store",
        _STORE,
        "                    self._tree.insert_many(fss.items())\n",
        "                    self._tree.insert_many((st.subject, st) for st in pending)\n",
        (f"{_BULK}::test_store_rebuild_keeps_what_the_tree_held",),
        "the rebuilt tree holds only the subjects new since the last lookup, not the ones before",
    ),
]
