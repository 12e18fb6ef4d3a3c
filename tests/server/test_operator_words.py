"""Go's words for a claim field of the wrong JSON type, on nats-server 2.15.1 and jsemu alike.

nats-server decodes JWTs with nats-io/jwt v2, so a field Go's ``json.Unmarshal`` cannot put in
its struct field (``"iss": 5``, ``"nats": []``, ``"exp": "x"``, ``"exp": 1.5``, a wrong type deep
in ``limits``, ``exports``, ``mappings``, a scoped signing key's template...) is refused with
``encoding/json``'s text, which a ``$SYS.REQ.CLAIMS.UPDATE`` reply shows. The JWTs of every claim
kind (operator, account, user, activation, and one nats-io/jwt does not know) are pushed by a
system account user to both servers (the NATS-based resolver on): a table of captured cases,
then cases hypothesis draws from ``jsemu.protocol.jwt.go_claims.SHAPES`` (any field, any JSON
type that is not its own). After each, a bystander still gets its messages.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.protocol.jwt.go_claims import SHAPES, Shape

from .test_operator_resolver_hostile import HEADER, SETUP, _answer, _still_fine, _token, servers

__all__ = ["servers"]  # the module's two servers (the hostile JWT tests' fixture)

Patch = list[tuple[list[Any], Any]]

#: (path, value) patches of an account JWT's claims, as captured from nats-server 2.15.1.
CAPTURED: list[Patch] = [
    [[["iss"], 5]],
    [[["exp"], "x"]],
    [[["exp"], 1.5]],
    [[["exp"], 1e30]],
    [[["name"], []]],
    [[["nats"], []]],
    [[["nats"], 5]],
    [[["nats", "limits"], 5]],
    [[["nats", "limits", "conn"], "x"]],
    [[["nats", "limits", "conn"], True]],
    [[["nats", "limits", "conn"], {}]],
    [[["nats", "tags"], "x"]],
    [[["nats", "tags"], [1]]],
    [[["nats", "signing_keys"], 5]],
    [[["nats", "signing_keys"], [5]]],
    [[["nats", "exports"], 5]],
    [[["nats", "exports"], [{"subject": 5}]]],
    [[["nats", "exports"], [{"type": 5}]]],
    [[["nats", "revocations"], {"x": "y"}]],
    [[["nats", "description"], 5]],
    [[["nats", "version"], "x"]],
    [[["nats", "type"], 5]],
    [[["type"], 5]],
    [[["aud"], 5]],
    [[["exp"], "x"], [["name"], 5]],
    [[["nats", "default_permissions", "pub", "allow"], "x"]],
    [[["nats", "default_permissions", "pub", "allow"], [5]]],
    [[["nats", "limits", "disallow_bearer"], 1]],
    [[["nats", "exports"], [5]]],
    [[["nats", "exports"], [{"revocations": {"a": "x"}}]]],
    [[["nats", "exports"], [{"response_threshold": "x"}]]],
    [[["nats", "exports"], [{"account_token_position": -1}]]],
    [[["nats", "exports"], [{"service_latency": 5}]]],
    [[["nats", "exports"], [{"type": "foo"}]]],
    [[["nats", "limits", "tiered_limits"], {"R1": {"streams": "x"}}]],
    [[["nats", "limits", "tiered_limits"], {"R1": 5}]],
    [[["nats", "revocations"], [5]]],
    [[["nats", "mappings"], {"a": [{"weight": 300}]}]],
    [[["nats", "mappings"], {"a": 5}]],
    [[["nats", "mappings"], {"a": [5]}]],
    [[["nats", "trace"], 5]],
    [[["nats", "trace"], {"sampling": "x"}]],
    [[["nats", "cluster_traffic"], 5]],
    [[["nats", "authorization", "auth_users"], [5]]],
    [[["nats", "authorization"], []]],
    [[["nats", "imports"], [{"local_subject": 5}]]],
    [[["nats", "imports"], [[]]]],
    [[["nats", "default_permissions", "resp"], {"max": "x"}]],
    [[["nats", "default_permissions", "resp"], 5]],
    [[["nats", "signing_keys"], [{"kind": "user_scope", "key": 5}]]],
    [[["nats", "signing_keys"], [{"kind": "user_scope", "key": "x", "template": {"subs": "x"}}]]],
    [[["nats", "signing_keys"], [{"kind": "user_scope", "template": {"subs": 1.5}, "key": 5}]]],
    [[["nats", "signing_keys"], [{"kind": "x"}]]],
    [[["nats", "signing_keys"], [{"kind": "x", "type": "t"}]]],
    [[["nats", "signing_keys"], "x"]],
    [[["exp"], -1.0]],
    [[["exp"], 9223372036854775808]],
    [[["exp"], None]],
    [[["nats", "tags"], ["a", 1, True]]],
    [[["nats", "limits", "conn"], 12345678901234567890123]],
    [[["exp"], float("nan")]],
    [[["exp"], float("-inf")]],
    [[["nats", "limits", "conn"], float("inf")]],
    [[["nats", "exports"], [{"type": None}]]],
    [[["nats", "exports"], [{"service_latency": {"sampling": "x"}}]]],
    [[["nats", "version"], None]],
    [[["nats", "version"], 1]],
    [[["nats", "LIMITS"], {"Conn": "x"}]],
    [[["nats", "type"], "user"], [["nats", "src"], 5]],
    [[["nats", "type"], "user"], [["nats", "src"], "1.2.3.4/8"]],
    [[["nats", "type"], "user"], [["nats", "times"], [{"start": 5}]]],
    [[["nats", "type"], "user"], [["nats", "resp"], {"ttl": "1s"}]],
    [[["nats", "type"], "user"], [["nats", "bearer_token"], "yes"]],
    [[["nats", "type"], "user"], [["nats", "pub"], {"allow": "x"}]],
    [[["nats", "type"], "user"], [["nats", "issuer_account"], 5]],
    [[["nats", "type"], "user"], [["nats", "allowed_connection_types"], [1]]],
    [[["nats", "type"], "operator"], [["nats", "signing_keys"], [5]]],
    [[["nats", "type"], "operator"], [["nats", "strict_signing_key_usage"], 1]],
    [[["nats", "type"], "operator"], [["nats", "system_account"], []]],
    [[["nats", "type"], "activation"], [["nats", "kind"], 5]],
    [[["nats", "type"], "activation"], [["nats", "kind"], "x"]],
    [[["nats", "type"], "activation"], [["nats", "subject"], 5]],
    [[["nats", "type"], "foo"], [["iss"], 5]],
    [[["nats", "type"], "foo"], [["nats", "x"], 5]],
]


def _claims(patch: Patch, subject: str) -> dict[str, Any]:
    claims: dict[str, Any] = {"sub": subject, "name": "h", "nats": {"type": "account", "version": 2}}
    for path, value in patch:
        target = claims
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = value
    return claims


def _push(servers: dict[str, Any], claims: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    token = _token(HEADER, claims, SETUP.operator)
    got = {}
    for kind, (_server, admin, bystander) in servers.items():
        got[kind] = _answer(admin.request("$SYS.REQ.CLAIMS.UPDATE", token.encode()), names)
        _still_fine(bystander)
    return got


@pytest.mark.parametrize("patch", CAPTURED, ids=[str(i) for i in range(len(CAPTURED))])
def test_captured_wrong_types_as_nats_server(servers: dict[str, Any], patch: Patch) -> None:
    subject = KeyPair.create(PREFIX_ACCOUNT).public_key
    got = _push(servers, _claims(patch, subject), {subject: "SUBJECT"})
    assert got["jsemu"] == got["real"]


def test_words_pinned(servers: dict[str, Any]) -> None:
    """A few of nats-server's texts, written out."""
    subject = KeyPair.create(PREFIX_ACCOUNT).public_key
    expected = {
        0: "json: cannot unmarshal number into Go struct field AccountClaims.iss of type string",
        2: "json: cannot unmarshal number 1.5 into Go struct field AccountClaims.exp of type int64",
        5: "json: cannot unmarshal array into Go struct field identifier.nats of type jwt.GenericFields",
        12: "json: cannot unmarshal number into identifier.nats.tags.0 of type string",
    }
    for index, text in expected.items():
        got = _push(servers, _claims(CAPTURED[index], subject), {subject: "SUBJECT"})
        assert text in got["real"], got["real"]
        assert got["jsemu"] == got["real"]


#: A JSON value of each type (numbers of each form Go tells apart).
_VALUES: dict[str, list[Any]] = {
    "string": ["x", ""],
    "number": [5, -1, 0, 1.5, 1e30, 2**64, 300, -(2**63)],
    "bool": [True, False],
    "array": [[], [1], ["a"]],
    "object": [{}, {"a": 1}],
}


def _wrong_values(shape: Shape) -> st.SearchStrategy[Any]:
    """Values Go cannot put in ``shape`` (an integer type also gets numbers it cannot hold)."""
    own = {
        "int": "number",
        "uint": "number",
        "string": "string",
        "bool": "bool",
        "slice": "array",
        "struct": "object",
        "map": "object",
    }.get(shape.kind)
    if shape.kind == "custom":  # their own decoders: anything but what they take
        own = {"jwt.CIDRList": "array", "jwt.SigningKeys": "array", "jwt.SamplingRate": "number"}.get(
            shape.go, "string"
        )
    values = [v for kind, vs in _VALUES.items() if kind != own for v in vs]
    if shape.kind in ("int", "uint"):
        values += [1.5, 1e30, 2**64, -1 if shape.kind == "uint" else 2**63, 300 if shape.bits == 8 else 1.0]
    return st.sampled_from(values)


@st.composite
def _wrong_field(draw: st.DrawFn, shape: Shape, root: bool = False) -> tuple[list[Any], Any]:
    """A path into ``shape`` and a value of the wrong type for it (lists hold one element,
    maps one key); from the claims' root, mostly into ``nats``."""
    if shape.kind in ("struct", "slice", "map") and (root or draw(st.integers(0, 4)) > 0):
        if shape.kind == "struct":
            nats = root and draw(st.integers(0, 3)) > 0
            name = "nats" if nats else draw(st.sampled_from(sorted(shape.fields)))
            path, value = draw(_wrong_field(shape.fields[name]))
            return [name, *path], value
        assert shape.elem is not None
        path, value = draw(_wrong_field(shape.elem))
        return [0 if shape.kind == "slice" else "k", *path], value
    return [], draw(_wrong_values(shape))


def _build(path: list[Any], value: Any) -> Any:
    if not path:
        return value
    inner = _build(path[1:], value)
    return [inner] if isinstance(path[0], int) else {path[0]: inner}


def _merge(claims: dict[str, Any], path: list[Any], value: Any) -> None:
    """Set ``value`` at ``path`` of ``claims`` (made where missing, replaced where not a dict)."""
    key = path[0]
    if len(path) == 1:
        claims[key] = value
    elif isinstance(path[1], int) or not isinstance(claims.get(key), dict):
        claims[key] = _build(path[1:], value)
    else:
        _merge(claims[key], path[1:], value)


@st.composite
def wrong_claims(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(["operator", "account", "user", "activation", "generic"]))
    subject = KeyPair.create(PREFIX_ACCOUNT).public_key
    claims: dict[str, Any] = {"sub": subject, "name": "w", "nats": {"type": kind, "version": 2}}
    for _ in range(draw(st.integers(1, 2))):  # a second wrong field: the first in the document counts
        path, value = draw(_wrong_field(SHAPES[kind][1], root=True))
        _merge(claims, path, value)
    return subject, claims


@settings(
    max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=wrong_claims())
def test_generated_wrong_types_as_nats_server(servers: dict[str, Any], case: tuple[str, dict[str, Any]]) -> None:
    subject, claims = case
    got = _push(servers, claims, {subject: "SUBJECT"})
    assert got["jsemu"] == got["real"], claims
