"""The planted-bug list (``tests/mutation/mutations.py``) still fits the tree.

Cheap and in the normal suite: every anchor must occur exactly once in its file, so code that
moves makes its entry fail here (to be re-targeted) instead of silently planting nothing, and
every entry must name tests that exist. The mutation run itself is ``python -m tests.mutation``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutation.mutations import MUTATIONS, Mutation, anchor_count

ROOT = Path(__file__).resolve().parents[1]


def test_names_are_unique_and_the_list_is_not_trivial() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names))
    assert len(MUTATIONS) >= 18
    assert {"server", "store", "jetstream", "protocol"} <= {m.layer for m in MUTATIONS}


@pytest.mark.parametrize("m", MUTATIONS, ids=lambda m: m.name)
def test_anchor_occurs_exactly_once(m: Mutation) -> None:
    assert anchor_count(ROOT, m) == 1, f"{m.name}: anchor must occur exactly once in {m.file}; re-target it"
    assert m.replacement != m.original


@pytest.mark.parametrize("m", MUTATIONS, ids=lambda m: m.name)
def test_named_tests_exist(m: Mutation) -> None:
    assert m.tests
    for target in m.tests:
        path, _, node = target.partition("::")
        file = ROOT / path
        assert file.exists(), target
        if node:
            assert node.split("::")[0].split("[")[0] in file.read_text(), target
