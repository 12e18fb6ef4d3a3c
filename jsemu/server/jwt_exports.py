"""How an account JWT's ``exports`` and ``imports`` entries become jsemu's ``Export``/``Import``,
as nats-server's ``updateAccountClaimsWithRefresh`` turns them into account exports and imports.

* A stream import's ``local_subject`` is where the importer sees the messages: a literal, or
  ``$N`` references to the subject's ``*`` wildcards (a bare ``*`` stands for the next one, as
  Go's ``transformTokenize``) and a trailing ``>``: ``feed.*.*.c`` on ``lc.$2.$1`` puts
  ``feed.p.q.c`` on ``lc.q.p``. The deprecated ``to`` of a stream import is a prefix
  (``pd.feed.d``).
* A service import's ``local_subject`` is the subject the importer requests on (``$N`` references
  subscribed as ``*``: ``l.$2.$1`` for ``a.*.*`` takes ``l.x.y`` to ``a.y.x``); its deprecated
  ``to`` is the other way round: the *exporter's* subject, the import's ``subject`` the local one.
* A service export's ``response_type`` (``Stream``, ``Chunked``) and ``response_threshold`` ride
  on each import of it, so that the forwarder keeps the reply mapping (``imports.Responses``).
* An export's ``account_token_position`` lets an account import only the subjects with its own key
  at that token, and needs no activation token then (``tp.*.x`` at 2: ``tp.<importer>.x``).
* An export's ``revocations`` (importer key or ``*`` -> unix time) refuse an activation token
  issued at or before that time (Go's ``isRevoked``): the import does not hold. A token's ``exp``
  rides on the import, which stops forwarding then (nats-server's ``activationExpired``).

An entry that does not validate never gets here: ``protocol.jwt.validation`` refuses the account.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..protocol.jwt import JwtError, decode
from ..subjects import subject_is_subset_match
from ..timefmt import format_ns
from .imports import Export, Import

__all__ = [
    "activation_revoked",
    "export_details",
    "import_from_claim",
    "local_subject_shown",
    "position_allows",
    "shown_export",
    "with_expiry",
    "with_response",
]

#: Go's names of the response types (``ResponseType.String``).
_RESPONSE_NAMES = {"Stream": "Streamed", "Chunked": "Chunked"}


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
    if local and "$" in local:
        return _service_references(account, subject, _tokenize(local))
    if local:
        return Import("service", account, subject, to=local)
    if to:
        return Import("service", account, to, to=subject)
    return Import("service", account, subject)


def _service_references(account: str, subject: str, local: str) -> Import:
    """A service import whose ``local_subject`` has ``$N`` references: the importer subscribes
    with each as ``*``, and a request goes to the exported subject with its wildcards filled in
    from them (Go's reversed transform: the subject's i-th ``*`` takes the i-th reference)."""
    references = iter([t for t in local.split(".") if t[:1] == "$" and t[1:].isdigit()])
    mapped = ".".join(next(references, "*") if t == "*" else t for t in subject.split("."))
    return Import("service", account, subject, to=local_subject_shown(local), mapped=mapped)


def export_details(entry: dict[str, Any]) -> dict[str, Any]:
    """The ``Export`` fields of an export's ``token_req`` and ``revocations``, and of a service
    export's ``response_type`` and ``response_threshold``."""
    found = entry.get("revocations")
    revocations = found if isinstance(found, dict) else {}
    position = entry.get("account_token_position")
    out: dict[str, Any] = {
        "token_position": position if isinstance(position, int) and not isinstance(position, bool) else 0,
        "token_req": entry.get("token_req") is True,
        "revocations": tuple(
            (k, v) for k, v in sorted(revocations.items()) if isinstance(v, int) and not isinstance(v, bool)
        ),
    }
    if entry.get("type") == "service":
        response = entry.get("response_type")
        threshold = entry.get("response_threshold")
        out["response"] = response if response in ("Stream", "Chunked") else ""
        out["threshold_ns"] = threshold if isinstance(threshold, int) and threshold > 0 else 0
    return out


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


def position_allows(imp: Import, exports: Sequence[tuple[Export, bool]], importer: str) -> bool | None:
    """Whether the export ``imp`` uses lets ``importer`` in by its ``account_token_position``
    (the importer's key at that token of the import's subject; an import of the export's very
    subject never), or ``None`` when the export has none (Go's ``checkAuth``)."""
    export = _matching(imp, exports)
    if export is None or export.token_position <= 0:
        return None
    if export.subject == imp.subject:
        return False  # nats-server's exact match passes no tokens
    tokens = imp.subject.split(".")
    return export.token_position <= len(tokens) and tokens[export.token_position - 1] == importer


def with_expiry(imp: Import, token: str) -> Import:
    """An import that holds by an activation ``token`` with an ``exp``: it stops then."""
    try:
        exp = decode(token).claims.get("exp")
    except JwtError:
        return imp
    if not isinstance(exp, int) or isinstance(exp, bool) or exp <= 0:
        return imp
    return dataclasses.replace(imp, expires=exp)


def activation_revoked(imp: Import, exports: Sequence[tuple[Export, bool]], token: str) -> bool:
    """Whether the export ``imp`` uses revoked its activation ``token``: the importer's key or
    ``*`` at or after the token's ``iat``."""
    export = _matching(imp, exports)
    revoked = dict(export.revocations) if export is not None else {}
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


def shown_export(export: Export) -> dict[str, Any]:
    """An export as nats-server's account INFO shows it (``ExtExport``): the response type by
    Go's name for it, ``token_req`` and the revocations as times."""
    shown: dict[str, Any] = {"subject": export.subject, "type": export.kind}
    if export.token_req:
        shown["token_req"] = True
    if export.kind == "service":
        shown["response_type"] = _RESPONSE_NAMES.get(export.response, "Singleton")
    if export.revocations:
        shown["revoked_activations"] = {key: format_ns(at * 1_000_000_000) for key, at in export.revocations}
    return shown


def local_subject_shown(local: str) -> str:
    """A stream import's local subject as nats-server shows it: ``$N`` references as ``*``
    (Go's ``transformUntokenize``)."""
    return ".".join("*" if t[:1] == "$" and t[1:].isdigit() else t for t in local.split("."))
