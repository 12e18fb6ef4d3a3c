"""nats.js v3 on priority groups and pausing: overflow ``fetch`` with ``min_pending``,
pinned ``fetch`` (the client carries the ``Nats-Pin-Id`` on), ``unpin``, ``pause`` /
``resume`` give the same results on jsemu as on nats-server 2.15.1
(``js/priority_check.mjs``)."""

from __future__ import annotations

import uuid
from typing import Any

import jsemu

from . import test_kv_nats_js as kv_nats_js

#: The session fixture of the ``node`` executable, shared with the KV tests.
node = kv_nats_js.node
run_script = kv_nats_js.run_script


async def test_priority_groups_and_pause_same_on_jsemu(node: str, real_server: Any) -> None:
    name = f"P{uuid.uuid4().hex[:10]}"
    expected = await run_script(node, "priority_check.mjs", f"nats://127.0.0.1:{real_server.port}", name)
    # spot checks that the script sees what it should on the real server
    assert expected["overflow.fetch"] == {"none": [], "some": ["m0", "m1"], "pending": 6}
    assert all(m["hasPin"] for m in expected["pinned.fetch"]["pinned"])
    assert expected["pinned.fetch"]["before"] == [{"group": "A", "pinned": True}]
    assert expected["pause"]["paused"] is True and expected["pause"]["resumed"] is False
    async with jsemu.Server() as srv:
        got = await run_script(node, "priority_check.mjs", srv.url, name)
    assert got == expected
