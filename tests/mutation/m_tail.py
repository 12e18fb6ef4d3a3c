"""Planted bugs of ``python -m benchmarks --runs`` (``benchmarks/suite.py``: ``Row.ratio``,
``Row.spread``, ``merge_runs``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_SUITE = "benchmarks/suite.py"
_TEST = "tests/test_benchmark_runs.py"

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
]
