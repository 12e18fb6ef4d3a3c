"""Subject rules shared by every layer: validation and wildcard matching.

The rules follow nats-server's ``sublist.go``: tokens are separated by ``.``; ``*`` matches
one token, ``>`` matches one or more trailing tokens; a token is a wildcard only when it
is exactly ``*`` or ``>`` (``foo*`` is a literal).
"""

from __future__ import annotations

__all__ = [
    "is_subset_match_tokens",
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


def _wildcards(tokens: list[str]) -> tuple[bool, bool]:
    """Go ``analyzeTokens``: whether some token is exactly ``*``, exactly ``>``."""
    return "*" in tokens, ">" in tokens


def _tokens_can_match(t1: str, t2: str) -> bool:
    """Go ``tokensCanMatch``: a token *starting* with ``*`` or ``>`` can match anything."""
    if not t1 or not t2:
        return False
    return t1[0] in "*>" or t2[0] in "*>" or t1 == t2


def subjects_collide(subj1: str, subj2: str) -> bool:
    """``SubjectsCollide``: whether some literal subject is matched by both patterns.

    Go's quirks kept: with a literal on one side it is ``isSubsetMatchTokenized``; with
    wildcards on both, a token that merely starts with ``*`` or ``>`` counts as one."""
    if subj1 == subj2:
        return True
    toks1 = subj1.split(".")
    toks2 = subj2.split(".")
    pwc1, fwc1 = _wildcards(toks1)
    pwc2, fwc2 = _wildcards(toks2)
    l1, l2 = not (pwc1 or fwc1), not (pwc2 or fwc2)
    if l1 and l2:
        return False
    if l1:
        return is_subset_match_tokens(toks1, toks2)
    if l2:
        return is_subset_match_tokens(toks2, toks1)
    n1, n2 = len(toks1), len(toks2)
    if not fwc1 and not fwc2 and n1 != n2:
        return False
    if n1 != n2 and ((n1 < n2 and not fwc1) or (n2 < n1 and not fwc2)):
        return False
    return all(_tokens_can_match(t1, t2) for t1, t2 in zip(toks1, toks2, strict=False))


def subject_is_subset_match(subject: str, test: str) -> bool:
    """``subjectIsSubsetMatch``: whether every subject ``subject`` matches is also matched by ``test``."""
    return is_subset_match_tokens(subject.split("."), test.split("."))


def is_subset_match_tokens(stoks: list[str], ttoks: list[str]) -> bool:
    """Go ``isSubsetMatchTokenized``, quirk included: a ``test`` token that merely *starts*
    with ``*`` (``*a``) matches any literal token, so ``foo.*a`` covers ``foo.b``
    (nats-server 2.15.1 refuses consumer filters ``[foo.b, foo.*a]`` as overlapping)."""
    for i, ttok in enumerate(ttoks):
        if i >= len(stoks) or not ttok:
            return False
        if ttok == ">":
            return True
        stok = stoks[i]
        if not stok or stok == ">":
            return False
        if stok == "*":
            if ttok != "*":
                return False
            continue
        if ttok[0] != "*" and stok != ttok:
            return False
    return len(stoks) == len(ttoks)
