"""Planted bugs in the authentication-error events of refused logins (``server/auth_errors.py``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_FILE = "tests/server/test_auth_errors.py"
_CONFIG = f"{_FILE}::test_config_mode_refusals_as_nats_server"
_SUBJECTS = f"{_FILE}::test_subjects_of_a_refusal"
_CALLOUT = f"{_FILE}::test_callout_refusals_in_the_callout_account"
_OPERATOR = f"{_FILE}::test_operator_mode_refusals"
_TLS = "tests/server/test_auth_callout_tls.py"
_RELOAD = f"{_FILE}::test_reload_that_refuses_a_client"

MUTATIONS: list[Mutation] = [
    Mutation(
        "auth_err_no_account_event",
        "server",
        "jsemu/server/connection.py",
        "                announce_refusal(self, self.account)  # still in $G",
        "                announce_refusal(self, None)",
        (_SUBJECTS, _CONFIG),
        "a refused CONNECT gets no account-scoped AUTH.ERR in $G (its users do not hear it)",
    ),
    Mutation(
        "auth_err_no_disconnect",
        "server",
        "jsemu/server/auth_errors.py",
        '        subject = f"$SYS.ACCOUNT.{GLOBAL_ACCOUNT}.DISCONNECT".encode()\n'
        "        _send(conn, router, subject, GLOBAL_ACCOUNT, AUTHENTICATION_FAILURE)",
        "",
        (_SUBJECTS, _CONFIG),
        "a refused client leaves $G without the DISCONNECT event nats-server sends",
    ),
    Mutation(
        "auth_err_on_first_op",
        "server",
        "jsemu/server/connection.py",
        "            announce_refusal(self, None)",
        "            announce_refusal(self, self.account)",
        (_CONFIG,),
        "a first op that is not a CONNECT also gets the account-scoped event (nats-server: only the system's)",
    ),
    Mutation(
        "auth_err_user_not_raw",
        "server",
        "jsemu/server/auth_errors.py",
        "        raw_user(conn.opts),",
        "        conn.opts.get('user') or '',",
        (_CONFIG,),
        "the refused client's user is only its user name (no nkey, no [REDACTED] token)",
    ),
    Mutation(
        "auth_err_no_jwt",
        "server",
        "jsemu/server/auth_errors.py",
        '        jwt if isinstance(jwt, str) else "",',
        '        "",',
        (_OPERATOR,),
        "the JWT a refused client sent is left out of its events",
    ),
    Mutation(
        "auth_err_callout_reason_fixed",
        "server",
        "jsemu/server/auth_errors.py",
        "        reason = AUTHENTICATION_FAILURE if callout_reason is None else callout_reason",
        "        reason = AUTHENTICATION_FAILURE",
        (_CALLOUT,),
        "a callout refusal's account event says Authentication Failure instead of the refusal's text",
    ),
    Mutation(
        "auth_err_callout_in_g",
        "server",
        "jsemu/server/connection.py",
        '            announce_refusal(self, account, callout.refusal if callout is not None else "")',
        '            announce_refusal(self, self.account, callout.refusal if callout is not None else "")',
        (_CALLOUT,),
        "a callout refusal's account event goes to $G instead of the callout's account",
    ),
    Mutation(
        "client_tls_openssl_cipher_name",
        "server",
        "jsemu/server/client_tls.py",
        '        out["cipher"] = _GO_CIPHER_NAMES.get(cipher[0], cipher[0])',
        '        out["cipher"] = cipher[0]',
        (_TLS,),
        "a TLS 1.2 client's cipher suite shown by OpenSSL's name, not Go's",
    ),
    Mutation(
        "client_tls_leaf_only",
        "server",
        "jsemu/server/client_tls.py",
        "    while chain[-1].issuer != chain[-1].subject and len(chain) <= len(authorities):",
        "    while False:",
        (_TLS,),
        "the verified chain stops at the client's certificate, without its CA",
    ),
    Mutation(
        "client_tls_openssl_version",
        "server",
        "jsemu/server/client_tls.py",
        '        out["version"] = _VERSIONS.get(version, version)',
        '        out["version"] = version',
        (_TLS,),
        "the TLS version shown as OpenSSL's TLSv1.3, not Go's 1.3",
    ),
    Mutation(
        "client_tls_missing",
        "protocol",
        "jsemu/protocol/jwt/callout.py",
        "    if client_tls is not None:  # omitempty",
        "    if False:  # omitempty",
        (_TLS,),
        "the callout request of a TLS client has no client_tls",
    ),
    Mutation(
        "auth_err_reload_silent",
        "server",
        "jsemu/server/connection.py",
        "        )\n        announce_dropped(self)\n",
        "        )\n",
        (_RELOAD,),
        "a client a reload refuses leaves without the system account's CLIENT.AUTH.ERR",
    ),
    Mutation(
        "auth_err_reload_closed_reason",
        "server",
        "jsemu/server/closed.py",
        '    "Authorization Violation": "Authentication Failure",  # Go\'s AuthenticationViolation\n',
        "",
        (_RELOAD,),
        "a client a reload refuses leaves its account as 'Client Closed' (DISCONNECT, /connz?state=closed)",
    ),
    Mutation(
        "auth_err_reload_in_g",
        "server",
        "jsemu/server/auth_errors.py",
        "        _send(conn, system.router, subject, name, AUTHENTICATION_FAILURE, name)",
        "        _send(conn, system.router, subject, GLOBAL_ACCOUNT, AUTHENTICATION_FAILURE)",
        (_RELOAD,),
        "a logged-in client's AUTH.ERR shows $G instead of its account",
    ),
    Mutation(
        "auth_err_account_field_silent",
        "server",
        "jsemu/server/connection.py",
        "            self._announce_connect()\n            announce_dropped(self)\n",
        "",
        (_CONFIG,),
        "a CONNECT naming an account is refused without its CONNECT, AUTH.ERR and DISCONNECT events",
    ),
]
