"""nats.js v3 on consumers: KV ``keys`` / ``history`` / ``watch`` (ordered push consumers,
with flow control and heartbeats) and a pull ``consume()`` give the same results on jsemu as
on nats-server 2.15.1 (``js/consumers_check.mjs``)."""

from __future__ import annotations

import uuid
from typing import Any

import jsemu

from . import test_kv_nats_js as kv_nats_js

#: The session fixture of the ``node`` executable, shared with the KV tests.
node = kv_nats_js.node
run_script = kv_nats_js.run_script


async def test_consumers_same_on_jsemu(node: str, real_server: Any) -> None:
    bucket = f"C{uuid.uuid4().hex[:10]}"
    expected = await run_script(node, "consumers_check.mjs", f"nats://127.0.0.1:{real_server.port}", bucket)
    # spot checks that the script sees what it should on the real server
    assert expected["kv.keys"] == ["a"]
    assert [e["value"] for e in expected["kv.watch"]] == ["3", "", "4", "5"]
    assert [m["data"] for m in expected["js.consume"]] == [f"m{i}" for i in range(6)]
    async with jsemu.Server() as srv:
        got = await run_script(node, "consumers_check.mjs", srv.url, bucket)
    assert got == expected
