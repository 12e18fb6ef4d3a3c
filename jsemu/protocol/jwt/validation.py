"""The blocking part of nats-io/jwt v2's validation of an account's exports and imports.

nats-server loads an account JWT only when ``AccountClaims.Validate`` finds no blocking issue
(``verifyAccountClaims``): one bad export or import, or more of them than the account's limits
allow, makes the whole account unusable and its users are refused at login. This module repeats
those checks in their order and words (``Export.Validate``, ``Exports.Validate``,
``Import.Validate`` without the activation token, which the server checks itself, ``Imports``'
overlapping service subjects, ``RenamingSubject.Validate`` for a ``local_subject`` and the
``imports`` / ``exports`` / ``wildcards`` limits). Only the first issue is needed to refuse, but
all are listed, as Go lists them. A field of the wrong JSON type is the decoder's business: here a
value that is not what Go would hold is read as Go's zero value.
"""

from __future__ import annotations

from typing import Any

from .codec import JwtError, decode

__all__ = ["account_issues", "has_wildcards", "is_contained_in", "preload_issues"]

_NO_LIMIT = -1
_RESPONSE_TYPES = ("", "Singleton", "Stream", "Chunked")


def has_wildcards(subject: str) -> bool:
    """``Subject.HasWildCards``."""
    return subject.endswith((".>", ".*")) or ".*." in subject or subject.startswith("*.") or subject in ("*", ">")


def is_contained_in(subject: str, other: str) -> bool:
    """``Subject.IsContainedIn``: every subject ``subject`` matches, ``other`` matches too."""
    mine, theirs = subject.split("."), other.split(".")
    if len(mine) > len(theirs) and theirs[-1] != ">":
        return False
    if len(mine) < len(theirs):
        return False
    for i, token in enumerate(theirs):
        if i == len(theirs) - 1 and token == ">":
            return True
        if token != mine[i] and token != "*":
            return False
    return True


def _subject_issues(subject: str) -> list[str]:
    """``Subject.Validate``."""
    if subject == "":
        return ["subject cannot be empty"]
    out = []
    if " " in subject:
        out.append(f"subject {subject!r} cannot have spaces")
    if subject[0] == "." or subject[-1] == ".":
        out.append(f"subject {subject!r} cannot start or end with a `.`")
    if ".." in subject:
        out.append(f"subject {subject!r} cannot contain consecutive `.`")
    return out


def _renaming_issues(local: str, subject: str) -> list[str]:
    """``RenamingSubject.Validate``: ``>`` at the end of both or neither, and as many ``*``
    tokens or ``$N`` references (N at most the subject's ``*`` count) as the subject has ``*``."""
    out = _subject_issues(local)
    if subject == "":
        out.append("subject cannot be empty")

    def fwc(s: str) -> bool:
        return s == ">" or s.endswith(".>")

    if fwc(local) != fwc(subject):
        out.append("both, renaming subject and subject, need to end or not end in >")
    wildcards = 1 if subject == "*" else subject.split(".").count("*")
    refs = 0
    for token in local.split("."):
        if token == "*":
            refs += 1
        if len(token) < 2 or token[0] != "$" or not _go_atoi(token[1:]):
            continue
        if int(token[1:]) > wildcards:
            out.append(f"Reference {token} in {local!r} reference * in {subject!r} that do not exist")
        else:
            refs += 1
    if refs != wildcards:
        out.append("subject does not contain enough * or reference wildcards $[0-9]")
    return out


def _go_atoi(text: str) -> bool:
    """Whether Go's ``strconv.Atoi`` takes ``text`` (an optional sign, then ASCII digits)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit()


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _export_issues(exports: list[Any]) -> list[str]:
    out: list[str] = []
    subjects: dict[str, list[str]] = {"service": [], "stream": []}
    for export in exports:
        if not isinstance(export, dict):
            out.append("null export is not allowed")
            continue
        kind, subject = _str(export.get("type")), _str(export.get("subject"))
        subjects["service" if kind == "service" else "stream"].append(subject)
        response = _str(export.get("response_type"))
        threshold = _int(export.get("response_threshold"))
        if kind not in ("service", "stream"):
            out.append(f"invalid export type: {kind!r}")
        if kind == "service" and response not in _RESPONSE_TYPES:
            out.append(f"invalid response type for service: {response!r}")
        if kind == "stream" and response:
            out.append(f"invalid response type for stream: {response!r}")
        if threshold < 0:
            out.append("negative response threshold is invalid")
        if threshold > 0 and kind != "service":
            out.append("response threshold only valid for services")
        out += _subject_issues(subject)
        out += _position_issues(_int(export.get("account_token_position")), subject)
    for kind, names in subjects.items():
        for i, inner in enumerate(names):
            for j, outer in enumerate(names):
                if i != j and is_contained_in(inner, outer):
                    out.append(f"{kind} export subject {outer!r} already exports {inner!r}")
    return out


def _position_issues(position: int, subject: str) -> list[str]:
    """``Export.Validate`` of an ``account_token_position``: a ``*`` of a wildcard subject."""
    if position <= 0:
        return []
    if not has_wildcards(subject):
        return [f"Account Token Position can only be used with wildcard subjects: {subject}"]
    tokens = subject.split(".")
    if position > len(tokens):
        return [f"Account Token Position {position} exceeds length of subject '{subject}'"]
    if tokens[position - 1] != "*":
        return [f"Account Token Position {position} matches '{tokens[position - 1]}' but must match a * in: {subject}"]
    return []


def _import_issues(imports: list[Any]) -> list[str]:
    out: list[str] = []
    services: dict[str, set[str]] = {}
    for imp in imports:
        if not isinstance(imp, dict):
            out.append("null import is not allowed")
            continue
        kind, subject, account = _str(imp.get("type")), _str(imp.get("subject")), _str(imp.get("account"))
        to, local = _str(imp.get("to")), _str(imp.get("local_subject"))
        if kind == "service":
            seen = services.setdefault(account, set())
            sub = to or _local_as_subject(local) or subject
            for other in seen:
                if is_contained_in(sub, other) or is_contained_in(other, sub):
                    out.append(f"overlapping subject namespace for {sub!r} and {other!r} in same account {account!r}")
            if sub in seen:
                out.append(f"overlapping subject namespace for {sub!r} in account {account!r}")
            seen.add(sub)
        if kind not in ("service", "stream"):
            out.append(f"invalid import type: {kind!r}")
        if account == "":
            out.append("account to import from is not specified")
        out += _subject_issues(subject)
        if local:
            out += _renaming_issues(local, subject)
            if to:
                out.append("Local Subject replaces To")
    return out


def _local_as_subject(local: str) -> str:
    """``RenamingSubject.ToSubject``: each ``$N`` reference as ``*``."""
    return ".".join("*" if len(t) > 1 and t[0] == "$" and _go_atoi(t[1:]) else t for t in local.split("."))


def preload_issues(text: str) -> list[str]:
    """The blocking issues nats-server logs for a preloaded account JWT (none if it does not
    decode as an account's: that is refused elsewhere)."""
    try:
        token = decode(text)
    except JwtError:
        return []
    return account_issues(token.nats) if token.kind == "account" else []


def account_issues(nats: dict[str, Any]) -> list[str]:
    """The blocking issues of an account JWT's ``nats`` part (empty: it validates)."""
    imports = nats.get("imports") if isinstance(nats.get("imports"), list) else []
    exports = nats.get("exports") if isinstance(nats.get("exports"), list) else []
    assert isinstance(imports, list) and isinstance(exports, list)
    out = _import_issues(imports) + _export_issues(exports)
    limits = nats.get("limits") if isinstance(nats.get("limits"), dict) else {}
    assert isinstance(limits, dict)
    # A limit left out is Go's zero value: no imports (or exports) allowed.
    max_imports, max_exports = _int(limits.get("imports")), _int(limits.get("exports"))
    if any(_int(v) or v is True for v in limits.values()) and 0 <= max_imports < len(imports):
        out.append("the account contains more imports than allowed by the operator")  # Go checks it twice
    if max_imports != _NO_LIMIT and len(imports) > max_imports:
        out.append("the account contains more imports than allowed by the operator")
    if max_exports != _NO_LIMIT:
        if len(exports) > max_exports:
            out.append("the account contains more exports than allowed by the operator")
        if limits.get("wildcards") is not True:
            for export in exports:
                if isinstance(export, dict) and has_wildcards(_str(export.get("subject"))):
                    out.append("the account contains wildcard exports that are not allowed by the operator")
    return out
