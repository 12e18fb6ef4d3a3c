"""``/healthz`` of an in-process server without a ``store_dir`` (``jsemu/server/healthz.py``):
nats-server has no such mode (it always has a store), so the stored streams are the file
streams, and the answers are those nats-server gives for the same streams in its store
(captured in ``test_healthz.py``): a file stream and its consumers are found, a memory stream
never, and an account with only memory streams is not."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import nats
from nats.js.api import StorageType

import jsemu
from jsemu.threaded import ThreadedServer


def _get(port: int, query: str) -> tuple[int, object]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz{query}", timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_memory_streams_are_not_stored() -> None:
    with ThreadedServer(jsemu.Server(http_port=-1)) as emu:
        monitor = emu.server.monitor
        assert monitor is not None

        async def make() -> None:
            nc = await nats.connect(emu.url)
            js = nc.jetstream()
            await js.add_stream(name="M", subjects=["m"], storage=StorageType.MEMORY)
            await nc.close()

        asyncio.run(make())
        assert _get(monitor.port, "?account=$G")[0] == 404
        assert _get(monitor.port, "?account=$G&stream=M")[0] == 404

        async def more() -> None:
            nc = await nats.connect(emu.url)
            js = nc.jetstream()
            await js.add_stream(name="F", subjects=["f"])
            await js.add_consumer("F", durable_name="C", mem_storage=True)
            await nc.close()

        asyncio.run(more())
        assert _get(monitor.port, "?account=$G&stream=F&consumer=C") == (200, {"status": "ok"})
        assert _get(monitor.port, "?account=$G&stream=M") == (
            404,
            {"status": "unavailable", "error": 'JetStream stream "M" not found on account "$G"'},
        )
        assert _get(monitor.port, "?account=$G&stream=F&consumer=D")[0] == 404
