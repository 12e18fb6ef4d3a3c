"""Harnesses that spawn ``nats-server`` by name get jsemu through ``jsemu shim DIR``: the
same startup lines, random-port reporting, version output and signal behaviour."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

from support.servers import nats_server_binary

_LISTEN = re.compile(r"Listening for client connections on 127\.0\.0\.1:(\d+)")


def _shim(tmp_path: Path) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "jsemu", "shim", str(tmp_path / "bin")], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str(tmp_path / "bin" / "nats-server")
    return {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def _spawn(env: dict[str, str], store: Path, jetstream: bool = True) -> tuple[subprocess.Popen[str], int]:
    flags = ["-js", "-sd", str(store)] if jetstream else ["-sd", str(store)]
    proc = subprocess.Popen(
        ["nats-server", "-a", "127.0.0.1", "-p", "-1", *flags],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    port = 0
    for line in proc.stderr:
        if m := _LISTEN.search(line):
            port = int(m.group(1))
        if "Server is ready" in line:
            break
    return proc, port


def test_shim_stands_in_for_nats_server(tmp_path: Path) -> None:
    env = _shim(tmp_path)
    version = subprocess.run(["nats-server", "--version"], env=env, capture_output=True, text=True, check=True)
    real = subprocess.run([nats_server_binary(), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout == real.stdout == "nats-server: v2.15.1\n"

    proc, port = _spawn(env, tmp_path / "store")
    try:
        assert port > 0
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            info = sock.recv(4096)
        assert info.startswith(b"INFO {") and b'"version":"2.15.1"' in info and b'"jetstream":true' in info
    finally:
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
    # Killed, it starts again on the same store; a SIGTERM stops it cleanly.
    proc, port = _spawn(env, tmp_path / "store")
    assert port > 0
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0


def test_shim_has_no_jetstream_without_js(tmp_path: Path) -> None:
    """nats-server's default: without -js, INFO says nothing of JetStream, ``$JS.API.INFO``
    has no responders and ``-sd``'s directory is not made."""
    env = _shim(tmp_path)
    proc, port = _spawn(env, tmp_path / "store", jetstream=False)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            info = sock.recv(4096)
            sock.sendall(b'CONNECT {"headers":true,"no_responders":true}\r\nSUB r 1\r\nPUB $JS.API.INFO r 0\r\n\r\n')
            reply = b""
            while b"NATS/1.0 503" not in reply:
                chunk = sock.recv(4096)
                assert chunk, reply
                reply += chunk
        assert b'"jetstream"' not in info
        assert not (tmp_path / "store").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
