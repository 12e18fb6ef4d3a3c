"""``jsemu conformance``: the table runs against a spawned jsemu, a running server (a
``jsemu serve`` process) and prints rows; exit status 1 on any failure."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from jsemu.conformance.api_cases import API_CASES
from jsemu.conformance.cases import SCENARIOS
from jsemu.conformance.command import run_all


async def test_spawned_jsemu_passes_every_case() -> None:
    results = await run_all("spawn-jsemu")
    assert len(results) == len(SCENARIOS) + len(API_CASES) == 41
    assert [(r.case, r.status, r.request) for r in results if r.status != "pass"] == []


def test_command_against_a_running_server_prints_json_and_exit_status() -> None:
    serve = subprocess.Popen(
        [sys.executable, "-m", "jsemu", "serve", "-a", "127.0.0.1", "-p", "-1"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert serve.stderr is not None
        port = 0
        for line in serve.stderr:
            if "Listening for client connections on" in line:
                port = int(line.rsplit(":", 1)[1])
            if "Server is ready" in line:
                break
        url = f"nats://127.0.0.1:{port}"
        ok = subprocess.run(
            [sys.executable, "-m", "jsemu", "conformance", url, "--case", "t9-basic-memory", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert json.loads(ok.stdout) == [
            {"case": "t9-basic-memory", "status": "pass", "request": "", "expected": None, "got": None, "detail": ""}
        ]
        # A server that answers Direct Gets wrongly fails the table: fault injection over
        # the control plane makes every Direct Get get a 408 status.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.recv(4096)
            rule = b'{"filter":"$JS.API.DIRECT.GET.>","status":408,"description":"Oops","count":0}'
            sock.sendall(b"CONNECT {}\r\nSUB r 1\r\nPUB $JSEMU.API.ANSWER_STATUS r %d\r\n%s\r\n" % (len(rule), rule))
            assert b'"ok": true' in sock.recv(4096)
        bad = subprocess.run(
            [sys.executable, "-m", "jsemu", "conformance", url, "--case", "t9-basic-memory"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert bad.returncode == 1, bad.stdout + bad.stderr
        row = next(line for line in bad.stdout.splitlines() if line.startswith("t9-basic-memory"))
        assert "FAIL" in row and "NATS/1.0 408 Oops" in row
        assert "0 passed, 1 failed" in bad.stdout
    finally:
        serve.terminate()
        serve.wait(10)


def test_command_spawning_the_real_server_passes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jsemu", "conformance", "--spawn-real", "--case", "t9-basic-memory"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed, 0 errors, 0 skipped (1 cases)" in done.stdout
