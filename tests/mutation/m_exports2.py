"""Planted bugs in account JWT exports and imports (issue 34, exports2): stream import local
subjects, service import ``to``, export revocations, response types and thresholds, and the
account validation that refuses a whole account."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_EXPORTS = "jsemu/server/jwt_exports.py"
_IMPORTS = "jsemu/server/imports.py"
_CHECKS = "jsemu/protocol/jwt/validation.py"
_DIFF = "tests/server/test_operator_exports.py::test_exports_imports_as_nats_server"

MUTATIONS: list[Mutation] = [
    Mutation(
        "exports2_local_subject_star_literal",
        "server",
        _EXPORTS,
        '            token = f"${n}"',
        '            token = "*"',
        (_DIFF,),
        "a bare * in a stream import's local_subject is kept as a literal token",
    ),
    Mutation(
        "exports2_stream_to_not_prefix",
        "server",
        _EXPORTS,
        '        return Import("stream", account, subject, prefix=to.rstrip("."))',
        '        return Import("stream", account, subject, to=to)',
        (_DIFF,),
        "a stream import's deprecated to renames instead of prefixing",
    ),
    Mutation(
        "exports2_service_to_local",
        "server",
        _EXPORTS,
        '        return Import("service", account, to, to=subject)',
        '        return Import("service", account, subject, to=to)',
        (_DIFF,),
        "a service import's deprecated to taken as the local subject (it names the exporter's)",
    ),
    Mutation(
        "exports2_wildcard_stream_no_transform",
        "server",
        _IMPORTS,
        "        self.mapping = SubjectTransform(imp.subject, imp.to) if imp.to and not subject_is_literal(imp.subject) else None",
        "        self.mapping = None",
        (_DIFF,),
        "a wildcard stream import's local_subject is used as a literal subject ($N not filled in)",
    ),
    Mutation(
        "exports2_revocation_strict",
        "server",
        _EXPORTS,
        "        if at is not None and at >= issued:",
        "        if at is not None and at > issued:",
        (_DIFF,),
        "an activation token issued exactly at the revocation time still taken",
    ),
    Mutation(
        "exports2_revocation_star_ignored",
        "server",
        _EXPORTS,
        '    for key in (claims.get("sub"), "*"):',
        '    for key in (claims.get("sub"),):',
        (_DIFF,),
        "a * revocation of an export does not revoke every importer's token",
    ),
    Mutation(
        "exports2_stream_responses_singleton",
        "server",
        _IMPORTS,
        "        pending[token] = [reply, imp.response in MULTIPLE_RESPONSES, threshold, self.now_ns()]",
        "        pending[token] = [reply, False, threshold, self.now_ns()]",
        (_DIFF,),
        "a Stream or Chunked service export passes only the first response",
    ),
    Mutation(
        "exports2_empty_response_not_eof",
        "server",
        _IMPORTS,
        "        if not self.importer.route(None, original, reply, hdr, msg) or not msg:",
        "        if not self.importer.route(None, original, reply, hdr, msg):",
        (_DIFF,),
        "an empty message does not end a stream of responses",
    ),
    Mutation(
        "exports2_threshold_ignored",
        "server",
        _IMPORTS,
        "        if now - since > threshold:",
        "        if False:",
        (_DIFF,),
        "a response later than the export's response_threshold still reaches the requester",
    ),
    Mutation(
        "exports2_import_count_unchecked",
        "protocol",
        _CHECKS,
        "    if max_imports != _NO_LIMIT and len(imports) > max_imports:",
        "    if max_imports > 0 and len(imports) > max_imports:",
        (_DIFF,),
        "an account with more imports than its limit (or a limit left out, Go's 0) is loaded",
    ),
    Mutation(
        "exports2_wildcard_exports_allowed",
        "protocol",
        _CHECKS,
        '        if limits.get("wildcards") is not True:',
        "        if False:",
        (_DIFF,),
        "wildcard exports of an account whose limits forbid them are loaded",
    ),
    Mutation(
        "exports2_renaming_refs_unchecked",
        "protocol",
        _CHECKS,
        "    if refs != wildcards:",
        "    if False:",
        (_DIFF,),
        "a local_subject whose $N references do not match the subject's * is accepted",
    ),
    Mutation(
        "exports2_response_type_unchecked",
        "protocol",
        _CHECKS,
        '        if kind == "service" and response not in _RESPONSE_TYPES:',
        "        if False:",
        (_DIFF,),
        "a service export with an unknown response_type is accepted",
    ),
]
MUTATIONS += [
    Mutation(
        "exports2_info_response_type_go_name",
        "server",
        _EXPORTS,
        '_RESPONSE_NAMES = {"Stream": "Streamed", "Chunked": "Chunked"}',
        '_RESPONSE_NAMES = {"Stream": "Stream", "Chunked": "Chunked"}',
        (_DIFF,),
        "account INFO shows a Stream export's response type by the JWT's name, not Go's Streamed",
    ),
    Mutation(
        "exports2_info_local_subject_refs",
        "server",
        _EXPORTS,
        '    return ".".join("*" if t[:1] == "$" and t[1:].isdigit() else t for t in local.split("."))',
        "    return local",
        (_DIFF,),
        "account INFO shows a stream import's local subject with $N references, not Go's *",
    ),
    Mutation(
        "exports2_info_revocations_hidden",
        "server",
        _EXPORTS,
        '        shown["revoked_activations"] = {key: format_ns(at * 1_000_000_000) for key, at in export.revocations}',
        "        pass",
        (_DIFF,),
        "account INFO leaves out an export's revoked activations",
    ),
]
MUTATIONS += [
    Mutation(
        "exports2_expired_activation_service_kept",
        "server",
        _IMPORTS,
        "        if self.busy or (self.imp.expires and self.responses.now_ns() >= self.imp.expires * 1_000_000_000):",
        "        if self.busy:",
        ("tests/server/test_operator_exports.py::test_activation_expiry_drops_the_import",),
        "a service import keeps forwarding after its activation token expired",
    ),
    Mutation(
        "exports2_expired_activation_stream_kept",
        "server",
        _EXPORTS,
        "    return dataclasses.replace(imp, expires=exp)",
        "    return imp",
        ("tests/server/test_operator_exports.py::test_activation_expiry_drops_the_import",),
        "imports do not learn when their activation token expires",
    ),
]
MUTATIONS += [
    Mutation(
        "exports2_expired_activation_stream_forwards",
        "server",
        _IMPORTS,
        "        if self.expires_ns and self.now_ns() >= self.expires_ns:\n            return False\n        self.busy = True",
        "        self.busy = True",
        ("tests/server/test_operator_exports.py::test_activation_expiry_drops_the_import",),
        "a stream import keeps forwarding after its activation token expired",
    ),
]
MUTATIONS += [
    Mutation(
        "exports2_service_local_refs_in_order",
        "server",
        _EXPORTS,
        '    mapped = ".".join(next(references, "*") if t == "*" else t for t in subject.split("."))',
        '    mapped = ""',
        (_DIFF,),
        "a service import's local_subject that reorders the wildcards ($2.$1) fills them in order",
    ),
]
MUTATIONS += [
    Mutation(
        "exports2_preload_issues_not_logged",
        "config",
        "jsemu/config/operator.py",
        "        if issues := preload_issues(str(text)):  # nats-server's checkResolvePreloads",
        "        if issues := []:  # nats-server's checkResolvePreloads",
        ("tests/config/test_operator_config.py::test_preloaded_account_with_validation_issues_is_logged",),
        "a preloaded account JWT that does not validate is not logged at start",
    ),
]
MUTATIONS += [
    Mutation(
        "exports2_token_position_ignored",
        "server",
        _EXPORTS,
        "    return export.token_position <= len(tokens) and tokens[export.token_position - 1] == importer",
        "    return True",
        (_DIFF,),
        "an export's account_token_position lets any account import any subject",
    ),
    Mutation(
        "exports2_token_position_needs_token",
        "server",
        "jsemu/server/operator_auth.py",
        "            if positioned is None:  # no account token position: a private export wants a token",
        "            if True:",
        (_DIFF,),
        "a private export with an account_token_position still asks for an activation token",
    ),
    Mutation(
        "exports2_token_position_unvalidated",
        "protocol",
        _CHECKS,
        '        out += _position_issues(_int(export.get("account_token_position")), subject)',
        "        pass",
        (_DIFF,),
        "an account_token_position that names no * of the export's subject is accepted",
    ),
]
MUTATIONS += [
    Mutation(
        "exports2_import_count_logged_once",
        "protocol",
        _CHECKS,
        "    if any(_int(v) or v is True for v in limits.values()) and 0 <= max_imports < len(imports):",
        "    if False:",
        ("tests/config/test_operator_config.py::test_preloaded_account_with_validation_issues_is_logged",),
        "the start-up log names an account over its imports limit once, where nats-io/jwt checks it twice",
    ),
]
