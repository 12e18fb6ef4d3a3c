"""Mutations for the monitoring gaps: /healthz and $SYS HEALTHZ options (``server/healthz.py``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_HEALTHZ = "jsemu/server/healthz.py"
_HEALTHZ_TESTS = ("tests/server/test_healthz.py",)

MUTATIONS: list[Mutation] = [
    Mutation(
        "monitorbits_healthz_memory_streams_found",
        "server",
        "jsemu/jetstream/monitoring.py",
        'sorted(s.name for s in js.streams.values() if s.config.storage != "memory")',
        "sorted(s.name for s in js.streams.values())",
        # the test servers have a store_dir: this branch is the in-process one
        ("tests/server/test_healthz_inprocess.py",),
        "without a store_dir, a memory stream counted as stored: nats-server never finds one",
    ),
    Mutation(
        "monitorbits_healthz_enabled_only_checks_assets",
        "server",
        _HEALTHZ,
        "    if opts.js_server_only or assets is None or opts.js_enabled_only or opts.js_enabled or clustered:",
        "    if opts.js_server_only or assets is None or clustered:",
        _HEALTHZ_TESTS,
        "js-enabled-only (and the deprecated js-enabled) still look for the account: nats-server stops at 'JetStream is on'",
    ),
    Mutation(
        "monitorbits_healthz_details_keeps_status",
        "server",
        _HEALTHZ,
        '            self.status = "error" if self.errors else "ok"\n',
        "            pass\n",
        _HEALTHZ_TESTS,
        "with details, a 404 says 'unavailable' instead of nats-server's 'error'",
    ),
    Mutation(
        "monitorbits_healthz_consumer_not_checked",
        "server",
        _HEALTHZ,
        "                consumer_found = bool(opts.consumer) and opts.consumer in consumers\n",
        "                consumer_found = True\n",
        _HEALTHZ_TESTS,
        "any consumer name passes on a found stream: nats-server answers 404 for one it lacks",
    ),
    Mutation(
        "monitorbits_healthz_http_keeps_status_code",
        "server",
        "jsemu/server/monitor.py",
        '            code = value.pop("status_code")\n',
        '            code = value.get("status_code")\n',
        _HEALTHZ_TESTS,
        "the HTTP answer keeps status_code in its body: nats-server moves it to the status line",
    ),
    Mutation(
        "monitorbits_healthz_account_dir_by_streams",
        "server",
        "jsemu/jetstream/monitoring.py",
        '        return [(name, _folders(root / name / "streams")) for name in _folders(root) if name != _SNAP_STAGING]\n',
        '        return [(n, s) for n in _folders(root) if (s := _folders(root / n / "streams")) and n != _SNAP_STAGING]\n',
        _HEALTHZ_TESTS,
        "an account folder without streams (its file stream deleted) not found: nats-server still finds it",
    ),
    Mutation(
        "monitorbits_jsz_raft_ignored",
        "server",
        "jsemu/server/monitor.py",
        '        leaders = flags["raft"] and server.options.cluster_size <= 1 and server.cluster is None\n',
        "        leaders = False\n",
        ("tests/server/test_jsz_raft.py",),
        "/jsz?raft=true without streams_leader and consumers_leader: nats-server counts every stream standalone",
    ),
    Mutation(
        "monitorbits_jsz_leaders_not_omitted",
        "server",
        "jsemu/server/monitor.py",
        '        if leaders and out["consumers"]:\n',
        "        if leaders:\n",
        ("tests/server/test_jsz_raft.py",),
        "consumers_leader: 0 shown: nats-server's omitempty leaves it out",
    ),
    Mutation(
        "monitorbits_jsz_flags_not_decoded",
        "server",
        "jsemu/server/monitor.py",
        "        flags |= {name: query_bool(query, name) for name in _JSZ_FLAGS[5:]}\n",
        '        flags |= {name: query.get(name, "").lower() in ("1", "true") for name in _JSZ_FLAGS[5:]}\n',
        ("tests/server/test_jsz_raft.py",),
        "raft=x read as false: nats-server's decodeBool answers 400",
    ),
    Mutation(
        "monitorbits_sys_jsz_raft_dropped",
        "server",
        "jsemu/server/system_account.py",
        '("accounts", "streams", "config", "raft")',
        '("accounts", "streams", "config")',
        ("tests/server/test_jsz_raft.py::test_sys_jsz_raft",),
        "the $SYS JSZ request's raft option not passed on to /jsz",
    ),
]
