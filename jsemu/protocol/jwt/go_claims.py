"""The Go types of nats-io/jwt v2's claims, and ``encoding/json``'s words when a claim field has
a JSON value of the wrong type.

nats-server decodes a JWT with nats-io/jwt v2, which unmarshals the claims twice: into its
``identifier`` (``type``, and ``nats`` as ``jwt.GenericFields``: ``tags``, ``type``,
``version``), then, for a known kind, into ``OperatorClaims``, ``AccountClaims``,
``UserClaims`` or ``ActivationClaims``. Go's ``json.Unmarshal`` keeps decoding past a value of
the wrong type and returns the first such error, in the document's order::

    json: cannot unmarshal string into Go struct field AccountClaims.nats.limits.conn of type int64
    json: cannot unmarshal number 1.5 into Go struct field AccountClaims.exp of type int64
    json: cannot unmarshal number into AccountClaims.nats.exports.0 of type jwt.Export

(a number that is a number but not of the integer type gives its literal; a path that ends
with an array index loses "Go struct field"; map keys are path elements). The types with their
own ``UnmarshalJSON`` answer in their own words (``unknown export type "x"``, the signing keys'
``[]interface {}``...). nats-server shows the text in a ``CLAIMS.UPDATE`` reply.

:data:`SHAPES` is the one table from our claims to Go's types; :func:`go_type_error` walks a
document (parsed with :func:`parse_document`, which keeps number literals, key order and
repeated keys) against one of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SHAPES", "GoDoc", "go_type_error", "parse_document"]


class _Number(str):
    """A JSON number, as its literal."""


class GoDoc(list[tuple[str, Any]]):
    """A JSON object: its members in order, a repeated key each time."""


def parse_document(text: str) -> Any:
    """JSON with objects as :class:`GoDoc` and numbers as their literals."""
    return json.loads(text, parse_int=_Number, parse_float=_Number, parse_constant=_Number, object_pairs_hook=GoDoc)


@dataclass(frozen=True)
class Shape:
    """A Go type: ``kind`` is ``int``/``uint`` (with ``bits``), ``string``, ``bool``,
    ``struct``, ``slice``, ``map``, ``any`` or ``custom`` (``check`` answers for it)."""

    go: str
    kind: str
    bits: int = 64
    fields: dict[str, Shape] = field(default_factory=dict)
    elem: Shape | None = None
    check: Callable[[Any], str | None] | None = None


def _json_kind(value: Any) -> str:
    if isinstance(value, GoDoc):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, _Number):
        return "number"
    if isinstance(value, bool):
        return "bool"
    return "string"


_INT_LITERAL = re.compile(r"-?(0|[1-9][0-9]*)")


def _number_fits(literal: str, shape: Shape) -> bool:
    if not _INT_LITERAL.fullmatch(literal):
        return False
    value = int(literal)
    low, high = (0, 1 << shape.bits) if shape.kind == "uint" else (-(1 << (shape.bits - 1)), 1 << (shape.bits - 1))
    return not (shape.kind == "uint" and literal.startswith("-")) and low <= value < high


def _error(what: str, root: str, path: list[str], go: str) -> str:
    if not path:
        return f"json: cannot unmarshal {what} into Go value of type {go}"
    return f"json: cannot unmarshal {what} into Go struct field {'.'.join([root, *path])} of type {go}"


def _walk(value: Any, shape: Shape, root: str, path: list[str], index: bool = False) -> str | None:
    """The first error of ``value`` as a ``shape`` at ``path`` (``index``: its last element is
    an array index)."""
    if value is None:
        return shape.check(value) if shape.kind == "custom" and shape.check else None
    kind = _json_kind(value)
    if shape.kind == "custom":
        assert shape.check is not None
        return shape.check(value)
    if shape.kind == "any":
        return None

    def wrong(what: str) -> str:
        text = _error(what, root, path, shape.go)
        return text.replace(" into Go struct field ", " into ", 1) if index else text

    if shape.kind in ("int", "uint"):
        if kind != "number":
            return wrong(kind)
        return None if _number_fits(value, shape) else wrong(f"number {value}")
    if shape.kind in ("string", "bool"):
        return None if kind == shape.kind else wrong(kind)
    if shape.kind == "slice":
        if kind != "array":
            return wrong(kind)
        assert shape.elem is not None
        for i, item in enumerate(value):
            found = _walk(item, shape.elem, root, [*path, str(i)], index=True)
            if found:
                return found
        return None
    if kind != "object":
        return wrong(kind)
    for key, item in value:
        if shape.kind == "map":
            assert shape.elem is not None
            found = _walk(item, shape.elem, root, [*path, key])
        else:
            name = key if key in shape.fields else next((k for k in shape.fields if k.lower() == key.lower()), None)
            found = None if name is None else _walk(item, shape.fields[name], root, [*path, key])
        if found:
            return found
    return None


def go_type_error(document: Any, kind: str) -> str | None:
    """The first error Go's ``json.Unmarshal`` meets putting ``document`` (from
    :func:`parse_document`) into the claims type for ``kind`` (a key of :data:`SHAPES`)."""
    root, shape = SHAPES[kind]
    return _walk(document, shape, root, [])


def _prim(go: str, kind: str, bits: int = 64) -> Shape:
    return Shape(go, kind, bits)


def _struct(go: str, *parts: dict[str, Shape]) -> Shape:
    fields: dict[str, Shape] = {}
    for part in parts:
        fields.update(part)
    return Shape(go, "struct", fields=fields)


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _export_type(value: Any) -> str | None:
    """``ExportType.UnmarshalJSON``: a string, ``stream`` or ``service``."""
    if value is not None and (not isinstance(value, str) or isinstance(value, _Number)):
        return f"json: cannot unmarshal {_json_kind(value)} into Go value of type string"
    if value in ("stream", "service"):
        return None
    return f"unknown export type {_go_quote(value or '')}"


def _sampling(value: Any) -> str | None:
    """``SamplingRate.UnmarshalJSON``: ``"headers"`` or an int."""
    if isinstance(value, str) and not isinstance(value, _Number) and value.lower() == "headers":
        return None
    return _walk(value, INT, "", [])


def _go_marshal_number(literal: str) -> str:
    """A number as Go marshals the float64 ``interface{}`` decoding gave it."""
    number = float(literal)
    if number.is_integer() and abs(number) < 1e21:
        return str(int(number))
    text = repr(number)
    return re.sub(r"e([+-])0*(\d)", r"e\g<1>\2", text) if "e" in text else text


def _remarshal(value: Any) -> Any:
    """What ``json.Marshal`` of the decoded ``interface{}`` gives back: keys sorted (the last
    of a repeated one), numbers as float64."""
    if isinstance(value, GoDoc):
        members = dict(value)
        return GoDoc((k, _remarshal(members[k])) for k in sorted(members))
    if isinstance(value, list):
        return [_remarshal(v) for v in value]
    if isinstance(value, _Number):
        return _Number(_go_marshal_number(value))
    return value


def _signing_keys(value: Any) -> str | None:
    """``SigningKeys.UnmarshalJSON``: an array whose strings are keys and whose objects of kind
    ``user_scope`` are decoded again (sorted, as ``json.Marshal`` wrote them) as a
    ``UserScope`` with no type name; other kinds refused, other values ignored."""
    if value is None:
        return None
    if not isinstance(value, list):
        return f"json: cannot unmarshal {_json_kind(value)} into Go value of type []interface {{}}"
    for item in value:
        if not isinstance(item, GoDoc):
            continue
        members = dict(item)
        if members.get("kind") != "user_scope" or isinstance(members.get("kind"), _Number):
            scope = members.get("type")
            shown = "%!q(<nil>)" if scope is None else _go_quote(scope) if isinstance(scope, str) else "%!q(...)"
            return f"unknown signing key scope {shown}"
        found = _walk(_remarshal(item), USER_SCOPE, "", [])
        if found:
            return found
    return None


def _cidr_list(value: Any) -> str | None:
    """``CIDRList.UnmarshalJSON``: an array of strings, else a string (its error if neither)."""
    if value is None or isinstance(value, str) and not isinstance(value, _Number):
        return None
    if isinstance(value, list) and all(isinstance(v, str) and not isinstance(v, _Number) for v in value):
        return None
    return f"json: cannot unmarshal {_json_kind(value)} into Go value of type string"


INT64, INT = _prim("int64", "int"), _prim("int", "int")
STRING, BOOL = _prim("string", "string"), _prim("bool", "bool")
DURATION = _prim("time.Duration", "int")
_SUBJECT = _prim("jwt.Subject", "string")
_CLAIM_TYPE = _prim("jwt.ClaimType", "string")
_STRINGS = Shape("jwt.StringList", "slice", elem=STRING)
_GENERIC = {"tags": Shape("jwt.TagList", "slice", elem=STRING), "type": _CLAIM_TYPE, "version": INT}
_INFO = {"description": STRING, "info_url": STRING}
_CLAIMS_DATA = {k: STRING for k in ("aud", "jti", "iss", "name", "sub")} | {k: INT64 for k in ("exp", "iat", "nbf")}
_PERMISSION = _struct("jwt.Permission", {"allow": _STRINGS, "deny": _STRINGS})
_PERMISSIONS = {
    "pub": _PERMISSION,
    "sub": _PERMISSION,
    "resp": _struct("jwt.ResponsePermission", {"max": INT, "ttl": DURATION}),
}
_NATS_LIMITS = {"subs": INT64, "data": INT64, "payload": INT64}
_USER_PERMISSION_LIMITS = {
    **_PERMISSIONS,
    "src": Shape("jwt.CIDRList", "custom", check=_cidr_list),
    "times": Shape("[]jwt.TimeRange", "slice", elem=_struct("jwt.TimeRange", {"start": STRING, "end": STRING})),
    "times_location": STRING,
    **_NATS_LIMITS,
    "bearer_token": BOOL,
    "proxy_required": BOOL,
    "allowed_connection_types": _STRINGS,
}
USER_SCOPE = _struct(
    "jwt.UserScope",
    {
        "kind": STRING,
        "key": STRING,
        "role": STRING,
        "template": _struct("jwt.UserPermissionLimits", _USER_PERMISSION_LIMITS),
        "description": STRING,
    },
)
_JS_LIMITS = _struct(
    "jwt.JetStreamLimits",
    {k: INT64 for k in ("mem_storage", "disk_storage", "streams", "consumer", "max_ack_pending")},
    {"mem_max_stream_bytes": INT64, "disk_max_stream_bytes": INT64, "max_bytes_required": BOOL},
)
_EXPORT_TYPE = Shape("jwt.ExportType", "custom", check=_export_type)
_REVOCATIONS = Shape("jwt.RevocationList", "map", elem=INT64)
_EXPORT = _struct(
    "jwt.Export",
    {"name": STRING, "subject": _SUBJECT, "type": _EXPORT_TYPE, "token_req": BOOL, "revocations": _REVOCATIONS},
    {"response_type": _prim("jwt.ResponseType", "string"), "response_threshold": DURATION},
    {
        "service_latency": _struct(
            "jwt.ServiceLatency",
            {"sampling": Shape("jwt.SamplingRate", "custom", check=_sampling), "results": _SUBJECT},
        )
    },
    {"account_token_position": _prim("uint", "uint"), "advertise": BOOL, "allow_trace": BOOL},
    _INFO,
)
_IMPORT = _struct(
    "jwt.Import",
    {"name": STRING, "subject": _SUBJECT, "account": STRING, "token": STRING, "to": _SUBJECT},
    {"local_subject": _prim("jwt.RenamingSubject", "string"), "type": _EXPORT_TYPE},
    {"share": BOOL, "allow_trace": BOOL},
)
_WEIGHTED = _struct(
    "jwt.WeightedMapping", {"subject": _SUBJECT, "weight": _prim("uint8", "uint", 8), "cluster": STRING}
)
_ACCOUNT = _struct(
    "jwt.Account",
    {"imports": Shape("jwt.Imports", "slice", elem=_IMPORT), "exports": Shape("jwt.Exports", "slice", elem=_EXPORT)},
    {
        "limits": _struct(
            "jwt.OperatorLimits",
            _NATS_LIMITS,
            {"imports": INT64, "exports": INT64, "wildcards": BOOL, "disallow_bearer": BOOL},
            {"conn": INT64, "leaf": INT64},
            _JS_LIMITS.fields,
            {"tiered_limits": Shape("jwt.JetStreamTieredLimits", "map", elem=_JS_LIMITS)},
        ),
        "signing_keys": Shape("jwt.SigningKeys", "custom", check=_signing_keys),
        "revocations": _REVOCATIONS,
        "default_permissions": _struct("jwt.Permissions", _PERMISSIONS),
        "mappings": Shape("jwt.Mapping", "map", elem=Shape("[]jwt.WeightedMapping", "slice", elem=_WEIGHTED)),
        "authorization": _struct(
            "jwt.ExternalAuthorization", {"auth_users": _STRINGS, "allowed_accounts": _STRINGS, "xkey": STRING}
        ),
        "trace": _struct("jwt.MsgTrace", {"dest": _SUBJECT, "sampling": INT}),
        "cluster_traffic": _prim("jwt.ClusterTraffic", "string"),
    },
    _INFO,
    _GENERIC,
)
_OPERATOR = _struct(
    "jwt.Operator",
    {"signing_keys": _STRINGS, "account_server_url": STRING, "operator_service_urls": _STRINGS},
    {"system_account": STRING, "assert_server_version": STRING, "strict_signing_key_usage": BOOL},
    _GENERIC,
)
_USER = _struct("jwt.User", _USER_PERMISSION_LIMITS, {"issuer_account": STRING}, _GENERIC)
_ACTIVATION = _struct("jwt.Activation", {"subject": _SUBJECT, "kind": _EXPORT_TYPE, "issuer_account": STRING}, _GENERIC)

#: Claim kind -> (the Go type's name, its shape). ``identifier`` is what every JWT is read as
#: first; ``generic`` a kind nats-io/jwt does not know (``nats`` is then any object).
SHAPES: dict[str, tuple[str, Shape]] = {
    "identifier": (
        "identifier",
        _struct("jwt.identifier", {"type": _CLAIM_TYPE, "nats": _struct("jwt.GenericFields", _GENERIC)}),
    ),
    "operator": ("OperatorClaims", _struct("jwt.OperatorClaims", _CLAIMS_DATA, {"nats": _OPERATOR})),
    "account": ("AccountClaims", _struct("jwt.AccountClaims", _CLAIMS_DATA, {"nats": _ACCOUNT})),
    "user": ("UserClaims", _struct("jwt.UserClaims", _CLAIMS_DATA, {"nats": _USER})),
    "activation": ("ActivationClaims", _struct("jwt.ActivationClaims", _CLAIMS_DATA, {"nats": _ACTIVATION})),
    "generic": (
        "GenericClaims",
        _struct(
            "jwt.GenericClaims", _CLAIMS_DATA, {"nats": Shape("map[string]interface {}", "map", elem=Shape("", "any"))}
        ),
    ),
}
