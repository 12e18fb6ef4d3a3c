"""Planted bugs of ``python -m benchmarks --runs`` (``benchmarks/suite.py``: ``Row.ratio``,
``Row.spread``, ``merge_runs``) and of the wildcard lookups that take a filter's remembered
subjects (``store/stream_store.py``: ``_few_matches``, ``_known_few``, the match memo)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_SUITE = "benchmarks/suite.py"
_TEST = "tests/test_benchmark_runs.py"
_STORE = "jsemu/store/stream_store.py"
_MEMO = "tests/store/test_wildcard_memo.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "bench_ratio_of_medians",
        "benchmarks",
        _SUITE,
        "        if self.ratios:\n            return statistics.median(self.ratios)\n",
        "        if False:\n            return statistics.median(self.ratios)\n",
        (f"{_TEST}::test_medians_ratios_and_spread",),
        "a repeated row's ratio taken from the two medians, not the median of each run's own ratio",
    ),
    Mutation(
        "bench_spread_first_last",
        "benchmarks",
        _SUITE,
        "        return min(self.ratios), max(self.ratios)\n",
        "        return self.ratios[0], self.ratios[-1]\n",
        (f"{_TEST}::test_medians_ratios_and_spread", f"{_TEST}::test_table_shows_the_spread"),
        "the spread shows the first and last run's ratios instead of the lowest and highest",
    ),
    Mutation(
        "bench_merge_keeps_last_run",
        "benchmarks",
        _SUITE,
        "                into.runs.setdefault(kind, []).append(value)\n",
        "                into.runs[kind] = [value]\n",
        (f"{_TEST}::test_medians_ratios_and_spread", f"{_TEST}::test_each_section_runs_n_times_in_turn"),
        "only the last run's figure kept per server: the median is one run's",
    ),
    Mutation(
        "memo_kept_for_new_subject",
        "store",
        _STORE,
        "            if self._match_memo:\n                self._match_memo.clear()\n        else:\n",
        "            pass\n        else:\n",
        (f"{_MEMO}::test_remembered_subjects_follow_subjects_coming_and_going",),
        "a subject new to the store leaves the remembered matches alone: next/prev by wildcard miss it",
    ),
    Mutation(
        "memo_kept_for_gone_subject",
        "store",
        _STORE,
        "            del self._fss[subject]\n            self._match_memo.clear()\n            self._tree.remove(subject)\n"
        "            return\n        if seqs[0] == seq:\n",
        "            del self._fss[subject]\n            self._tree.remove(subject)\n"
        "            return\n        if seqs[0] == seq:\n",
        (f"{_MEMO}::test_remembered_subjects_follow_subjects_coming_and_going",),
        "a subject whose last message goes stays remembered: its stale index answers next/prev",
    ),
    Mutation(
        "memo_partial_subject_list",
        "store",
        _STORE,
        "            if len(found) > _FEW_SUBJECTS:\n                return None\n            if len(memo) >= _MEMO_MAX_FILTERS:\n",
        "            memo[filter] = found\n            if len(found) > _FEW_SUBJECTS:\n                return None\n"
        "            if len(memo) >= _MEMO_MAX_FILTERS:\n",
        (f"{_MEMO}::test_a_lookup_remembers_no_partial_list_for_multi_last",),
        "a next lookup remembers the cut-short list of a filter with many subjects: multi-last misses some",
    ),
    Mutation(
        "verdicts_shared_by_filters",
        "store",
        _STORE,
        "        verdicts = self._verdicts\n        memo = verdicts.get(filter)\n",
        '        verdicts = self._verdicts\n        filter = b"*"\n        memo = verdicts.get(filter)\n',
        (f"{_MEMO}::test_remembered_subjects_follow_subjects_coming_and_going",),
        "a walk's remembered verdicts shared by every filter: one filter's match answers another's",
    ),
]
