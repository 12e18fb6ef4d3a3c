"""Mutations of the two slow paths of ``perfleads``: the first wildcard lookups answered by a
scan of the joined subjects (store/subject_scan.py, StreamStore._match) and the batched
replay of a write-ahead log."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_SCAN = "tests/store/test_subject_scan.py"
_STATEFUL = "tests/store/test_store_stateful.py"
_STRETCH = "tests/store/test_wal_stretch.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "perfleads_scan_star_spans_tokens",
        "store",
        "jsemu/store/subject_scan.py",
        '            parts.append(rb"[^.\\n]*")',
        '            parts.append(rb"[^\\n]*")',
        (_SCAN,),
        "a scanned `*` matches several tokens (`a.*` finds `a.b.c`)",
    ),
    Mutation(
        "perfleads_scan_tokens_unescaped",
        "store",
        "jsemu/store/subject_scan.py",
        "            parts.append(re.escape(tok))",
        "            parts.append(tok)",
        (_SCAN,),
        "a literal token read as a regular expression (`a+` matches `aa`)",
    ),
    Mutation(
        "perfleads_scan_misses_new_subjects",
        "store",
        "jsemu/store/stream_store.py",
        "            blob = None if tail is None else blob + tail[1:]",
        "            blob = None if tail is None else blob",
        (_SCAN, _STATEFUL),
        "subjects stored after the first scan are never found by the next scans",
    ),
    Mutation(
        "perfleads_limited_scan_counts_stale",
        "store",
        "jsemu/store/stream_store.py",
        "        if limit > 0 and len(found) < len(subjects):",
        "        if False:",
        (_SCAN,),
        "a scan stopped after a few matches counts removed or repeated subjects: 'few' is wrong",
    ),
    Mutation(
        "perfleads_stretch_checksums_unchecked",
        "store",
        "jsemu/store/wal_stretch.py",
        "    if sums != stored:",
        "    if False:",
        (_STRETCH,),
        "a stretch of same-shaped frames is taken without its checksums: a flipped byte is replayed",
    ),
    Mutation(
        "perfleads_stretch_layout_unchecked",
        "store",
        "jsemu/store/wal_stretch.py",
        "    for off in (0, 1, 2, 3, 8, 9, 10, 11, 12, *range(13 + n, 21 + n)):",
        "    for off in (0, 1, 2, 3, 8):",
        (_STRETCH,),
        "frames of one length but with headers, or another subject length, join a stretch of plain ones",
    ),
    Mutation(
        "perfleads_stretch_past_a_bad_checksum",
        "store",
        "jsemu/store/wal_stretch.py",
        "        end = pos + count * width\n        rows = view[pos:end]",
        "        rows = view[pos:end]",
        (_STRETCH,),
        "a stretch cut at a bad checksum still returns the frames after it",
    ),
    Mutation(
        "perfleads_one_subject_run_first_twice",
        "store",
        "jsemu/store/stream_store.py",
        "                first += 1\n            if first < seq + n:",
        "            if first < seq + n:",
        ("tests/store/test_append_run.py", _STATEFUL),
        "a replayed run on one new subject indexes its first message twice",
    ),
]
