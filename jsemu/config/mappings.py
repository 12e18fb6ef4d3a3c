"""A ``mappings`` block (top level: the global account; or in an account), read as
nats-server 2.15.1 reads it (``parseAccountMappings`` / ``parseMappingDest`` in opts.go):
``"src": "dest"``, ``"src": {destination: d, weight: 40%}`` or a list of such maps. Each
entry is also built (``server/subject_mapping.py``) so that a bad one is refused at start,
with nats-server's words and the position of its token.
"""

from __future__ import annotations

from typing import Any

from ..protocol.gojson.runes import go_quote
from ..server.subject_mapping import MappingDest, MappingError, MappingSpec, build_mapping
from ..subjects import is_valid_subject

__all__ = ["MappingsConfigError", "parse_mappings"]


class MappingsConfigError(Exception):
    """A refused entry: the message, and the key path (below ``mappings``) of its token
    (empty: the block itself)."""

    def __init__(self, message: str, key: tuple[str, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


def _weight(value: Any, key: tuple[str, ...]) -> int:
    if isinstance(value, str):
        text = value.removesuffix("%")
        digits = text[1:] if text[:1] in ("+", "-") else text
        if not digits or not digits.isascii() or not digits.isdigit():
            raise MappingsConfigError(f"Invalid weight {go_quote(text)} for mapping destination", key)
        number = int(text)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise MappingsConfigError(f"Unknown entry type for weight of {value}", key)
    if number > 100 or number < 0:
        raise MappingsConfigError(f"Invalid weight {number} for mapping destination", key)
    return number


def _dest(value: Any, key: tuple[str, ...]) -> MappingDest:
    if not isinstance(value, dict):
        raise MappingsConfigError("Expected an entry for the mapping destination", key)
    subject, weight = "", 0
    for field, item in value.items():
        where = (*key, field)
        lower = field.lower()
        if lower in ("dest", "destination"):
            if not isinstance(item, str):
                raise MappingsConfigError("Expected an entry for the mapping destination", where)
            subject = item
        elif lower == "weight":
            weight = _weight(item, where)
        elif lower == "cluster":
            raise MappingsConfigError('"cluster": cluster-scoped mappings are not supported by jsemu yet', where)
        else:
            raise MappingsConfigError(f"Unknown field {go_quote(field)} for mapping destination", where)
    if not subject:
        raise MappingsConfigError("a mapping destination without a subject is not supported by jsemu", key)
    return MappingDest(subject, weight)


def parse_mappings(block: Any) -> list[MappingSpec]:
    """The block's mappings in their order, or :class:`MappingsConfigError`."""
    if not isinstance(block, dict):
        raise MappingsConfigError(f"Expected map entries for mappings, got {block}", ())
    specs = []
    for src, value in block.items():
        key = (src,)
        if not is_valid_subject(src):
            raise MappingsConfigError(f"Subject {go_quote(src)} is not a valid subject", ())
        if isinstance(value, str):
            spec = MappingSpec(src, (MappingDest(value, 100),), single=True)
        elif isinstance(value, list):
            spec = MappingSpec(src, tuple(_dest(item, (*key, str(i))) for i, item in enumerate(value)))
        else:
            spec = MappingSpec(src, (_dest(value, key),))
        try:
            build_mapping(spec)
        except MappingError as exc:
            to = f" to {go_quote(value)}" if spec.single else ""
            raise MappingsConfigError(f"Error adding mapping for {go_quote(src)}{to} : {exc}", key) from None
        specs.append(spec)
    return specs
