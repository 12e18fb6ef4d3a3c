"""Stopping the stand-in with a signal, side by side with nats-server 2.15.1: SIGTERM and SIGINT
stop it (exit 0), and so they do when its standard error has lost its reader. nats-server then
dies of SIGPIPE at its first log line ("Trapped ... signal"), as Go's runtime does on a broken
pipe on standard error; jsemu must not ignore the signal because the log line failed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from support.servers import nats_server_binary

COMMANDS = {
    "real": [nats_server_binary(), "-p", "-1"],
    "jsemu": [sys.executable, "-m", "jsemu", "serve", "-p", "-1"],
}


def _stopped_by(command: list[str], sig: signal.Signals, close_stderr: bool) -> int | str:
    """The exit status after ``sig`` (negative: killed by that signal), or "running"."""
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    try:
        ready = b""
        deadline = time.monotonic() + 10
        while b"Server is ready" not in ready and time.monotonic() < deadline:
            ready += proc.stderr.readline()
        assert b"Server is ready" in ready, ready
        if close_stderr:
            proc.stderr.close()
        proc.send_signal(sig)
        try:
            return proc.wait(10)
        except subprocess.TimeoutExpired:
            return "running"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not close_stderr:
            proc.stderr.close()


@pytest.mark.parametrize("close_stderr", [False, True], ids=["stderr-read", "stderr-lost"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_server_as_nats_server(sig: signal.Signals, close_stderr: bool) -> None:
    got = {kind: _stopped_by(command, sig, close_stderr) for kind, command in COMMANDS.items()}
    assert got["jsemu"] == got["real"]
    assert got["real"] == (-signal.SIGPIPE if close_stderr else 0)
