"""Subject rules shared by every layer: validation and wildcard matching.

The rules follow nats-server's ``sublist.go``: tokens are separated by ``.``; ``*`` matches
one token, ``>`` matches one or more trailing tokens; a token is a wildcard only when it
is exactly ``*`` or ``>`` (``foo*`` is a literal).
"""

from __future__ import annotations

__all__ = [
    "is_valid_literal_subject",
    "is_valid_sub_subject",
    "is_valid_subject",
    "subject_is_literal",
    "subject_is_subset_match",
    "subject_matches",
    "subjects_collide",
]

_SPACE_CHARS = (" ", "\t", "\n", "\r", "\f")


def is_valid_sub_subject(subject: str) -> bool:
    """Whether a SUB may use this subject (the check ``Sublist.Insert`` makes)."""
    if not subject:
        return False
    seen_fwc = False
    for token in subject.split("."):
        if not token or seen_fwc:
            return False
        if token == ">":
            seen_fwc = True
    return True


def is_valid_subject(subject: str) -> bool:
    """``IsValidSubject``: non-empty tokens, ``>`` last, no whitespace in tokens."""
    if not subject:
        return False
    seen_fwc = False
    for token in subject.split("."):
        if not token or seen_fwc:
            return False
        if len(token) > 1:
            if any(ch in token for ch in _SPACE_CHARS):
                return False
            continue
        if token == ">":
            seen_fwc = True
        elif token in _SPACE_CHARS:
            return False
    return True


def is_valid_literal_subject(subject: str) -> bool:
    """``IsValidLiteralSubject``: what pedantic mode requires of a publish subject."""
    for token in subject.split("."):
        if not token or token == "*" or token == ">":
            return False
    return True


def subject_is_literal(subject: str) -> bool:
    """True when no token is exactly ``*`` or ``>``."""
    for token in subject.split("."):
        if token == "*" or token == ">":
            return False
    return True


def subject_matches(subject: str, pattern: str) -> bool:
    """Whether the literal ``subject`` is matched by ``pattern`` (which may have wildcards)."""
    if subject == pattern:
        return True
    stoks = subject.split(".")
    ptoks = pattern.split(".")
    for i, ptok in enumerate(ptoks):
        if ptok == ">":
            return len(stoks) > i
        if i >= len(stoks):
            return False
        if ptok != "*" and ptok != stoks[i]:
            return False
    return len(stoks) == len(ptoks)


def subjects_collide(subj1: str, subj2: str) -> bool:
    """``SubjectsCollide``: whether some literal subject is matched by both patterns."""
    if subj1 == subj2:
        return True
    toks1 = subj1.split(".")
    toks2 = subj2.split(".")
    for t1, t2 in zip(toks1, toks2, strict=False):
        if t1 == ">" or t2 == ">":
            return True
        if t1 != t2 and t1 != "*" and t2 != "*":
            return False
    return len(toks1) == len(toks2)


def subject_is_subset_match(subject: str, test: str) -> bool:
    """``subjectIsSubsetMatch``: whether every subject ``subject`` matches is also matched by ``test``."""
    stoks = subject.split(".")
    ttoks = test.split(".")
    for i, ttok in enumerate(ttoks):
        if i >= len(stoks):
            return False
        stok = stoks[i]
        if ttok == ">":
            return True
        if ttok == "*":
            if stok == ">":
                return False
            continue
        if stok != ttok:
            return False
    return len(stoks) == len(ttoks)
