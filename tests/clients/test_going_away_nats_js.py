"""nats.js v3 (``@nats-io/jetstream`` 3.4) when a consumer or its stream goes away while a
pull waits (``js/going_away_check.mjs``): the same results on jsemu as on nats-server 2.15.1.

On both, the ``409 Consumer Deleted`` a waiting request gets ends ``next()`` and ``fetch()``
at once with ``JetStreamStatusError: consumer deleted`` (also when the stream was deleted),
a ``consume()`` reports ``consumer_deleted``, then ``heartbeats_missed`` and
``consumer_not_found``, and an ordered consumer's
``consume()`` goes on with no message lost after its consumer is deleted or the server
restarts on the same port and store directory (``js/restart_check.mjs``, against
``jsemu serve`` as a process).

When the stream goes (``js/stream_gone_check.mjs``: deleted, or deleted and made again), a
durable's ``fetch()`` and an ordered consumer's ``next()`` / ``fetch()`` end at once with
``consumer deleted`` (the next ordered call: ``no responders``, its old consumer's subject
being gone); a ``consume()`` reports ``consumer_deleted``, ``heartbeats_missed`` and then
``stream_not_found`` (deleted) or ``consumer_not_found`` (re-created); an ordered ``consume()``
on a re-created stream is recreated and goes on from the next stream sequence it expected.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from typing import Any

import pytest
from support.cluster import free_port
from support.servers import REAL_STORE_FLAKE, RealServer

import jsemu

from . import test_kv_nats_js as kv_nats_js

#: The session fixture of the ``node`` executable, shared with the KV tests.
node = kv_nats_js.node
run_script = kv_nats_js.run_script


async def _run_real(node: str, script: str, real_server: Any, name: str) -> dict[str, Any]:
    """``script`` against the shared nats-server, run again under other names (at most
    twice) when the server failed to make a file stream's store; the names are not in the
    results."""
    for attempt in range(3):
        try:
            return await run_script(node, script, f"nats://127.0.0.1:{real_server.port}", f"{name}r{attempt}")
        except pytest.fail.Exception as exc:
            if REAL_STORE_FLAKE not in str(exc) or attempt == 2:
                raise
    raise AssertionError("unreachable")


async def test_going_away_same_on_jsemu(node: str, real_server: Any) -> None:
    name = f"G{uuid.uuid4().hex[:10]}"
    async with jsemu.Server() as srv:
        expected, got = await asyncio.gather(
            _run_real(node, "going_away_check.mjs", real_server, name),
            run_script(node, "going_away_check.mjs", srv.url, name),
        )
    # spot checks that the script sees what it should on the real server
    assert expected["next.consumer"] == {"error": "JetStreamStatusError: consumer deleted", "early": True}
    assert expected["consume.notifications"] == [
        "consumer_deleted 409 consumer deleted",
        "heartbeats_missed",
        "consumer_not_found",
    ]
    assert expected["ordered.consume"] == [f"m{i}@{i + 1}" for i in range(6)]
    assert got == expected


async def _across_restart(node: str, jsemu_process: bool) -> dict[str, Any]:
    """``restart_check.mjs`` against a server process restarted (same port and store
    directory) when the script says it is ready."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="jsemu-restart-") as store:
        servers = [RealServer(jsemu_process=jsemu_process, port=port, store_dir=store)]
        try:
            proc = await asyncio.create_subprocess_exec(
                node,
                str(kv_nats_js.JS_DIR / "restart_check.mjs"),
                f"nats://127.0.0.1:{port}",
                "RESTART",
                cwd=kv_nats_js.JS_DIR,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            assert proc.stdout is not None and proc.stderr is not None
            try:
                ready = await asyncio.wait_for(proc.stdout.readline(), 30)
                assert ready == b"READY\n", ready + await proc.stderr.read()
                servers[0].stop()
                servers.append(await asyncio.to_thread(RealServer, None, True, jsemu_process, port, store))
                out, err = await asyncio.wait_for(proc.communicate(), 45)
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            assert proc.returncode == 0, err.decode(errors="replace")
            result: dict[str, Any] = json.loads(out)
            return result
        finally:
            for srv in servers:
                srv.stop()


async def test_ordered_consume_across_a_restart(node: str) -> None:
    expected, got = await asyncio.gather(_across_restart(node, False), _across_restart(node, True))
    assert expected == {"ordered.consume": [f"m{i}@{i + 1}" for i in range(6)]}
    assert got == expected


async def test_stream_gone_same_on_jsemu(node: str, real_server: Any) -> None:
    name = f"S{uuid.uuid4().hex[:10]}"
    async with jsemu.Server() as srv:
        expected, got = await asyncio.gather(
            _run_real(node, "stream_gone_check.mjs", real_server, name),
            run_script(node, "stream_gone_check.mjs", srv.url, name),
        )
    deleted = "JetStreamStatusError: consumer deleted"
    for what in ("deleted", "recreated"):
        assert expected[f"fetch.{what}"] == {"error": deleted, "early": True}
        assert expected[f"ordered.next.{what}"]["error"] == deleted
        assert expected[f"ordered.next.{what}"]["after"] == "JetStreamStatusError: no responders"
    assert expected["consume.deleted"]["notifications"][2] == "stream_not_found"
    assert expected["consume.recreated"]["notifications"][2] == "consumer_not_found"
    assert expected["ordered.consume.recreated"]["got"] == ["n2@3"]
    assert "ordered_consumer_recreated" in expected["ordered.consume.recreated"]["notifications"]
    assert got == expected
