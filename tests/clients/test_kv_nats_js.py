"""nats.js v3 (Node: ``@nats-io/transport-node``, ``@nats-io/jetstream``, ``@nats-io/kv``) sees the
same results from jsemu as from nats-server 2.15.1.

``js/kv_check.mjs <url> <bucket> [direct]`` drives a KV bucket (``Kvm``) and a stream
(``jetstreamManager``, ``js.publish``, ``jsm.streams.getMessage``) and prints one JSON object of
comparable results (no timestamps). It runs once against the shared real server and once against a
fresh ``jsemu.Server`` with the same bucket name, and the two objects must be equal.

Two modes (``mode`` parameter):

* ``msg-get``: the bucket has ``allow_direct: false``, so ``kv.get`` uses STREAM.MSG.GET;
* ``direct-get``: the bucket has ``allow_direct: true``, so ``kv.get`` uses $JS.API.DIRECT.GET —
  **this mode NEEDS DIRECT GET** in jsemu.

The Node dependencies are installed on first use (``npm ci`` in ``tests/clients/js`` when
``node_modules`` lacks them). Without ``node`` on PATH the tests fail, unless ``JSEMU_SKIP_NODE=1``
is set (then they are skipped).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any, NoReturn

import pytest

import jsemu

JS_DIR = Path(__file__).parent / "js"
SCRIPT = JS_DIR / "kv_check.mjs"
DEPENDENCIES = ("@nats-io/transport-node", "@nats-io/jetstream", "@nats-io/kv")
NPM_TIMEOUT = 300
RUN_TIMEOUT = 60

MODES = pytest.mark.parametrize("mode", ["msg-get", "direct"], ids=["msg-get", "direct-get"])


def _missing_tool(tool: str) -> NoReturn:
    if os.environ.get("JSEMU_SKIP_NODE") == "1":
        pytest.skip(f"{tool} not on PATH (JSEMU_SKIP_NODE=1)")
    pytest.fail(
        f"{tool} is not on PATH: the nats.js tests need Node.js 20+ with npm (set JSEMU_SKIP_NODE=1 to skip them)",
        pytrace=False,
    )


def _text(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` executable, with the dependencies of ``tests/clients/js`` installed."""
    exe = shutil.which("node")
    if exe is None:
        _missing_tool("node")
    modules = JS_DIR / "node_modules"
    if not all((modules / dep / "package.json").is_file() for dep in DEPENDENCIES):
        npm = shutil.which("npm")
        if npm is None:
            _missing_tool("npm")
        cmd = [npm, "ci", "--no-audit", "--no-fund"]
        try:
            done = subprocess.run(
                cmd,
                check=False,
                cwd=JS_DIR,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            output = "\n".join(_text(x) for x in (exc.stdout, exc.stderr))
            raise RuntimeError(f"`{' '.join(cmd)}` in {JS_DIR} did not finish in {NPM_TIMEOUT} s:\n{output}") from None
        if done.returncode != 0:
            raise RuntimeError(
                f"`{' '.join(cmd)}` in {JS_DIR} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
            )
    return exe


async def run_script(node: str, script: str, url: str, *args: str) -> dict[str, Any]:
    """Run a check script of ``tests/clients/js`` against ``url``; its JSON result, or a
    test failure with its stderr."""
    proc = await asyncio.create_subprocess_exec(
        node,
        str(JS_DIR / script),
        url,
        *args,
        cwd=JS_DIR,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"{script} against {url} did not finish in {RUN_TIMEOUT} s", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"{script} against {url} exited {proc.returncode}:\n{err.decode(errors='replace')}", pytrace=False)
    result: dict[str, Any] = json.loads(out)
    return result


async def run_check(node: str, url: str, bucket: str, mode: str) -> dict[str, Any]:
    """Run ``kv_check.mjs`` against ``url``."""
    return await run_script(node, SCRIPT.name, url, bucket, mode)


#: mode -> (bucket, result) of the run against the real server, shared by both tests of a mode.
_REAL: dict[str, tuple[str, dict[str, Any]]] = {}


async def real_result(node: str, real_server: Any, mode: str) -> tuple[str, dict[str, Any]]:
    if mode not in _REAL:
        bucket = f"B{uuid.uuid4().hex[:10]}"
        _REAL[mode] = bucket, await run_check(node, f"nats://127.0.0.1:{real_server.port}", bucket, mode)
    return _REAL[mode]


@MODES
async def test_nats_js_on_real_server(node: str, real_server: Any, mode: str) -> None:
    """The script itself works: spot checks of what nats-server answers (``direct-get`` reads
    through Direct Get, which the real server has)."""
    bucket, res = await real_result(node, real_server, mode)
    assert res["kv.create"] == {"direct": mode == "direct", "stream": f"KV_{bucket}", "prefix": f"$KV.{bucket}"}
    assert (res["kv.put.k1"], res["kv.get.k1"]["value"], res["kv.get.k1"]["operation"]) == (1, "v1", "PUT")
    assert res["kv.create.n.again"]["error"]["api"] == {
        "code": 400,
        "err_code": 10071,
        "description": "wrong last sequence: 4",
    }
    assert res["kv.get.missing"] is None
    assert (res["kv.get.k.deleted"]["operation"], res["kv.get.h.purged"]["operation"]) == ("DEL", "PURGE")
    # history 3: of five revisions the first two are gone.
    assert [e and e["value"] for e in res["kv.get.h.revisions"]] == [None, None, "h2", "h3", "h4"]
    assert res["kv.status.updated"]["history"] == 5
    assert [e and e["value"] for e in res["kv.get.m.revisions"]] == [None, "m1", "m2", "m3", "m4", "m5"]
    # open() only binds and so never uses Direct Get, whatever the bucket allows.
    assert res["kv.open"] == {"direct": False, "stream": f"KV_{bucket}"}
    assert res["kv.status.destroyed"]["error"]["name"] == "StreamNotFoundError"

    assert res["js.publish.msgid.dup"] == {"stream": f"S_{bucket}", "seq": 2, "duplicate": True, "domain": None}
    assert res["js.publish.expect.stream.wrong"]["error"]["api"]["err_code"] == 10060
    # No responders on a subject without a stream: nats.js says "jetstream is not enabled".
    assert res["js.publish.no.stream"] == {
        "error": {"name": "JetStreamNotEnabled", "message": "jetstream is not enabled"}
    }
    assert res["js.get.seq.2"]["headers"] == {"Nats-Msg-Id": ["id-1"]}
    assert res["js.get.missing.seq"] is None
    assert res["js.purge.all"]["purged"] == 3
    assert res["js.delete"] is True


@MODES
async def test_nats_js_same_on_jsemu(node: str, real_server: Any, mode: str) -> None:
    """The script prints the same JSON against jsemu as against nats-server."""
    bucket, expected = await real_result(node, real_server, mode)
    async with jsemu.Server() as srv:
        got = await run_check(node, srv.url, bucket, mode)
    differing = [
        f"{key}:\n  real:  {json.dumps(expected.get(key))}\n  jsemu: {json.dumps(got.get(key))}"
        for key in [*expected, *(k for k in got if k not in expected)]
        if expected.get(key) != got.get(key)
    ]
    assert not differing, "kv_check.mjs results differ at\n" + "\n".join(differing)
