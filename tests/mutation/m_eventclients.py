"""Planted bugs of the ``client`` of ``$SYS`` connect/disconnect events (``client_info.py``
``event_client``, ``system_account.py``), with the tests that catch them."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_EVENTS = "tests/server/test_event_clients.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "event_client_no_issuer_key",
        "server",
        "jsemu/server/system_account.py",
        '            issuer = account if name and conn.opts.get("nkey") == name else ""',
        '            issuer = ""',
        (_EVENTS,),
        "an nkey user's connect event has no issuer_key (nats-server: its account)",
    ),
    Mutation(
        "event_client_type_always_nats",
        "server",
        "jsemu/server/system_account.py",
        '            "websocket" if conn.info_base is not None else "nats",\n            issuer,',
        '            "nats",\n            issuer,',
        (_EVENTS,),
        "a WebSocket client's connect event says client_type nats",
    ),
    Mutation(
        "event_client_name_tag_is_key",
        "server",
        "jsemu/server/system_account.py",
        "            name_tag(self.server.options.auth, account),",
        "            account,",
        (_EVENTS,),
        "a JWT account's events name it by its key, not its JWT's name (getNameTag)",
    ),
    Mutation(
        "event_client_issuer_ignores_signing_key",
        "server",
        "jsemu/server/system_account.py",
        "            issuer = user.signing_key or account",
        "            issuer = account",
        (_EVENTS,),
        "a user issued by a signing key has its account as issuer_key",
    ),
    Mutation(
        "account_info_name_tag_is_key",
        "server",
        "jsemu/server/account_monitor.py",
        '    out["name_tag"] = name_tag(server.options.auth, account)  # getNameTag: a JWT\'s name',
        '    out["name_tag"] = account',
        (_EVENTS,),
        "account INFO names a JWT account by its key",
    ),
    Mutation(
        "subsz_account_tag_is_key",
        "server",
        "jsemu/server/account_monitor.py",
        '            detail: dict[str, Any] = {"account": account, "account_tag": tag, "subject": subject}',
        '            detail: dict[str, Any] = {"account": account, "account_tag": account, "subject": subject}',
        (_EVENTS,),
        "SUBSZ's account_tag is a JWT account's key",
    ),
]
