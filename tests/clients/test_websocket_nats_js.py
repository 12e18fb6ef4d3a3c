"""nats.js v3 over WebSocket (``wsconnect`` of ``@nats-io/nats-core``, the transport of browsers
and of nats.js's own WebSocket test runs) sees the same results from jsemu as from nats-server
2.15.1.

Each server is a process started the way the official clients' harnesses start one: the
``websocket { port: -1, no_tls: true }`` block, the port read from the ``Listening for websocket
clients on ws://HOST:PORT`` log line (``RealServer(websocket=True).ws_url``), here with
``max_payload`` 4 MB so that a 2 MB payload fits. ``js/ws_check.mjs <ws-url> <name>`` runs
publish/subscribe, request/reply, headers, the 2 MB payload, KV put/get/watch and a pull consumer,
and prints one JSON object; the jsemu run must print the object the nats-server run printed.

Node 20 has a global ``WebSocket`` only behind ``--experimental-websocket`` (Node 22 has it
always), so no WebSocket package is needed. The Node setup (``node`` fixture, ``npm ci`` on first
use, ``JSEMU_SKIP_NODE``) is the KV tests'.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest
from support.servers import KINDS, RealServer

from . import test_kv_nats_js as kv_nats_js

#: The session fixture of the ``node`` executable (``npm ci`` on first use), shared with the KV tests.
node = kv_nats_js.node

#: The real side carries the ``real`` marker: a mutation run (planted bugs in jsemu) leaves it out.
WS_KINDS = [pytest.param(k, marks=() if k == "jsemu" else pytest.mark.real) for k in KINDS]
#: The jsemu side alone (tests comparing it with a run against nats-server).
WS_JSEMU = [p for p in WS_KINDS if p.values == ("jsemu",)]

#: nats-server's default max_payload is 1 MB: 4 MB lets the 2 MB payload through.
MAX_PAYLOAD = 4 * 1024 * 1024
NAME = "WS1"


def websocket_server(kind: str) -> RealServer:
    """A server process of ``kind`` with the harnesses' WebSocket block (jsemu via ``jsemu serve -c``,
    with the same configuration file)."""
    srv = RealServer({"max_payload": MAX_PAYLOAD}, websocket=True, jsemu_process=kind == "jsemu")
    if not srv.ws_url:
        srv.stop()
        pytest.fail(f"{kind}: no 'Listening for websocket clients on' line in the log", pytrace=False)
    return srv


def node_args(node: str) -> list[str]:
    """``--experimental-websocket`` where Node has no global WebSocket without it (before 22)."""
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout
    major = int(version.strip().lstrip("v").split(".")[0])
    return ["--experimental-websocket"] if major < 22 else []


async def run_ws_check(node: str, ws_url: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        node,
        *node_args(node),
        str(kv_nats_js.JS_DIR / "ws_check.mjs"),
        ws_url,
        NAME,
        cwd=kv_nats_js.JS_DIR,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), kv_nats_js.RUN_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"ws_check.mjs against {ws_url} did not finish in {kv_nats_js.RUN_TIMEOUT} s", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"ws_check.mjs against {ws_url} exited {proc.returncode}:\n{err.decode(errors='replace')}")
    result: dict[str, Any] = json.loads(out)
    return result


#: The run against nats-server, shared by the tests of the module.
_REAL: dict[str, dict[str, Any]] = {}


async def real_result(node: str) -> dict[str, Any]:
    if "real" not in _REAL:
        srv = websocket_server("real")
        try:
            _REAL["real"] = await run_ws_check(node, srv.ws_url)
        finally:
            srv.stop()
    return _REAL["real"]


@pytest.mark.parametrize("kind", WS_KINDS)
def test_ws_url_from_the_log_line(kind: str) -> None:
    """With ``websocket { port: -1, no_tls: true }`` the server names its random port on the
    harnesses' log line; with no host it listens on every interface (reached on loopback)."""
    srv = websocket_server(kind)
    try:
        url = srv.ws_url
        assert url.startswith("ws://127.0.0.1:")
        assert int(url.rsplit(":", 1)[1]) not in (0, srv.port)
    finally:
        srv.stop()


@pytest.mark.real
async def test_nats_js_over_websocket_on_real_server(node: str) -> None:
    """The script itself works over nats-server's WebSocket port: spot checks of its results."""
    res = await real_result(node)
    sub = NAME.lower()
    # INFO over WebSocket names the WebSocket listener (no host in the block: every interface).
    assert res["info"] == {
        "headers": True,
        "jetstream": True,
        "max_payload": MAX_PAYLOAD,
        "proto": 1,
        "host": "0.0.0.0",
        "port_is_ws_port": True,
    }
    assert [m["subject"] for m in res["pubsub"]] == [f"{sub}.ps.a", f"{sub}.ps.b.c", f"{sub}.ps.q"]
    assert [m["data"] for m in res["pubsub"]] == ["one", "", "three"]
    assert res["request"] == {"data": "pong:ping", "headers": {"X-Echo": ["r1"]}}
    assert res["request.no_responders"]["message"] == f"no responders: '{sub}.nobody'"
    assert res["headers"][0]["headers"] == {"Content-Type": ["text/plain"], "X-Multi": ["a", "b"]}
    assert res["big"]["received"] == res["big"]["sent"]
    assert res["big"]["sent"]["length"] == 2 * 1024 * 1024
    assert res["kv.put"] == [1, 2, 3]
    assert [(e["value"], e["revision"], e["operation"]) for e in res["kv.watch.k1"]] == [
        ("v2", 2, "PUT"),
        ("v3", 4, "PUT"),
        ("", 5, "DEL"),
    ]
    assert [m["seq"] for m in res["js.fetch"]] == [1, 2, 3]
    assert res["js.next"] == {"subject": f"{sub}.js.1", "data": "m3", "seq": 4, "redelivered": False}
    assert res["js.consumer.info"] == {"delivered": 4, "ack_floor": 4, "pending": 1, "ack_pending": 0}
    assert res["closed"] is None


@pytest.mark.parametrize("kind", WS_JSEMU)
async def test_nats_js_over_websocket_same_on_jsemu(node: str, kind: str) -> None:
    """The script prints the same JSON over jsemu's WebSocket port as over nats-server's."""
    expected = await real_result(node)
    srv = websocket_server(kind)
    try:
        got = await run_ws_check(node, srv.ws_url)
    finally:
        srv.stop()
    differing = [
        f"{key}:\n  real:  {json.dumps(expected.get(key))}\n  jsemu: {json.dumps(got.get(key))}"
        for key in [*expected, *(k for k in got if k not in expected)]
        if expected.get(key) != got.get(key)
    ]
    assert not differing, "ws_check.mjs results differ at\n" + "\n".join(differing)
