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
]
