"""How an account JWT's ``exports`` and ``imports`` entries become jsemu's ``Export``/``Import``,
as nats-server's ``updateAccountClaimsWithRefresh`` turns them into account exports and imports.

* A stream import's ``local_subject`` is where the importer sees the messages: a literal, or
  ``$N`` references to the subject's ``*`` wildcards (a bare ``*`` stands for the next one, as
  Go's ``transformTokenize``) and a trailing ``>``: ``feed.*.*.c`` on ``lc.$2.$1`` puts
  ``feed.p.q.c`` on ``lc.q.p``. The deprecated ``to`` of a stream import is a prefix
  (``pd.feed.d``).
* A service import's ``local_subject`` is the subject the importer requests on; its deprecated
  ``to`` is the other way round: the *exporter's* subject, the import's ``subject`` the local one.
* A service export's ``response_type`` (``Stream``, ``Chunked``) and ``response_threshold`` ride
  on each import of it, so that the forwarder keeps the reply mapping (``imports.Responses``).
* An export's ``revocations`` (importer key or ``*`` -> unix time) refuse an activation token
  issued at or before that time (Go's ``isRevoked``): the import does not hold.

An entry that does not validate never gets here: ``protocol.jwt.validation`` refuses the account.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..protocol.jwt import JwtError, decode
from ..subjects import subject_is_subset_match
from .imports import Export, Import

__all__ = ["activation_revoked", "export_details", "import_from_claim", "revocations_of", "with_response"]


def _tokenize(local: str) -> str:
    """Go's ``transformTokenize``: each bare ``*`` of a mapped subject as the next ``$N``."""
    out, n = [], 0
    for token in local.split("."):
        if token == "*":
            n += 1
            token = f"${n}"
        out.append(token)
    return ".".join(out)


def import_from_claim(entry: dict[str, Any], subject: str, account: str) -> Import:
    """One ``imports`` entry (its type, subject and account already checked)."""
    local = entry.get("local_subject") if isinstance(entry.get("local_subject"), str) else ""
    to = entry.get("to") if isinstance(entry.get("to"), str) else ""
    assert isinstance(local, str) and isinstance(to, str)
    if entry["type"] == "stream":
        if local:
            return Import("stream", account, subject, to=_tokenize(local))
        return Import("stream", account, subject, prefix=to.rstrip("."))
    if local:
        return Import("service", account, subject, to=local)
    if to:
        return Import("service", account, to, to=subject)
    return Import("service", account, subject)


def export_details(entry: dict[str, Any]) -> dict[str, Any]:
    """The ``Export`` fields of a service export's ``response_type`` and ``response_threshold``."""
    if entry.get("type") != "service":
        return {}
    response = entry.get("response_type")
    threshold = entry.get("response_threshold")
    return {
        "response": response if response in ("Stream", "Chunked") else "",
        "threshold_ns": threshold if isinstance(threshold, int) and threshold > 0 else 0,
    }


def revocations_of(entry: dict[str, Any]) -> dict[str, int]:
    """An export's ``revocations``: importer key (or ``*``) -> unix seconds."""
    found = entry.get("revocations")
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}


def _matching(imp: Import, exports: Sequence[tuple[Export, bool]]) -> Export | None:
    """The export an import uses: the one on its very subject, else the first that covers it."""
    candidates = [e for e, _ in exports if e.kind == imp.kind and subject_is_subset_match(imp.subject, e.subject)]
    exact = [e for e in candidates if e.subject == imp.subject]
    found = exact or candidates
    return found[0] if found else None


def with_response(imp: Import, exports: Sequence[tuple[Export, bool]]) -> Import:
    """A service import with its export's response type and threshold."""
    export = _matching(imp, exports)
    if export is None or (not export.response and not export.threshold_ns):
        return imp
    return dataclasses.replace(imp, response=export.response, threshold_ns=export.threshold_ns)


def activation_revoked(
    imp: Import, exports: Sequence[tuple[Export, bool]], revocations: dict[str, dict[str, int]], token: str
) -> bool:
    """Whether the export ``imp`` uses revoked its activation ``token`` (``revocations``: by the
    export's subject): the importer's key or ``*`` at or after the token's ``iat``."""
    export = _matching(imp, exports)
    revoked = revocations.get(export.subject, {}) if export is not None else {}
    if not revoked:
        return False
    try:
        claims = decode(token).claims
    except JwtError:
        return True
    issued = claims.get("iat") if isinstance(claims.get("iat"), int) else 0
    assert isinstance(issued, int)
    for key in (claims.get("sub"), "*"):
        at = revoked.get(key) if isinstance(key, str) else None
        if at is not None and at >= issued:
            return True
    return False
