"""Subject transforms (``subject_transform`` of a stream), the common part of nats-server's
``subject_transform.go``: wildcard references ``$N`` / ``{{wildcard(N)}}`` and a trailing
``>``. Other mapping functions (partition, split, slice, ...) are refused rather than
applied wrongly.
"""

from __future__ import annotations

import re

__all__ = ["SubjectTransform", "TransformError"]

_WILDCARD_FN = re.compile(r"^\{\{\s*[wW]ildcard\s*\(\s*(\d+)\s*\)\s*\}\}$")
_DOLLAR = re.compile(r"^\$(\d+)$")
_FUNCTION = re.compile(r"^\{\{\s*([A-Za-z]+)\s*\(")
#: Mapping functions nats-server knows (``indexPlaceHolders``); jsemu applies only wildcard.
_GO_FUNCTIONS = frozenset(
    ("wildcard", "partition", "splitfromleft", "splitfromright", "slicefromleft", "slicefromright")
    + ("split", "left", "right", "random")
)


class TransformError(ValueError):
    """The transform cannot be built (an unsupported function or a bad reference)."""


class SubjectTransform:
    """Maps subjects matching ``src`` onto ``dest``."""

    __slots__ = ("_dest", "_fwc", "_src")

    def __init__(self, src: str, dest: str) -> None:
        src = src or ">"
        self._src = src.split(".")
        wildcards = [i for i, tok in enumerate(self._src) if tok == "*"]
        self._fwc = self._src[-1] == ">"
        out: list[str | int] = []
        for tok in dest.split("."):
            m = _DOLLAR.match(tok) or _WILDCARD_FN.match(tok)
            if m:
                index = int(m.group(1))
                if not wildcards and not self._fwc:
                    raise TransformError(f"invalid mapping destination: wildcard index out of range in {tok}")
                if not 1 <= index <= len(wildcards):
                    raise TransformError(
                        f"invalid mapping destination: wildcard index out of range in {tok}: [{index}]"
                    )
                out.append(wildcards[index - 1])
            elif tok.startswith("{{"):
                fn = _FUNCTION.match(tok)
                if fn is None or fn.group(1).lower() not in _GO_FUNCTIONS:
                    raise TransformError(f"invalid mapping destination: unknown function in {tok}")
                raise TransformError(f"unsupported mapping function {tok}")
            elif tok == ">":
                if not self._fwc:
                    raise TransformError("'>' in the destination needs '>' in the source")
                out.append(-1)
            else:
                out.append(tok)
        self._dest = out

    def match(self, subject: bytes) -> bytes | None:
        """The transformed subject, or None when ``subject`` does not match ``src``."""
        toks = subject.decode("utf-8", "surrogateescape").split(".")
        src = self._src
        if self._fwc:
            if len(toks) < len(src):
                return None
            head = src[:-1]
        else:
            if len(toks) != len(src):
                return None
            head = src
        for pat, tok in zip(head, toks, strict=False):
            if pat != "*" and pat != tok:
                return None
        parts: list[str] = []
        for item in self._dest:
            if isinstance(item, str):
                parts.append(item)
            elif item == -1:
                parts.extend(toks[len(src) - 1 :])
            else:
                parts.append(toks[item])
        return ".".join(parts).encode("utf-8", "surrogateescape")
