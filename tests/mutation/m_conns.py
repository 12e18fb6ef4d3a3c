"""Mutations of issue 32's closed connections and reply plans shared across subjects."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_CLOSING = "tests/server/test_closing_connections.py"
_PLANS = "tests/server/test_outbound_plans.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "conns_lost_transport_written",
        "server",
        "jsemu/server/connection.py",
        "        if transport.is_closing():\n            # Lost",
        "        if False:\n            # Lost",
        (_CLOSING,),
        "a flush writes to a transport asyncio already lost (a log line per write, routing kept)",
    ),
    Mutation(
        "conns_failed_write_kept",
        "server",
        "jsemu/server/connection.py",
        "        if transport.is_closing():  # the write failed",
        "        if False:  # the write failed",
        (_CLOSING,),
        "a connection whose write failed stays in routing until asyncio reports it lost",
    ),
    Mutation(
        "conns_eof_not_at_once",
        "server",
        "jsemu/server/connection.py",
        "            self.flush()\n        self._teardown()\n",
        "            self.flush()\n",
        (f"{_CLOSING}::test_eof_leaves_routing_at_once",),
        "a client's EOF leaves it subscribed until connection_lost",
    ),
    Mutation(
        "conns_eof_drops_queued",
        "server",
        "jsemu/server/connection.py",
        "        if not self.closed and not self.handshaking:\n            self.flush()\n        self._teardown()",
        "        self._teardown()",
        (f"{_CLOSING}::test_eof_leaves_routing_at_once",),
        "a client that closed only its sending side loses what was queued for it (nats-server flushes it)",
    ),
    Mutation(
        "conns_dropped_output_uncounted",
        "server",
        "jsemu/server/server.py",
        "            pending = sum(map(len, conn.out))",
        "            pending = 0",
        (_CLOSING,),
        "what was queued for a closed connection is dropped without showing as its pending_bytes",
    ),
    Mutation(
        "conns_members_not_invalidated",
        "server",
        "jsemu/server/outbound.py",
        "        sublist.derive(self._members)\n",
        "",
        (_PLANS,),
        "the members shared by plans survive a SUB/UNSUB/close",
    ),
    Mutation(
        "conns_wide_plans_not_invalidated",
        "server",
        "jsemu/server/outbound.py",
        "        sublist.derive(self._wide)\n",
        "",
        (_PLANS,),
        "wide plans survive a SUB/UNSUB/close",
    ),
    Mutation(
        "conns_members_keep_limited",
        "server",
        "jsemu/server/outbound.py",
        "                if type(conn) is not ClientConnection or sub.max or sub.closed:\n                    break\n                found",
        "                if type(conn) is not ClientConnection or sub.closed:\n                    break\n                found",
        ("tests/server/test_outbound.py", _PLANS),
        "a subscription with an UNSUB limit is put in a plan (its limit no longer counted)",
    ),
]
