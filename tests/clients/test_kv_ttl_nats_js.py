"""nats.js v3 (``@nats-io/kv``) with per-key TTLs and limit markers: the same results from
jsemu as from nats-server 2.15.1 (``js/kv_ttl_check.mjs``; the runner is the one of
``test_kv_nats_js.py``)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import jsemu

from .test_kv_nats_js import node, run_script  # noqa: F401  (node is a fixture)


async def test_kv_ttl_and_markers_same_on_jsemu(node: str, real_server: Any) -> None:  # noqa: F811
    bucket = f"B{uuid.uuid4().hex[:10]}"
    expected = await run_script(node, "kv_ttl_check.mjs", f"nats://127.0.0.1:{real_server.port}", bucket)
    # Spot checks of what nats-server does: the expired key left a marker that the watcher
    # sees as a purge, and the marker expired in its turn.
    assert expected["get.k.expired"]["operation"] == "PURGE"
    assert expected["state.after"]["messages"] == 1
    async with jsemu.Server() as srv:
        got = await run_script(node, "kv_ttl_check.mjs", srv.url, bucket)
    differing = [
        f"{key}:\n  real:  {json.dumps(expected.get(key))}\n  jsemu: {json.dumps(got.get(key))}"
        for key in [*expected, *(k for k in got if k not in expected)]
        if expected.get(key) != got.get(key)
    ]
    assert not differing, "kv_ttl_check.mjs results differ at\n" + "\n".join(differing)
