"""The newest nats.py packages (``nats-jetstream`` 0.3.0) when a consumer or stream goes away or
the server restarts: the same outcome on jsemu as on nats-server 2.15.1.

``newpy/going_away.py`` (see its docstring) records, for a durable pull consumer's ``next`` /
``fetch`` / ``messages()`` and an ordered consumer's ``next`` / ``fetch`` / ``messages()``, what a
wait gives when its consumer is deleted, its stream is deleted, or its stream is deleted and made
again, and what the next call on the same object gives. On nats-server (and so on jsemu):

* every waiting pull hears ``409 Consumer Deleted`` at once (also when the stream goes):
  ``next`` raises ``ConsumerDeletedError``, a ``fetch`` batch ends empty with that error,
  ``messages()`` ends quietly; the next call on a plain pull consumer hears no responders
  (``Exception("Status 503: ")``, a 503 the client does not name);
* an ordered consumer's ``next`` / ``fetch`` also end with ``ConsumerDeletedError``; its next
  call makes a new consumer from the stream sequence after the last batch (on a re-created
  stream, that sequence of the new stream) or, with the stream gone, gives up after
  ``max_reset_attempts`` with ``OrderedConsumerResetError: ... stream not found``;
  ``messages()`` recovers by itself (with the stream gone it ends).

``newpy/restart.py`` runs against a server process (nats-server or ``jsemu serve``) stopped and
started on one port and store directory while a pull ``next`` and an ordered ``next`` wait: both
hear ``409 Server Shutdown`` before the connection drops (an unnamed 409 to the client:
``Exception("Status 409: Server Shutdown")``), the ordered ``messages()`` iteration goes on after
the restart with no message lost, and the durable (file stream) pull consumer goes on where it
was.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import uuid
from typing import Any

import pytest
from support.cluster import free_port
from support.servers import RealServer

import jsemu

from .test_newest_nats_py import HERE, newpy_python

__all__ = ["newpy_python"]

GOING_AWAY = HERE / "newpy" / "going_away.py"
RESTART = HERE / "newpy" / "restart.py"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


async def _going_away(python: str, url: str, name: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        python,
        str(GOING_AWAY),
        url,
        name,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(),
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode(errors="replace")
    result: dict[str, Any] = json.loads(out)
    return result


async def test_going_away_same_on_jsemu(newpy_python: str, real_server: Any) -> None:
    name = f"G{uuid.uuid4().hex[:8]}"
    async with jsemu.Server() as srv:
        expected, got = await asyncio.gather(
            _going_away(newpy_python, f"nats://127.0.0.1:{real_server.port}", name),
            _going_away(newpy_python, srv.url, name),
        )
    deleted = {"error": "ConsumerDeletedError", "message": "Consumer Deleted"}
    # spot checks that the script sees what it should on the real server
    for what in ("consumer", "stream", "recreated"):
        assert expected[f"pull.next.{what}"] == {"raised": deleted, "early": True}
        assert expected[f"pull.fetch.{what}"]["value"] == [[], deleted]
        assert expected[f"pull.next.{what}.after"] == {"raised": {"error": "Exception", "message": "Status 503: "}}
        assert expected[f"ordered.next.{what}"]["raised"] == deleted
    assert expected["ordered.next.consumer.after"] == {"value": "m2@3"}
    assert expected["ordered.next.recreated.after"] == {"value": "n4@3"}
    assert expected["ordered.next.stream.after"]["raised"]["error"] == "OrderedConsumerResetError"
    assert expected["ordered.messages.recreated"]["value"] == ["n2@1", "n3@2"]
    assert expected["ordered.messages.stream"] == {"early": True, "value": [], "first": ["m0@1", "m1@2"]}
    differing = [
        f"{key}:\n  real:  {json.dumps(expected.get(key))}\n  jsemu: {json.dumps(got.get(key))}"
        for key in sorted({*expected, *got})
        if expected.get(key) != got.get(key)
    ]
    assert not differing, "newpy/going_away.py results differ at\n" + "\n".join(differing)


async def _across_restart(python: str, jsemu_process: bool) -> dict[str, Any]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="jsemu-restart-") as store:
        servers = [RealServer(jsemu_process=jsemu_process, port=port, store_dir=store)]
        try:
            proc = await asyncio.create_subprocess_exec(
                python,
                str(RESTART),
                f"nats://127.0.0.1:{port}",
                "RESTART",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=_env(),
            )
            assert proc.stdout is not None and proc.stderr is not None
            try:
                ready = await asyncio.wait_for(proc.stdout.readline(), 30)
                assert ready == b"READY\n", ready + await proc.stderr.read()
                await asyncio.to_thread(servers[0].stop)
                servers.append(await asyncio.to_thread(RealServer, None, True, jsemu_process, port, store))
                out, err = await asyncio.wait_for(proc.communicate(), 60)
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            assert proc.returncode == 0, err.decode(errors="replace")
            result: dict[str, Any] = json.loads(out.splitlines()[-1])
            return result
        finally:
            for srv in servers:
                srv.stop()


@pytest.mark.real
async def test_across_a_restart_on_real_server(newpy_python: str) -> None:
    res = await _across_restart(newpy_python, False)
    shutdown = {"before_expiry": True, "raised": {"error": "Exception", "message": "Status 409: Server Shutdown"}}
    assert res["pull.next.across"] == res["ordered.next.across"] == shutdown
    assert res["ordered.messages.after"] == ["m3@4", "m4@5", "m5@6"], res
    assert res["pull.fetch.after"] == [["m3@4", "m4@5", "m5@6"], None]


async def test_across_a_restart_same_on_jsemu(newpy_python: str) -> None:
    expected, got = await asyncio.gather(_across_restart(newpy_python, False), _across_restart(newpy_python, True))
    assert got == expected
