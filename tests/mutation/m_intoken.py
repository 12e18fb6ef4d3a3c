"""Planted bugs of the file store's ``NumPending`` for a filter with a ``*``/``>`` inside a token
(``store/in_token_pending.py``: ``filestore_pending``; ``store/file_store.py``: ``_in_token_pending``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_PENDING = "jsemu/store/in_token_pending.py"
_FILE = "jsemu/store/file_store.py"
_TEST = ("tests/jetstream/consumers/test_in_token_filters.py::test_in_token_filters_as_on_nats_server",)

MUTATIONS: list[Mutation] = [
    Mutation(
        "intoken_file_gate_on_whole_token_wildcard",
        "store",
        _FILE,
        "        if is_literal(filter):\n            own = fss.get(filter)",
        "        if _has_in_token_wildcard(filter):\n            own = fss.get(filter)",
        _TEST,
        "every in-token filter gated by the literal subject: `p.*a.*` counts nothing over `p.*a.a`",
    ),
    Mutation(
        "intoken_file_unstored_literal_counted",
        "store",
        _PENDING,
        "        if not literal:\n            return 0\n",
        "",
        _TEST,
        "a literal `a*` nobody stored still counts: by the tree, or 1 from the first sequence",
    ),
    Mutation(
        "intoken_file_first_seq_by_tree",
        "store",
        _PENDING,
        "        if sseq <= first_seq:\n            return 1 if last_per_subject else len(literal)\n",
        "",
        _TEST,
        "from the first sequence a stored `a*` counts by the tree (`ab` too), not as the literal subject",
    ),
]
