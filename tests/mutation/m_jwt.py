"""Planted bugs in operator mode (issue 34): the JWT codec, user JWT login, its limits."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_AUTH = "jsemu/server/operator_auth.py"
_DIFF = "tests/server/test_operator_auth.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "jwt_signature_not_checked",
        "protocol",
        "jsemu/protocol/jwt/codec.py",
        "    if not isinstance(issuer, str) or not verify(",
        "    if not isinstance(issuer, str) or False and not verify(",
        ("tests/protocol/test_jwt.py", f"{_DIFF}::test_logins_as_nats_server"),
        "a JWT signed by anyone passes as its iss's",
    ),
    Mutation(
        "jwt_nonce_not_checked",
        "server",
        _AUTH,
        "        if not bearer and not verify_signature(user, nonce,",
        "        if False and not verify_signature(user, nonce,",
        (f"{_DIFF}::test_logins_as_nats_server",),
        "a user JWT logs in without proving it holds the key (a stolen JWT is enough)",
    ),
    Mutation(
        "jwt_expiry_not_checked",
        "server",
        _AUTH,
        "        if (exp and now > exp) or (nbf and nbf > now):",
        "        if nbf and nbf > now:",
        (f"{_DIFF}::test_logins_as_nats_server",),
        "an expired user JWT still logs in",
    ),
    Mutation(
        "jwt_signing_key_any",
        "server",
        _AUTH,
        "            if issuer not in account.signing_keys:\n                return None\n",
        "            if issuer not in account.signing_keys:\n                pass\n",
        (f"{_DIFF}::test_logins_as_nats_server",),
        "a user signed by a key the account never listed gets in",
    ),
    Mutation(
        "jwt_scope_template_ignored",
        "server",
        _AUTH,
        '                nats = {**nats, **_apply_template(template, user, str(claims.get("name") or ""), account)}',
        "                pass",
        (f"{_DIFF}::test_logins_as_nats_server",),
        "a scoped signing key's template is not applied: its users have no permissions at all",
    ),
    Mutation(
        "jwt_revocation_inclusive_off",
        "server",
        _AUTH,
        "        if any(at is not None and at >= iat for at in revoked):",
        "        if any(at is not None and at > iat + 10**9 for at in revoked):",
        (f"{_DIFF}::test_revoked_users_refused",),
        "revocations are not looked at",
    ),
    Mutation(
        "jwt_src_ignored",
        "server",
        _AUTH,
        "        if not _in_src(nats, client_ip) or not _in_times(nats, now):",
        "        if not _in_times(nats, now):",
        (f"{_DIFF}::test_logins_as_nats_server",),
        "a user limited to other networks connects from anywhere",
    ),
    Mutation(
        "jwt_account_conn_off_by_one",
        "server",
        "jsemu/server/jwt_session.py",
        "        if others >= account.max_connections:",
        "        if others > account.max_connections:",
        (f"{_DIFF}::test_account_connection_limit",),
        "an account gets one connection more than its JWT allows",
    ),
    Mutation(
        "jwt_user_subs_limit_ignored",
        "server",
        "jsemu/server/jwt_session.py",
        "    conn.max_subs = lowest(user.max_subs, account.max_subs, conn.server.options.max_subscriptions)",
        "    conn.max_subs = -1",
        (f"{_DIFF}::test_logins_as_nats_server",),
        "a user JWT's subs limit is not enforced",
    ),
    Mutation(
        "jwt_expiry_timer_missing",
        "server",
        "jsemu/server/jwt_session.py",
        "        conn.expiry_timer = server.timers.at(user.expires * 1_000_000_000, expired)",
        "        pass",
        (f"{_DIFF}::test_user_expiry_closes_the_client",),
        "a client whose user JWT expires stays connected",
    ),
    Mutation(
        "jwt_untrusted_account_loaded",
        "server",
        _AUTH,
        '    if claims.get("iss") not in trusted:\n        raise JwtError',
        "    if False:\n        raise JwtError",
        ("tests/config/test_operator_config.py::test_trusted_keys_and_untrusted_accounts",),
        "an account JWT signed by another operator is trusted",
    ),
    Mutation(
        "jwt_user_info_names_missing",
        "server",
        "jsemu/server/account_requests.py",
        '        if getattr(user, "user_name", ""):',
        "        if False:",
        ("tests/server/test_operator_system.py",),
        "$SYS.REQ.USER.INFO leaves out the user JWT's name, which nats-server shows",
    ),
]
