"""The plugin's session recording (``jsemu_recorded``, ``jsemu_recorder``, ``--jsemu-record``):
a failing test's report names its session file and the replay command, and that file replays
against nats-server with no difference (the client did what jsemu's answers told it to, and
nats-server gives the same answers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.servers import nats_server_binary

from jsemu.cli import main

pytest_plugins = ["pytester"]

INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""

TESTS = """
import nats

async def test_kv_then_fails(jsemu_recorded):
    nc = await nats.connect(jsemu_recorded.url)
    js = nc.jetstream(timeout=2)
    kv = await js.create_key_value(bucket="CFG")
    await kv.put("mode", b"fast")
    assert (await kv.get("mode")).value == b"fast"
    await nc.close()
    assert jsemu_recorded.path.exists() and jsemu_recorded.server.port
    assert False, "on purpose"

async def test_factory_server(jsemu_factory, jsemu_recorder):
    server = await jsemu_factory(streams=[{"name": "S", "subjects": ["s.>"]}])
    nc = await nats.connect(await jsemu_recorder(server))
    await nc.jetstream(timeout=2).publish("s.1", b"x")
    await nc.close()
"""


def test_failed_test_names_its_recording_which_replays_on_nats_server(
    pytester: pytest.Pytester, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(TESTS)
    keep = tmp_path / "kept"
    result = pytester.runpytest("-p", "no:cacheprovider", "--jsemu-record", str(keep))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*jsemu session recording*",
            f"{keep}/test_kv_then_fails.jsonl",
            f"  replay against nats-server: jsemu replay {keep}/test_kv_then_fails.jsonl --spawn-real",
        ]
    )
    assert sorted(p.name for p in keep.iterdir()) == ["test_factory_server.jsonl", "test_kv_then_fails.jsonl"]
    capsys.readouterr()
    path = keep / "test_kv_then_fails.jsonl"
    assert main(["replay", str(path), "--spawn-real", "--nats-server", nats_server_binary()]) == 0
    assert capsys.readouterr().out.endswith("no difference\n")
