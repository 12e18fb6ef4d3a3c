"""The default listener, side by side with nats-server 2.15.1: on its default host (``0.0.0.0``)
nats-server takes IPv6 clients too (Go opens one dual-stack socket), and reports each client's
address as it came: ``127.0.0.1`` for IPv4 (not the mapped ``::ffff:127.0.0.1``), ``::1`` for
IPv6."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from typing import Any

import pytest
from support.servers import nats_server_binary

COMMANDS = {
    "real": [nats_server_binary(), "-p", "-1"],
    "jsemu": [sys.executable, "-m", "jsemu", "serve", "-p", "-1"],
}

pytestmark = pytest.mark.skipif(not socket.has_ipv6, reason="no IPv6 on this machine")


def _info(host: str, port: int) -> dict[str, Any]:
    with socket.create_connection((host, port), timeout=5) as sock:
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            assert chunk, data
            data += chunk
    info: dict[str, Any] = json.loads(data.split(b"\r\n", 1)[0][5:])
    return info


def _seen(command: list[str]) -> list[tuple[str, str, str]]:
    """(address connected to, INFO host, INFO client_ip) for IPv4 and IPv6 loopback."""
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    try:
        port = None
        deadline = time.monotonic() + 10
        while port is None and time.monotonic() < deadline:
            found = re.search(rb"Listening for client connections on \S+:(\d+)", proc.stderr.readline())
            port = int(found.group(1)) if found else None
        assert port is not None
        seen = []
        for address in ("127.0.0.1", "::1"):
            info = _info(address, port)
            seen.append((address, info["host"], info["client_ip"]))
        return seen
    finally:
        proc.terminate()
        proc.wait()
        proc.stderr.close()


def test_the_default_host_takes_ipv4_and_ipv6_clients() -> None:
    got = {kind: _seen(command) for kind, command in COMMANDS.items()}
    assert got["jsemu"] == got["real"]
    assert got["real"] == [("127.0.0.1", "0.0.0.0", "127.0.0.1"), ("::1", "0.0.0.0", "::1")]
