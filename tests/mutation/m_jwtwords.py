"""Planted bugs in operator mode's details (issue 34, ``jwtwords``): ``jwt_cookie`` on the
WebSocket port, Go's words for a claim field of the wrong JSON type, ``tag()`` in scope
templates."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_COOKIE = "tests/server/test_operator_ws_cookie.py"
_TAGS = "tests/server/test_operator_tags.py"
_TEMPLATE = "jsemu/server/scope_template.py"
_WORDS = "tests/server/test_operator_words.py"
_GO = "jsemu/protocol/jwt/go_claims.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "jwt_cookie_not_read",
        "server",
        "jsemu/server/websocket_listener.py",
        '                    (options.jwt_cookie, "jwt"),',
        '                    (options.jwt_cookie, "jwt_"),',
        (_COOKIE,),
        "the jwt_cookie's value never reaches the CONNECT: a browser client sending its JWT in a cookie is refused",
    ),
    Mutation(
        "jwt_cookie_overrides_connect",
        "server",
        "jsemu/server/connection.py",
        "                if not opts.get(key):",
        "                if True:",
        (_COOKIE,),
        "the cookie wins over the CONNECT's own jwt (nats-server uses a cookie only for what the CONNECT leaves out)",
    ),
    Mutation(
        "jwt_cookie_later_option_wins",
        "protocol",
        "jsemu/protocol/websocket.py",
        "        wanted.setdefault(name, option)",
        "        wanted[name] = option",
        (f"{_COOKIE}::test_jwt_cookie_as_nats_server",),
        "a cookie named by both jwt_cookie and token_cookie is taken as the token (nats-server matches jwt first)",
    ),
    Mutation(
        "jwt_cookie_without_operator_accepted",
        "config",
        "jsemu/config/websocket.py",
        "    if ws.jwt_cookie and not trusted:",
        "    if ws.jwt_cookie and not trusted and False:",
        ("tests/config/test_websocket_config.py::test_bad_websocket_authorization_as_nats_server",),
        "jwt_cookie without an operator starts (nats-server refuses it: no JWT could be checked)",
    ),
    Mutation(
        "scope_tag_prefix_case_trimmed",
        "server",
        _TEMPLATE,
        '                name = op.removeprefix(opener).removesuffix(")")',
        '                name = op[len(opener) :].removesuffix(")")',
        (_TAGS,),
        "{{TAG(x)}} reads tag x (nats-server trims 'tag(' with its case, so it looks up 'tag(x' and finds nothing)",
    ),
    Mutation(
        "scope_tags_compared_without_case",
        "server",
        _TEMPLATE,
        'self.tags = {"tag": _strings(tags), "account-tag": _strings(account_tags)}',
        'self.tags = {"tag": [t.lower() for t in _strings(tags)], "account-tag": _strings(account_tags)}',
        (_TAGS,),
        "a tag Dept:eng fills {{tag(dept)}} (nats-server compares the tags as written)",
    ),
    Mutation(
        "scope_emptied_allow_not_denying",
        "server",
        _TEMPLATE,
        '        if isinstance(allow, list) and allow and not rules["allow"]:',
        '        if isinstance(allow, list) and allow and not rules["allow"] and False:',
        (_TAGS,),
        "an allow list whose every entry lacked its tag allows everything (nats-server then denies '>')",
    ),
    Mutation(
        "scope_unknown_function_kept",
        "server",
        _TEMPLATE,
        '        raise TemplateError(f"template operation {op!r} is not defined")',
        "        return [op]",
        (_TAGS,),
        "a template with an unknown {{function}} logs the user in (nats-server refuses it)",
    ),
    Mutation(
        "scope_account_tags_not_read",
        "server",
        "jsemu/server/operator_auth.py",
        'tags=tuple(t for t in nats.get("tags") or () if isinstance(t, str)),',
        'tags=tuple(t for t in nats.get("tagz") or () if isinstance(t, str)),',
        (_TAGS,),
        "{{account-tag(x)}} finds no value: the account JWT's tags are not read",
    ),
    Mutation(
        "go_words_number_literal_dropped",
        "protocol",
        _GO,
        '        return None if _number_fits(value, shape) else wrong(f"number {value}")',
        '        return None if _number_fits(value, shape) else wrong("number")',
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        "exp: 1.5 is 'cannot unmarshal number into' (Go names the literal a number type cannot hold)",
    ),
    Mutation(
        "go_words_index_keeps_struct_field",
        "protocol",
        _GO,
        '        return text.replace(" into Go struct field ", " into ", 1) if index else text',
        "        return text",
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        "an array element's error says 'Go struct field' (Go leaves it out when the path ends with an index)",
    ),
    Mutation(
        "go_words_key_case_folded",
        "protocol",
        _GO,
        "found = None if name is None else _walk(item, shape.fields[name], root, [*path, key])",
        "found = None if name is None else _walk(item, shape.fields[name], root, [*path, name])",
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        "a key matched without case (LIMITS) is named as the field's tag (Go names it as written)",
    ),
    Mutation(
        "go_words_identifier_skipped",
        "protocol",
        "jsemu/protocol/jwt/codec.py",
        '    _go_types(document, "identifier")  # nats-io/jwt reads',
        "    pass  # nats-io/jwt reads",
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        "nats: [] is named as AccountClaims' field (nats-io/jwt reads the identifier first: identifier.nats)",
    ),
    Mutation(
        "go_words_version_zero_accepted",
        "protocol",
        "jsemu/protocol/jwt/codec.py",
        "    if kind in _EXPECTED and version not in (1, 2):",
        "    if kind in _EXPECTED and version not in (0, 1, 2):",
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        "a claim without nats.version is checked as v1 (nats-io/jwt: 'library supports version 2 or less - received 0')",
    ),
    Mutation(
        "go_words_uint8_wider",
        "protocol",
        _GO,
        '"weight": _prim("uint8", "uint", 8)',
        '"weight": _prim("uint8", "uint", 16)',
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        "a mapping weight of 300 decodes (Go's uint8 cannot hold it)",
    ),
    Mutation(
        "go_words_export_type_any",
        "protocol",
        _GO,
        '    if value in ("stream", "service"):',
        "    if True:",
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        'an export of type foo decodes (ExportType.UnmarshalJSON: unknown export type "foo")',
    ),
    Mutation(
        "go_words_scope_not_resorted",
        "protocol",
        _GO,
        "        return GoDoc((k, _remarshal(members[k])) for k in sorted(members))",
        "        return GoDoc((k, _remarshal(members[k])) for k in members)",
        (f"{_WORDS}::test_captured_wrong_types_as_nats_server",),
        "a scoped signing key's fields are checked in the JWT's order (Go re-marshals the map: sorted keys)",
    ),
]
