"""The newest nats.py packages (``nats-core``, ``nats-jetstream``, ``nats-key-value``) see the same
results from jsemu as from nats-server 2.15.1.

Those packages install a ``nats`` namespace (``nats.client``, ``nats.jetstream``,
``nats.key_value``) that collides with nats-py's ``nats`` package, and they need Python 3.13, so
they live in a venv of their own: ``$JSEMU_NATS_NEXT_PYTHON``, else ``.venv-nats-next/bin/python``
at the repository root (``.ci/run`` builds it with the pinned versions). ``newpy/check.py`` runs
under that interpreter, drives one server (core pub/sub, stream CRUD, publish acks, pull and
ordered consumers, KV) and prints one JSON object of comparable results; it runs once against
the shared real server and once against a fresh ``jsemu.Server`` with the same names, and the two
objects must be equal. Without the venv the tests skip locally and fail in CI (``CI=true``).

The ``reset`` scenario (``Stream.reset_consumer``, ADR-60) is apart: jsemu does not answer
``CONSUMER.RESET`` yet, so its jsemu side is an expected failure until that lands.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.servers import REAL_STORE_FLAKE

import jsemu

HERE = Path(__file__).parent
SCRIPT = HERE / "newpy" / "check.py"
VENV_PYTHON = HERE.parents[1] / ".venv-nats-next" / "bin" / "python"
RUN_TIMEOUT = 120


@pytest.fixture(scope="session")
def newpy_python() -> str:
    """The interpreter of the new-clients venv."""
    exe = os.environ.get("JSEMU_NATS_NEXT_PYTHON") or str(VENV_PYTHON)
    if Path(exe).is_file():
        return exe
    reason = (
        f"no new-clients interpreter at {exe}: create it with "
        "python3.13 -m venv .venv-nats-next && .venv-nats-next/bin/pip install "
        "'nats-core[nkeys]==0.2.0' nats-jetstream==0.3.0 nats-key-value==0.1.0 "
        "(or set JSEMU_NATS_NEXT_PYTHON)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


async def run_check(python: str, url: str, name: str, scenario: str = "all") -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        python,
        str(SCRIPT),
        url,
        name,
        scenario,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")},
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"check.py against {url} did not finish in {RUN_TIMEOUT} s", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"check.py against {url} exited {proc.returncode}:\n{err.decode(errors='replace')}", pytrace=False)
    result: dict[str, Any] = json.loads(out)
    return result


_REAL: dict[str, tuple[str, dict[str, Any]]] = {}


async def real_result(python: str, real_server: Any, scenario: str = "all") -> tuple[str, dict[str, Any]]:
    """The script's results on the shared nats-server (once per scenario), run again under a new
    name (at most twice) when nats-server failed to make a file stream's store."""
    for attempt in range(3):
        if scenario in _REAL:
            break
        name = f"N{uuid.uuid4().hex[:8]}"
        result = await run_check(python, f"nats://127.0.0.1:{real_server.port}", name, scenario)
        if REAL_STORE_FLAKE not in json.dumps(result) or attempt == 2:
            _REAL[scenario] = name, result
    return _REAL[scenario]


async def same_on_jsemu(python: str, real_server: Any, scenario: str) -> None:
    name, expected = await real_result(python, real_server, scenario)
    async with jsemu.Server() as srv:
        got = await run_check(python, srv.url, name, scenario)
    differing = [
        f"{key}:\n  real:  {json.dumps(expected.get(key))}\n  jsemu: {json.dumps(got.get(key))}"
        for key in [*expected, *(k for k in got if k not in expected)]
        if expected.get(key) != got.get(key)
    ]
    assert not differing, f"newpy/check.py {scenario} results differ at\n" + "\n".join(differing)


@pytest.mark.real
async def test_newest_nats_py_on_real_server(newpy_python: str, real_server: Any) -> None:
    """The script works: spot checks of what nats-server answers the newest client."""
    name, res = await real_result(newpy_python, real_server)
    assert res["stream.create"] == [f"{name}.s.>"]
    assert res["publish.msgid.dup"]["duplicate"] is True
    assert res["publish.expect.wrong"]["error_code"] == 10071
    assert res["publish.no_stream"]["error"] == "NoRespondersError"
    assert [m["stream_seq"] for m in res["consumer.fetch"]] == [1, 6]
    assert res["kv.keys >"] == ["a", "a.b", "ab", "ab.b", "abc", "ac", "x.y.z"]
    assert res["kv.keys a.*"] == ["a.b"]
    # A `*` or `>` inside a token is no wildcard to a KV keys()/watch() filter (an ordered
    # consumer with `filter_subjects`): `a*` is the literal key "a*", which no one wrote.
    assert res["kv.keys a*"] == res["kv.keys ab*"] == res["kv.keys a>"] == []
    assert res["kv.watch a*"] == []


async def test_newest_nats_py_same_on_jsemu(newpy_python: str, real_server: Any) -> None:
    """The script prints the same JSON against jsemu as against nats-server."""
    await same_on_jsemu(newpy_python, real_server, "all")


@pytest.mark.real
async def test_newest_nats_py_reset_on_real_server(newpy_python: str, real_server: Any) -> None:
    """``Stream.reset_consumer`` (ADR-60 ``CONSUMER.RESET``) on nats-server: to sequence 3 after
    two deliveries, then back to one above the ack floor."""
    _, res = await real_result(newpy_python, real_server, "reset")
    assert res["reset.fetch"] == [1, 2]
    assert res["reset.to.3"] == [3, 2, 0, 0]
    assert res["reset.to.ack_floor"] == 3  # the ack floor moved to 2 with the first reset


async def test_newest_nats_py_reset_same_on_jsemu(newpy_python: str, real_server: Any) -> None:
    await same_on_jsemu(newpy_python, real_server, "reset")
