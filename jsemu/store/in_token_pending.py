"""Go memstore's ``NumPending`` for a filter with a ``*`` or ``>`` inside a token (``a*``).

``filteredStateLocked`` answers in two passes. The first walks the subject tree
(``fss.Match``), whose layout can make an in-token character act as a wildcard
(:mod:`.go_stree`), and sums the matched subjects' totals. Only when a matched subject straddles
the start sequence ("a partial") does it scan messages, and that scan's ``isMatch`` reads the
filter differently: as a literal subject when it has no whole-token wildcard, else with
``isSubsetMatchTokenized`` (where a token starting with ``*`` matches any token). The result
mixes the readings: with one message per subject a new last-per-subject consumer on ``a*``
counts ``ab`` and ``ac``; with two, it counts nothing.

This is a port of that function for such filters, given each subject as its sorted sequences:
the ones the tree matched, and (asked for only when there is a partial) the ones ``isMatch``
accepts. Go keeps the count in a uint64; a negative result is reported as 0 here.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence

__all__ = ["memstore_pending"]


def memstore_pending(
    first_seq: int,
    last_seq: int,
    matched: Iterable[tuple[int, int, int]],
    scanned: Callable[[], list[Sequence[int]]],
    sseq: int,
    last_per_subject: bool,
) -> int:
    """``filteredStateLocked(sseq, filter, lastPerSubject).Msgs`` of a memory store holding
    messages ``first_seq..last_seq``: ``matched`` holds (messages, first, last) of each subject
    the tree matched, ``scanned()`` the sorted sequences of each subject ``isMatch`` accepts."""
    sseq = max(sseq, first_seq)
    if sseq > last_seq:
        return 0
    msgs = ss_first = ss_last = 0
    have_partial = False
    total_skipped = 0
    for n, f, last in matched:
        if sseq <= last:
            have_partial = have_partial or sseq > f
            if last_per_subject:
                n, f = 1, last
            msgs += n
            ss_first = f if ss_first == 0 or f < ss_first else ss_first
            ss_last = max(ss_last, last)
        else:
            total_skipped += n
    if not have_partial:
        return msgs
    first, last = max(ss_first, sseq), ss_last
    subjects = scanned()
    if last - first < first - first_seq + last_seq - ss_last:
        # Recount [first, last] with isMatch.
        counts = [bisect_right(seqs, last) - bisect_left(seqs, first) for seqs in subjects]
        return sum(1 for c in counts if c) if last_per_subject else sum(counts)
    # Adjust the tree's totals by the isMatch messages outside [first, last]; Go's range at
    # the end stops short of the last sequence.
    msgs += total_skipped
    adjust = 0
    for seqs in subjects:
        before = bisect_left(seqs, first)
        after = bisect_left(seqs, last_seq) - bisect_right(seqs, last)
        if not last_per_subject:
            adjust += before + max(after, 0)
        elif before:
            adjust += len(seqs) if seqs[-1] < first else 0
        elif after > 0:
            adjust += 1
    return max(0, msgs - adjust)
