"""Planted bugs of the file store's ``NumPending`` for a filter with a ``*``/``>`` inside a token
(``store/in_token_pending.py``: ``filestore_pending``; ``store/file_store.py``: ``_in_token_pending``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_PENDING = "jsemu/store/in_token_pending.py"
_FILE = "jsemu/store/file_store.py"
_STORE = "jsemu/store/stream_store.py"
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
    Mutation(
        "intoken_file_next_without_subset_match",
        "store",
        _FILE,
        "        if _has_star_led_token(filter):\n            return self._next_subset_match(filter, start)\n",
        "",
        _TEST,
        "the file store's one-filter delivery reads `*a` literally: `p.*a.*` misses `p.a.a`",
    ),
    Mutation(
        "intoken_file_next_no_first_skip",
        "store",
        _FILE,
        "        if start <= self._first:\n            firsts = ",
        "        if start < self._first:\n            firsts = ",
        _TEST,
        "no skip to the tree's first match on the first call: `p.*a.*` delivers `p.a.a` stored before `p.*a.a`",
    ),
    Mutation(
        "intoken_multi_filters_subset_match",
        "store",
        _STORE,
        "                s = StreamStore._next_wildcard(self, f, start)\n",
        "                s = self._next_wildcard(f, start)\n",
        _TEST,
        "two filters (a sublist) read `*a` as the file store's one-filter walk does: `p.a.a` delivered",
    ),
    Mutation(
        "intoken_lps_list_at_resume_kept",
        "jetstream",
        "jsemu/jetstream/consumers/start_position.py",
        "                if seqs and sseq >= resume:\n",
        "                if seqs and sseq > resume:\n",
        _TEST,
        "a last-per-subject list holding only the stream's last message kept: `a*` over `a`, `ab` delivers `ab`",
    ),
]
