"""Wildcard matching without the subject tree: one regular-expression pass over all subjects.

Why: the store builds its :class:`~.subject_tree.SubjectTree` lazily, on the first wildcard
lookup after new subjects arrived (the publish path never pays for it). For a stream that took a
million distinct subjects, that first build is a Python loop over a million subjects plus the
garbage collection of a million new objects: about half a second, where nats-server (whose tree
is kept up to date at store time) answers in milliseconds. Keeping the tree up to date on the
publish path would slow every ingest of new subjects instead.

A lookup does not need the tree, though. The subjects joined by newlines are one ``bytes`` object
(a C-speed join of the index's keys), and a filter is a regular expression over it: each literal
token escaped, ``*`` as ``[^.\\n]*`` (one token, possibly empty, exactly as the tree's ``*`` takes
any child), ``>`` as ``[^\\n]*`` (the rest: the tree's whole subtree). The pattern starts with the
newline before a subject, so a filter with a literal first token is found by the regex engine's
literal-prefix search, a few milliseconds for a million subjects; any other filter still runs in
C (tens of milliseconds). The same subjects as :meth:`SubjectTree.match` (``tests/store/
test_subject_scan.py`` compares them with hypothesis); the order is the join's, not the tree's
(callers never depend on either).

A subject or filter holding a newline would break the framing; :func:`joined` returns ``None``
for such a set of subjects and :func:`scan` is never asked with such a filter
(:func:`scannable`), so the caller falls back to the tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["joined", "pattern", "scan", "scannable"]

_NL = b"\n"
_STAR = b"*"
_FWC = b">"


def scannable(filter: bytes) -> bool:
    """Whether :func:`scan` answers ``filter`` as the tree does: no newline inside it, and no
    ``>`` before its last token (the tree takes such a ``>`` as the whole subtree)."""
    return _NL not in filter and _FWC not in filter.split(b".")[:-1]


def joined(subjects: Iterable[bytes], count: int) -> bytes | None:
    """The ``count`` subjects as ``\\n<s1>\\n<s2>...\\n``, or None when one holds a newline."""
    if not count:
        return _NL
    blob = _NL + _NL.join(subjects) + _NL
    return blob if blob.count(_NL) == count + 1 else None


@lru_cache(maxsize=256)
def pattern(filter: bytes) -> re.Pattern[bytes]:
    """The expression matching a whole line of the joined subjects that ``filter`` matches
    (its one group is the subject)."""
    parts = []
    for tok in filter.split(b"."):
        if tok == _STAR:
            parts.append(rb"[^.\n]*")
        elif tok == _FWC:
            parts.append(rb"[^\n]*")
        else:
            parts.append(re.escape(tok))
    return re.compile(rb"\n(" + rb"\.".join(parts) + rb")(?=\n)")


def scan(blob: bytes, filter: bytes, limit: int = 0) -> tuple[list[bytes], int]:
    """The subjects of ``blob`` (from :func:`joined`) that ``filter`` matches, in blob order,
    the first ``limit`` of them when ``limit`` > 0; and how many bytes of ``blob`` were read."""
    expr = pattern(filter)
    if limit <= 0:
        return expr.findall(blob), len(blob)
    found: list[bytes] = []
    for m in expr.finditer(blob):
        found.append(m.group(1))
        if len(found) >= limit:
            return found, m.end()
    return found, len(blob)
