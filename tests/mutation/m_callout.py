"""Planted bugs in the auth callout (issue 34, ADR-26): the response's checks, who is delegated,
the wait for the answer, the callout subject denied to the auth account's users."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_CLAIMS = "jsemu/protocol/jwt/callout.py"
_SERVER = "jsemu/server/auth_callout.py"
_TEST = "tests/server/test_auth_callout.py"
_ANSWERS = f"{_TEST}::test_callout_answers"
_OPERATOR = f"{_TEST}::test_operator_mode_callout"

MUTATIONS: list[Mutation] = [
    Mutation(
        "callout_response_signer_unchecked",
        "protocol",
        _CLAIMS,
        '    signer = issuer_account or claims.get("iss")',
        "    signer = issuer",
        (_ANSWERS,),
        "a response signed by any account key grants a login",
    ),
    Mutation(
        "callout_user_key_unchecked",
        "protocol",
        _CLAIMS,
        '    if user.claims.get("sub") != user_nkey:',
        "    if False:",
        (_ANSWERS,),
        "a user JWT minted for another nkey (a replayed one) is accepted",
    ),
    Mutation(
        "callout_audience_unchecked",
        "protocol",
        _CLAIMS,
        '    if claims.get("aud") != server_id:',
        "    if False:",
        (_ANSWERS,),
        "a response meant for another server is accepted",
    ),
    Mutation(
        "callout_user_issuer_unchecked",
        "protocol",
        _CLAIMS,
        '    if user.claims.get("iss") != issuer:',
        "    if False:",
        (_ANSWERS,),
        "a user JWT issued by a key other than the callout issuer is accepted",
    ),
    Mutation(
        "callout_auth_users_not_skipped",
        "server",
        _SERVER,
        "        return None if raw_user(opts) in settings.auth_users else settings",
        "        return settings",
        (f"{_TEST}::test_auth_users_skip_the_callout",),
        "the service's own user is sent to the callout (it can never log in)",
    ),
    Mutation(
        "callout_subject_not_denied_to_granted",
        "server",
        _SERVER,
        "        if placement == settings.account:",
        "        if False:",
        (_ANSWERS,),
        "a user the callout places in the auth account may publish auth requests",
    ),
    Mutation(
        "callout_subject_not_denied_to_auth_users",
        "server",
        "jsemu/server/connection.py",
        "            if callout is not None and in_callout_account(auth, user):",
        "            if False:",
        (f"{_TEST}::test_auth_users_skip_the_callout",),
        "an auth user may publish auth requests itself",
    ),
    Mutation(
        "callout_timeout_too_long",
        "server",
        _SERVER,
        "server.clock.now_ns() + round(timeout * 1e9), on_timeout)",
        "server.clock.now_ns() + round(timeout * 4e9), on_timeout)",
        (f"{_TEST}::test_no_answer_times_out",),
        "no answer refuses the client only long after the auth timeout",
    ),
    Mutation(
        "callout_reads_on_while_waiting",
        "server",
        "jsemu/server/connection.py",
        "not parser.resume or self.callout_wait:",
        "not parser.resume:",
        (_ANSWERS,),
        "what follows the CONNECT is handled before the callout answered (a PING answered, a PUB denied)",
    ),
    Mutation(
        "callout_operator_account_not_delegated",
        "server",
        _SERVER,
        "            if settings is None or user is None or user.name in settings.auth_users:",
        "            if True:",
        (_OPERATOR,),
        "an account JWT's authorization claims are ignored: its users log in without the callout",
    ),
    Mutation(
        "callout_operator_allowed_accounts_ignored",
        "server",
        _SERVER,
        '        if placement != settings.account and not (allowed == ("*",) or placement in allowed):',
        "        if False:",
        (_OPERATOR,),
        "the service places users in accounts the callout account never allowed",
    ),
    Mutation(
        "callout_operator_response_signer_any_account",
        "protocol",
        _CLAIMS,
        "    if signer != issuer and (signers is None or signer not in signers) and not (",
        "    if signer != issuer and signers is None and not (",
        (_OPERATOR,),
        "in operator mode a response signed by any account key is accepted",
    ),
    Mutation(
        "callout_xkey_request_not_sealed",
        "server",
        _SERVER,
        "            sealed = self.curve.seal(request.encode(), settings.xkey)",
        "            sealed = request.encode()",
        (f"{_TEST}::test_xkey_sealed_exchange",),
        "with an xkey the request still goes out in the clear",
    ),
    Mutation(
        "callout_xkey_response_not_opened",
        "server",
        _SERVER,
        '        if settings.xkey and self.curve is not None and body and not body.startswith(b"eyJ"):',
        "        if False:",
        (f"{_TEST}::test_xkey_sealed_exchange",),
        "a sealed response is taken for a JWT and refused",
    ),
]
