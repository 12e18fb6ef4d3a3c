"""Planted bugs in small wire details outside operator mode (``leads``): the order one
connection gets a run's messages in, monitoring paths, PONG before a JetStream ack, RELOAD."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "outbound_plans_a_connection_twice",
        "server",
        "jsemu/server/outbound.py",
        "                if len(found) < 2 or len({member[1] for member in found}) == len(found):\n",
        "                if True:\n",
        (
            "tests/server/test_delivery_order.py::test_two_subscriptions_interleave",
            "tests/server/test_outbound_plans.py",
        ),
        "a connection with two matching subscriptions gets a run as a block per subscription",
    ),
]
MUTATIONS += [
    Mutation(
        "monitor_path_trailing_slash_accepted",
        "server",
        "jsemu/server/monitor_paths.py",
        '    return "/".join(segments), query\n',
        '    return "/".join(segments).rstrip("/") or "/", query\n',
        ("tests/server/test_monitor_paths.py",),
        "a monitoring path with a trailing slash answers its endpoint (nats-server: 404)",
    ),
    Mutation(
        "monitor_path_unclean_served",
        "server",
        "jsemu/server/monitor_paths.py",
        "    if cleaned == escaped:\n        return None\n",
        "    if True:\n        return None\n",
        ("tests/server/test_monitor_paths.py",),
        "an unclean monitoring path (//varz) is answered instead of redirected",
    ),
    Mutation(
        "monitor_path_escape_kept_raw",
        "server",
        "jsemu/server/monitor_paths.py",
        "    if _VALID.fullmatch(path):\n        return path\n",
        "    if True:\n        return path\n",
        ("tests/server/test_monitor_paths.py::test_monitoring_paths_answer_as_nats_server",),
        "a path holding a # is cleaned as sent, not as Go re-escapes it",
    ),
]
MUTATIONS += [
    Mutation(
        "sys_reload_refused",
        "server",
        "jsemu/server/system_account.py",
        "            problem = NO_CONFIG_FILE if reload is None else reload()\n",
        "            problem = NO_CONFIG_FILE\n",
        ("tests/server/test_sys_reload.py::test_reload_as_nats_server",),
        "$SYS.REQ.SERVER.<id>.RELOAD answers that no file was given though jsemu serve has one",
    ),
    Mutation(
        "sys_reload_not_logged",
        "cli",
        "jsemu/cli/serve.py",
        "server.reload_config = lambda: _reload_logged(server, config, reread)",
        "server.reload_config = lambda: reload_config(server, config, reread)",
        ("tests/server/test_sys_reload.py::test_reload_as_nats_server",),
        "a reload asked for by RELOAD does not log 'Reloaded server configuration (<digest>)'",
    ),
]
