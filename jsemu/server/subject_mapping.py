"""Subject mappings (``mappings { "src": "dest" }``), as nats-server 2.15.1 applies them
(``Account.AddWeightedMappings`` / ``selectMappedSubject`` in server/accounts.go).

A mapping has a source subject (wildcards allowed) and weighted destinations. nats-server
adds the source itself as a destination carrying the weight the others leave short of 100
(unless it is listed itself), sorts the destinations by weight and keeps running totals;
a publish whose subject matches the first matching source (in the order mappings were
added) goes to the destination whose running total first exceeds a random 0..99 draw. A
single destination of weight 100 is chosen without a draw. Destinations are subject
transforms (``jsemu/subject_transform.py``): ``$N`` / ``{{wildcard(N)}}`` and ``>``.

Only the publishing server maps (publishes from clients, before routing), so routed
messages are not mapped again. ``cluster``-scoped destinations are refused for now.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..subject_transform import SubjectTransform, TransformError
from ..subjects import is_subset_match_tokens, is_valid_subject

__all__ = ["MappingDest", "MappingError", "MappingSpec", "SubjectMappings", "build_mapping"]


class MappingError(ValueError):
    """A mapping nats-server refuses (the text after ``Error adding mapping for ...``)."""


@dataclass(frozen=True, slots=True)
class MappingDest:
    subject: str
    #: 0..100 (a percentage).
    weight: int = 100


@dataclass(frozen=True, slots=True)
class MappingSpec:
    """One ``mappings`` entry as configured: source and destinations."""

    src: str
    dests: tuple[MappingDest, ...]
    #: Whether it was given as one string (its errors name the destination).
    single: bool = False


class _Mapping:
    __slots__ = ("cumulative", "literal", "src", "src_tokens", "transforms", "weighted")

    def __init__(self, src: str, dests: list[tuple[SubjectTransform, int]]) -> None:
        self.src = src.encode()
        self.src_tokens = src.split(".")
        self.literal = "*" not in self.src_tokens and ">" not in self.src_tokens
        self.transforms = [t for t, _ in dests]
        total = 0
        self.cumulative: list[int] = []
        for _, weight in dests:
            total += weight
            self.cumulative.append(total)
        self.weighted = not (len(dests) == 1 and dests[0][1] == 100)


def _check_dest(src: str, dest: str) -> None:
    """nats-server's ``ValidateMapping`` and ``NewSubjectTransform`` checks, its words."""
    if not dest or " " in dest or "\t" in dest:
        raise MappingError("invalid mapping destination: invalid transform")
    src_fwc = src.split(".")[-1] == ">"
    tokens = dest.split(".")
    if "*" in tokens or (">" in tokens) != src_fwc or ">" in tokens[:-1] or "" in tokens:
        raise MappingError("invalid subject")


def _transform(src: str, dest: str) -> SubjectTransform:
    _check_dest(src, dest)
    try:
        return SubjectTransform(src, dest)
    except TransformError as exc:
        raise MappingError(str(exc)) from None


def build_mapping(spec: MappingSpec) -> _Mapping:
    """The mapping of one entry, or :class:`MappingError` with nats-server's reason."""
    if not is_valid_subject(spec.src):
        raise MappingError("invalid subject")
    seen: set[str] = set()
    total = 0
    dests: list[tuple[SubjectTransform, int]] = []
    for dest in spec.dests:
        if dest.subject in seen:
            raise MappingError(f'duplicate entry for "{dest.subject}"')
        seen.add(dest.subject)
        if dest.weight > 100:
            raise MappingError("individual weights need to be <= 100")
        total += dest.weight
        if total > 100:
            raise MappingError("total weight needs to be <= 100")
        dests.append((_transform(spec.src, dest.subject), dest.weight))
    if total != 100 and spec.src not in seen:
        # The source itself takes what is left ("loss" only when it is listed explicitly).
        dests.append((_identity(spec.src), 100 - total if dests else 100))
    dests.sort(key=lambda d: d[1])  # stable, as Go's sort.Slice on these few is in practice
    return _Mapping(spec.src, dests)


def _identity(src: str) -> SubjectTransform:
    """The transform that leaves a subject matching ``src`` as it is."""
    out = []
    n = 0
    for tok in src.split("."):
        if tok == "*":
            n += 1
            out.append(f"${n}")
        else:
            out.append(tok)
    return SubjectTransform(src, ".".join(out))


class SubjectMappings:
    """An account's mappings, in the order they were added."""

    __slots__ = ("_mappings", "_rng")

    def __init__(self, specs: list[MappingSpec], rng: random.Random) -> None:
        by_src: dict[str, _Mapping] = {}
        for spec in specs:
            by_src[spec.src] = build_mapping(spec)  # a later one replaces an earlier one
        self._mappings = list(by_src.values())
        self._rng = rng

    def select(self, subject: bytes) -> bytes | None:
        """The mapped subject (b"" when a weighted mapping drops it), or None when no mapping
        matches."""
        tokens: list[str] | None = None
        for m in self._mappings:
            if m.literal:
                if m.src != subject:
                    continue
            else:
                if tokens is None:
                    tokens = subject.decode("utf-8", "surrogateescape").split(".")
                if not is_subset_match_tokens(tokens, m.src_tokens):
                    continue
            if not m.weighted:
                index = 0
            else:
                draw = self._rng.randrange(100)
                index = next((i for i, total in enumerate(m.cumulative) if draw < total), -1)
                if index < 0:
                    return b""
            mapped = m.transforms[index].match(subject)
            return mapped if mapped is not None else subject
        return None
