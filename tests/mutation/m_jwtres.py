"""Planted bugs in the NATS-based account resolver, its configuration and the JWT codec's
refusals (issue 34, the ``jwtres`` part)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_RES = "jsemu/server/account_resolver.py"
_T = "tests/server/test_operator_resolver.py"
_FULL = f"{_T}::test_full_resolver_as_nats_server"
_RESTART = f"{_T}::test_directory_kept_across_restart"
_CACHE = f"{_T}::test_cache_resolver_as_nats_server"
_CODEC = "jsemu/protocol/jwt/codec.py"
_HOSTILE = "tests/server/test_operator_resolver_hostile.py"
_GO_ERRORS = "tests/protocol/test_jwt_go_errors.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "resolver_update_subject_unchecked",
        "server",
        _RES,
        "        if key is not None and subject != key:",
        "        if False:",
        (_FULL,),
        "a JWT pushed to another account's update subject replaces that account",
    ),
    Mutation(
        "resolver_lookup_unknown_silent",
        "server",
        _RES,
        '        self._send(router, reply, text.encode() if text is not None else b"")',
        "        if text is not None:\n            self._send(router, reply, text.encode())",
        (_FULL,),
        "a lookup of an account the directory lacks is never answered (a requester waits its timeout)",
    ),
    Mutation(
        "resolver_delete_not_self_signed",
        "server",
        _RES,
        '            elif who != token.claims.get("iss"):',
        "            elif False:",
        (_FULL,),
        "a delete request signed for someone else is obeyed",
    ),
    Mutation(
        "resolver_delete_without_allow_delete",
        "server",
        _RES,
        "            if store.settings.delete == DELETE_NONE:",
        "            if False:",
        (_RESTART,),
        "accounts are deleted from a full resolver without allow_delete",
    ),
    Mutation(
        "resolver_delete_system_account",
        "server",
        _RES,
        "                    if entry == self.server.options.system_account:",
        "                    if False:",
        (_FULL,),
        "the system account can be deleted",
    ),
    Mutation(
        "resolver_deleted_clients_kept",
        "server",
        _RES,
        "                conn.close_with_error(ERR_ACCOUNT_AUTHENTICATION_EXPIRED)",
        "                pass",
        (_FULL,),
        "the clients of a deleted account stay connected",
    ),
    Mutation(
        "resolver_new_account_without_jetstream",
        "server",
        _RES,
        "            self.server.account_added(added)",
        "            pass",
        (_FULL,),
        "an account pushed at run time gets no JetStream though its JWT gives it",
    ),
    Mutation(
        "resolver_cache_stores_unknown",
        "server",
        _RES,
        "        if not full and subject not in self._auth.accounts:",
        "        if False:",
        (_CACHE,),
        "the cache resolver stores accounts the server does not have",
    ),
    Mutation(
        "resolver_directory_not_read",
        "server",
        _RES,
        "        if account.public_key == key:\n            auth.accounts[key] = account",
        "        if False:\n            auth.accounts[key] = account",
        (_RESTART,),
        "accounts pushed before a restart are gone after it",
    ),
    Mutation(
        "resolver_full_store_evicts",
        "server",
        "jsemu/server/resolver_dir.py",
        '            if self.settings.full:\n                raise ValueError("jwt store is full")',
        '            if False:\n                raise ValueError("jwt store is full")',
        (f"{_T}::test_full_store_limit",),
        "a full resolver at its limit evicts an account instead of refusing the new one",
    ),
    Mutation(
        "resolver_delete_always_hard",
        "config",
        "jsemu/config/resolver_settings.py",
        '        delete = DELETE_HARD if value.get("hard_delete") is True else DELETE_RENAME',
        "        delete = DELETE_HARD",
        (_FULL,),
        "a deleted account's file is removed instead of renamed to .jwt.deleted",
    ),
    Mutation(
        "resolver_hard_delete_alone_accepted",
        "config",
        "jsemu/config/resolver_settings.py",
        '    if "hard_delete" in value and not allow_delete:',
        "    if False:",
        ("tests/config/test_operator_resolver_config.py::test_refused_as_nats_server[full-hard-delete-alone]",),
        "hard_delete without allow_delete starts instead of being refused",
    ),
    Mutation(
        "jwt_header_type_text",
        "protocol",
        _CODEC,
        '        raise JwtError(f"not supported type {_go_quote(typ)}")',
        '        raise JwtError("unexpected header")',
        (_HOSTILE,),
        "a JWT header of another type is refused with other words than nats-server's",
    ),
    Mutation(
        "jwt_base64_error_offset",
        "protocol",
        _CODEC,
        '            raise JwtError(f"illegal base64 data at input byte {i}")',
        '            raise JwtError(f"illegal base64 data at input byte {i + 1}")',
        (_HOSTILE,),
        "the base64 error names another byte than Go's decoder",
    ),
    Mutation(
        "jwt_newer_version_accepted",
        "protocol",
        _CODEC,
        "    if version > 2:",
        "    if version > 9:",
        (_HOSTILE,),
        "a JWT of a newer claims version is accepted",
    ),
    Mutation(
        "jwt_issuer_kind_unchecked",
        "protocol",
        _CODEC,
        "    if expected is not None and not any(",
        "    if False and not any(",
        (_HOSTILE,),
        "an account JWT signed by a user key (or a user JWT by an operator) decodes",
    ),
    Mutation(
        "jwt_json_type_names_lost",
        "protocol",
        _CODEC,
        '_GO_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}',
        "_GO_TYPES: dict[type, str] = {}",
        (_GO_ERRORS,),
        "a claims segment that is JSON but not an object is refused without Go's type name",
    ),
    Mutation(
        "jwt_json_null_refused",
        "protocol",
        _CODEC,
        "    if value is None:\n        return {}",
        "    if False:\n        return {}",
        (_GO_ERRORS,),
        "a null header or claims segment is refused as a JSON error, where Go reads an empty struct",
    ),
    Mutation(
        "jwt_generic_update_checked_as_v2",
        "server",
        _RES,
        'decode(body.decode("utf-8", "replace"), generic_as_v1=True)',
        'decode(body.decode("utf-8", "replace"))',
        (_FULL,),
        "an untyped JWT pushed as an account is checked as a v2 token, where Decode checks it as v1",
    ),
]

MUTATIONS.append(
    Mutation(
        "jwt_claim_type_not_a_string_accepted",
        "protocol",
        "jsemu/protocol/jwt/go_claims.py",
        '_CLAIM_TYPE = _prim("jwt.ClaimType", "string")',
        '_CLAIM_TYPE = Shape("jwt.ClaimType", "any")',
        ("tests/server/test_operator_fuzz.py::test_generated_user_claims",),
        "a user JWT whose nats.type is a list is accepted (nats-server refuses the login)",
    )
)
