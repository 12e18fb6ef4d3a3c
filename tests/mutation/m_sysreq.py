"""Planted bugs in ``$SYS.REQ.ACCOUNT.<acc>.<kind>`` and ``$SYS.REQ.USER.INFO``."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_TESTS = ("tests/server/test_account_requests.py::test_account_requests_as_nats_server",)

MUTATIONS: list[Mutation] = [
    Mutation(
        "sysreq_import_ignores_account",
        "server",
        "jsemu/server/account_requests.py",
        'self.respond(router, reply, subject.rsplit(b".", 1)[1].decode(), router.name, body)',
        'self.respond(router, reply, subject.rsplit(b".", 1)[1].decode(), "PING", body)',
        _TESTS,
        "an account's PING.CONNZ/STATZ import answers for no account instead of its own",
    ),
    Mutation(
        "sysreq_statz_not_skipped",
        "server",
        "jsemu/server/account_requests.py",
        '        if not statz["account_statz"] and not include_unused:\n            raise _Skip\n',
        "",
        _TESTS,
        "a STATZ with no account to show answers an empty list instead of staying silent",
    ),
    Mutation(
        "sysreq_decode_error_has_data",
        "server",
        "jsemu/server/account_requests.py",
        'self._send(router, reply, envelope.response(error={"code": 400, "description": _text(exc)}))',
        'self._send(router, reply, envelope.response(None, {"code": 400, "description": _text(exc)}))',
        _TESTS,
        'a body that does not decode answers with "data": null (nats-server leaves data out)',
    ),
    Mutation(
        "sysreq_filters_ignored",
        "server",
        "jsemu/server/account_requests.py",
        "        if not self._selects_this_server(options):\n            return\n",
        "",
        _TESTS,
        "server filters that do not name this server still get an answer",
    ),
    Mutation(
        "sysreq_connz_unknown_account_lists_all",
        "server",
        "jsemu/server/monitor.py",
        "        if account and account not in server.account_space.by_name:",
        "        if False:",
        _TESTS,
        "CONNZ of an account that does not exist lists every connection instead of none",
    ),
    Mutation(
        "sysreq_user_info_without_permissions",
        "server",
        "jsemu/server/account_requests.py",
        '            out["permissions"] = shown\n',
        "",
        _TESTS,
        "USER.INFO leaves out the requester's permissions",
    ),
    Mutation(
        "sysreq_conns_answers_without_connections",
        "server",
        "jsemu/server/account_requests.py",
        '        if not stat["conns"]:\n            return\n',
        "",
        _TESTS,
        "CONNS answers for an account without connections (nats-server stays silent)",
    ),
    Mutation(
        "sysreq_imports_routed",
        "server",
        "jsemu/server/cluster.py",
        ' or getattr(sub.client, "local_only", False):',
        ":",
        ("tests/server/test_routes.py::test_interest_sent_as_rs_ops",),
        "the system imports' subscriptions are sent to routes as interest",
    ),
    Mutation(
        "sysreq_js_flags_always",
        "server",
        "jsemu/server/envelope.py",
        '"flags": _JS_FLAGS if opts.jetstream else 0',
        '"flags": _JS_FLAGS',
        ("tests/server/test_account_requests.py::test_global_account_answers_without_accounts",),
        "ServerInfo.flags claims JetStream capabilities on a server without JetStream",
    ),
    Mutation(
        "sysreq_reload_not_attached",
        "server",
        "jsemu/server/accounts.py",
        "        self.server.account_requests.attach_all()  # new accounts get the system imports\n",
        "",
        ("tests/server/test_account_requests.py::test_an_account_a_reload_adds_gets_the_system_imports",),
        "an account a reload adds gets no system imports",
    ),
    Mutation(
        "sysreq_no_responders_skip_filtered_inbox",
        "server",
        "jsemu/server/connection.py",
        'if sub.client is self or getattr(sub.client, "conn", None) is self:',
        "if sub.client is self:",
        _TESTS,
        "no 503 for a client whose inbox subscription its subscribe deny list filters",
    ),
]
