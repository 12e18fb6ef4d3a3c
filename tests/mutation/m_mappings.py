"""Planted bugs in subject mappings (``subject_mapping.py``, ``config/mappings.py``, their
publish and trace hooks), each caught by the differential tests against nats-server."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_F = "tests/server/test_subject_mappings.py"
_C = "tests/config/test_mappings_config.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "mappings_no_sm_event",
        "server",
        "jsemu/server/connection.py",
        '                    trace.add("sm", to=mapped.decode("utf-8", "surrogateescape"))\n',
        "                    pass\n",
        (f"{_F}::test_trace_has_the_sm_event",),
        "a traced publish is mapped but its trace has no sm event",
    ),
    Mutation(
        "mappings_remainder_dropped",
        "server",
        "jsemu/server/subject_mapping.py",
        "    if total != 100 and spec.src not in seen:",
        "    if False:",
        (f"{_F}::test_weighted_remainder_goes_to_the_source",),
        "the weight a weighted mapping leaves short of 100 is lost, not sent to the source subject",
    ),
    Mutation(
        "mappings_literal_any_subject",
        "server",
        "jsemu/server/subject_mapping.py",
        "                if m.src != subject:\n                    continue\n",
        "                pass\n",
        (f"{_F}::test_hypothesis_published_subjects",),
        "a literal mapping source matches every subject",
    ),
    Mutation(
        "mappings_fwc_check",
        "config",
        "jsemu/server/subject_mapping.py",
        '    if "*" in tokens or (">" in tokens) != src_fwc or ">" in tokens[:-1] or "" in tokens:',
        '    if "*" in tokens or ">" in tokens[:-1] or "" in tokens:',
        (f"{_C}::test_bad_mapping_as_nats_server",),
        "a '>' destination for a source without '>' (or the reverse) is accepted",
    ),
    Mutation(
        "mappings_account_ignored",
        "server",
        "jsemu/server/accounts.py",
        "        self.mappings = SubjectMappings(list(config.mappings), server.rng) if config.mappings else None\n",
        "",
        (f"{_F}::test_account_mappings_apply_in_their_account",),
        "an account's own mappings are read but never applied",
    ),
]
