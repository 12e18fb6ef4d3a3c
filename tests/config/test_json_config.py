"""A configuration file written as JSON, side by side with nats-server 2.15.1: its parser takes
braces around the top-level keys as a block (``lexTop``), so ``{ "port": ..., ... }`` starts the
server as the same keys without them would."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.servers import nats_server_binary

from jsemu.config.parser import parse_text

PROGRAMS = {"real": [nats_server_binary()], "jsemu": [sys.executable, "-m", "jsemu", "serve"]}


def _server_name(program: list[str], conf: Path) -> str:
    """Start with ``-c conf``; the INFO's ``server_name`` a client gets."""
    proc = subprocess.Popen(
        [*program, "-c", str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    try:
        port = None
        deadline = time.monotonic() + 10
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, "exited before listening"
            found = re.search(rb"Listening for client connections on \S+:(\d+)", line)
            port = int(found.group(1)) if found else None
        assert port is not None
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            data = b""
            while b"\r\n" not in data:
                data += sock.recv(4096)
        return str(json.loads(data.split(b"\r\n", 1)[0][5:])["server_name"])
    finally:
        proc.terminate()
        proc.wait()
        proc.stderr.close()


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "port": -1,\n  "server_name": "json"\n}\n',
        '{"port": -1, "server_name": "json", "authorization": {"users": [{"user": "a", "password": "b"}]}}',
        "# a comment first\n{ port: -1 }\nserver_name: json\n",
    ],
    ids=["pretty", "one-line", "block-then-key"],
)
def test_a_json_config_starts_as_nats_server(text: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.json"
    conf.write_text(text)
    got = {kind: _server_name(program, conf) for kind, program in PROGRAMS.items()}
    assert got == {"real": "json", "jsemu": "json"}


def test_top_level_braces_are_the_same_keys() -> None:
    plain, _ = parse_text("port: 4222\nauthorization { users: [ {user: a, password: b} ] }\n")
    braced, _ = parse_text('{"port": 4222, "authorization": {"users": [{"user": "a", "password": "b"}]}}')
    assert braced == plain
    assert parse_text('{ "port": 4222\n')[0] == {"port": 4222}  # a block still open at the end: nats-server starts
