"""Planted bugs of the in-token wildcard filters (``a*``, ``*a``, ``a>``) and the newest nats.py
client harness: each breaks one answer nats-server 2.15.1 gives such a filter."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

IN_TOKEN = "tests/jetstream/consumers/test_in_token_filters.py"
NEWEST = "tests/clients/test_newest_nats_py.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "newpy_file_lps_pending_by_tree",
        "store",
        "jsemu/store/file_store.py",
        "            literal = own.seqs if own is not None else ()\n",
        "",
        (IN_TOKEN, NEWEST),
        "the file store counts a last-per-subject consumer's in-token filter by its tree: a KV "
        "keys('a*') then lists keys nats-server does not",
    ),
    Mutation(
        "newpy_memstore_partial_ignored",
        "store",
        "jsemu/store/in_token_pending.py",
        "    if not have_partial:\n        return msgs\n",
        "    if True:\n        return msgs\n",
        (IN_TOKEN,),
        "the memory store never rescans a straddling subject with the literal reading",
    ),
    Mutation(
        "newpy_pending_multi_by_tree",
        "jetstream",
        "jsemu/jetstream/consumers/consumer.py",
        "            return extra + store.num_pending_multi(start, self.filters)\n",
        "            return extra + sum(store.num_pending(start, f) for f in self.filters)\n",
        (IN_TOKEN,),
        "two or more filters counted one by one (by the tree) instead of as a literal sublist",
    ),
    Mutation(
        "newpy_subset_star_prefix_literal",
        "subjects",
        "jsemu/subjects.py",
        '        if ttok[0] != "*" and stok != ttok:\n',
        "        if stok != ttok:\n",
        (IN_TOKEN,),
        "a filter token starting with '*' no longer covers any token: [p.*a, p.zz] is accepted",
    ),
    Mutation(
        "newpy_file_subjects_totals_literal",
        "store",
        "jsemu/store/file_store.py",
        "        if filter and _has_in_token_wildcard(filter):\n            self._tick()\n",
        "        if False:\n            self._tick()\n",
        (IN_TOKEN,),
        "stream info subjects_filter with an in-token wildcard read literally on the file store",
    ),
]
