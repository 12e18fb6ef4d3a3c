"""``jsemu record``, ``jsemu replay`` and ``jsemu conformance --sessions`` as commands: a session
recorded by the ``jsemu record`` process (stopped with SIGINT) against nats-server, replayed
against jsemu (exit 0), saved as a conformance case and run as one; a planted difference is a
failing case (exit 1)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.servers import RealServer

from jsemu.cli import main

from .programs import kv


def plant_in_answers(path: Path, old: str, new: str) -> str:
    """The session file with ``old`` replaced by ``new`` in what the server sent (only)."""
    lines = []
    for text in path.read_text().splitlines():
        record = json.loads(text)
        if record.get("dir") == "s2c":
            record["data"] = record["data"].replace(old, new)
        lines.append(json.dumps(record) + "\n")
    return "".join(lines)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``kv`` program recorded by a ``jsemu record`` process in front of nats-server."""
    path = tmp_path_factory.mktemp("cmd") / "kv_session.jsonl"
    real = RealServer()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jsemu",
            "record",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            f"nats://127.0.0.1:{real.port}",
            "-o",
            str(path),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        m = re.match(r"jsemu record: (nats://127\.0\.0\.1:\d+) -> ", first)
        assert m, first
        asyncio.run(kv(m.group(1)))
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        assert proc.stderr.read() == f"jsemu record: 1 connection(s) recorded in {path}\n"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        real.stop()
    return path


def test_replay_save_case_and_conformance_sessions(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases"
    assert main(["replay", str(recorded), "--spawn-jsemu", "--save-case", str(cases)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{recorded}: 1 connection(s), ") and out[0].endswith(" against spawn-jsemu")
    assert out[1:] == [
        "no difference",
        f"saved as conformance case {cases / recorded.name} (run: jsemu conformance --sessions {cases} --spawn-jsemu)",
    ]
    assert (cases / recorded.name).read_bytes() == recorded.read_bytes()

    assert main(["conformance", "--sessions", str(cases), "--spawn-jsemu"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^kv_session +PASS", out, re.MULTILINE) and out.endswith(
        "1 passed, 0 failed, 0 errors (1 sessions)\n"
    )

    planted = cases / "planted.jsonl"
    planted.write_text(plant_in_answers(recorded, "aGVsbG8=", "amVsbG8="))  # the KV value, base64 in MSG.GET
    assert main(["conformance", "--sessions", str(cases), "--spawn-jsemu", "--json"]) == 1
    rows = {row["case"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["kv_session"]["status"] == "pass"
    assert rows["planted"]["status"] == "fail" and rows["planted"]["request"].startswith("conn 1 frame ")


def test_replay_json_and_exit_status(recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    planted = tmp_path / "planted.jsonl"
    planted.write_text(recorded.read_text().replace("PROFILES", "PROFILEZ", 1))  # the client's first request
    assert main(["replay", str(planted), "--json", "--timeout", "1"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is False and result["differences"][0]["conn"] == 1


def test_replay_against_nothing_listening(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(recorded), "--against", "nats://127.0.0.1:1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("jsemu replay: nats://127.0.0.1:1: ") and err.count("\n") == 1


def test_replay_over_tls_refused(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(recorded), "--against", "tls://127.0.0.1:4222"]) == 2
    assert capsys.readouterr().err == (
        "jsemu replay: tls://127.0.0.1:4222: replay over TLS is not supported; give the server's plain port\n"
    )
