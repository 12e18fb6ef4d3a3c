"""nats.js v3 (``@nats-io/jetstream`` 3.4) when a consumer or its stream goes away while a
pull waits (``js/going_away_check.mjs``): the same results on jsemu as on nats-server 2.15.1.

On both, the ``409 Consumer Deleted`` a waiting request gets ends ``next()`` and ``fetch()``
at once with ``JetStreamStatusError: consumer deleted`` (also when the stream was deleted),
a ``consume()`` reports a ``consumer_deleted`` notification, and an ordered consumer's
``consume()`` goes on after its consumer is deleted with no message lost.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import jsemu

from . import test_kv_nats_js as kv_nats_js

#: The session fixture of the ``node`` executable, shared with the KV tests.
node = kv_nats_js.node
run_script = kv_nats_js.run_script


async def test_going_away_same_on_jsemu(node: str, real_server: Any) -> None:
    name = f"G{uuid.uuid4().hex[:10]}"
    async with jsemu.Server() as srv:
        expected, got = await asyncio.gather(
            run_script(node, "going_away_check.mjs", f"nats://127.0.0.1:{real_server.port}", name),
            run_script(node, "going_away_check.mjs", srv.url, name),
        )
    # spot checks that the script sees what it should on the real server
    assert expected["next.consumer"] == {"error": "JetStreamStatusError: consumer deleted", "early": True}
    assert expected["consume.notifications"] == ["consumer_deleted 409 consumer deleted"]
    assert expected["ordered.consume"] == [f"m{i}@{i + 1}" for i in range(6)]
    assert got == expected
