"""Go's ``NumPending`` (memory and file store) for a filter with a ``*`` or ``>`` inside a token (``a*``).

Memory store.

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

File store (:func:`filestore_pending`). A filter with no whole-token wildcard (``a*``, for
``subjectHasWildcard`` a literal) first goes by that literal subject: nothing when it is not
stored, and from the stream's first sequence its own messages (one, last per subject). Past the
first sequence, and for any filter with a whole-token wildcard (``*.a*``), the count comes from
the per-subject tree (``psim``/``fss.Match``, so by its layout) and is corrected by a scan whose
``isMatch`` reads the filter as above: last per subject, a subject the tree matched that
``isMatch`` accepts loses its count for messages before the start unless it has one after;
otherwise a subject straddling the start makes the scan recount everything from the start.
That literal gate is what nats-server 2.15.1 answers (a new last-per-subject consumer on ``a*``
over ``ab``, ``ac`` counts 0; over ``ab``, ``a*`` counts 1), not what the Go sources at hand
read. The stream is taken as one message block, as it is while it is small.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

__all__ = ["SortedSeqs", "filestore_pending", "memstore_pending"]


class SortedSeqs(Protocol):
    """A subject's ascending sequences as the store keeps them (an ``array`` or a ``SortedList``)."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> int: ...


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


def filestore_pending(
    first_seq: int,
    literal: SortedSeqs | None,
    matched: Sequence[tuple[bytes, SortedSeqs]],
    is_match: Callable[[bytes], bool],
    scanned: Callable[[], list[SortedSeqs]],
    sseq: int,
    last_per_subject: bool,
) -> int:
    """``NumPending(sseq, filter, lastPerSubject)`` of a file store holding messages from
    ``first_seq`` (``sseq`` already at least that) in one block: ``literal`` holds the sorted
    sequences of the filter as a stored subject (empty when it is not), or is None when the
    filter has a whole-token wildcard; ``matched`` each subject the tree matches, with its
    sorted sequences; ``is_match`` Go's ``isMatch``; ``scanned()`` the sorted sequences of each
    subject ``isMatch`` accepts."""
    if literal is not None:
        if not literal:
            return 0
        if sseq <= first_seq:
            return 1 if last_per_subject else len(literal)
    if last_per_subject:
        total = len(matched)
        if sseq > first_seq:
            for subject, seqs in matched:
                if seqs[-1] < sseq and is_match(subject):
                    total -= 1
        return total
    total = 0
    for _, seqs in matched:
        if sseq <= seqs[0]:
            total += len(seqs)
        elif sseq <= seqs[-1]:
            return sum(len(seqs) - bisect_left(seqs, sseq) for seqs in scanned())
    return total
