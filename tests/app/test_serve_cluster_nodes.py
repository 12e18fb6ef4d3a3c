"""``jsemu serve --cluster-size 3``: one "Listening for client connections" line, for the first
node, as harnesses that wait for it expect (one server, one such line), then a line per other
node with its name, id and port; each port serves its node's INFO."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

from support.rawclient import RawClient
from support.servers import _LISTEN

NODE = re.compile(r"\[INF\]   Node (n\d) \((N[A-Z0-9]+)\) takes clients on 127\.0\.0\.1:(\d+)$")


async def test_serve_logs_every_node_and_each_port_is_its_node() -> None:
    args = [sys.executable, "-m", "jsemu", "serve", "-a", "127.0.0.1", "-p", "-1", "--cluster-size", "3"]
    proc = await asyncio.create_subprocess_exec(*args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while not lines or "Server is ready" not in lines[-1]:
            line = await asyncio.wait_for(proc.stderr.readline(), 20)
            assert line, f"jsemu serve exited: {lines}"
            lines.append(line.decode().rstrip("\n"))
        listening = [m for m in map(_LISTEN.search, lines) if m]
        nodes = [m.groups() for m in map(NODE.search, lines) if m]
        assert len(listening) == 1 and [n[0] for n in nodes] == ["n2", "n3"], lines
        assert any(line.endswith("Name:     n1") for line in lines)
        ports = [int(listening[0].group(2)), *(int(n[2]) for n in nodes)]
        for name, port in zip(["n1", "n2", "n3"], ports, strict=True):
            client = await RawClient.connect(port)
            assert client.info["server_name"] == name and client.info["port"] == port
            assert sorted(client.info["connect_urls"]) == sorted(f"127.0.0.1:{p}" for p in ports)
            await client.close()
        assert len({server_id for _, server_id, _ in nodes}) == 2
    finally:
        proc.terminate()
        await proc.wait()


MONITOR = re.compile(r"\[INF\]   Node (n\d) monitoring on 127\.0\.0\.1:(\d+)$")
HTTP = re.compile(r"Starting http monitor on 127\.0\.0\.1:(\d+)$")


async def test_serve_logs_every_node_monitoring_port() -> None:
    """``-m -1``: the first node's port on nats-server's "Starting http monitor" line, the
    others' on a line each; every port shows its node's ``server_name``."""
    args = [sys.executable, "-m", "jsemu", "serve", "-a", "127.0.0.1", "-p", "-1", "-m", "-1", "--cluster-size", "3"]
    proc = await asyncio.create_subprocess_exec(*args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while not lines or "Server is ready" not in lines[-1]:
            line = await asyncio.wait_for(proc.stderr.readline(), 20)
            assert line, f"jsemu serve exited: {lines}"
            lines.append(line.decode().rstrip("\n"))
        first = [int(m.group(1)) for m in map(HTTP.search, lines) if m]
        others = [(m.group(1), int(m.group(2))) for m in map(MONITOR.search, lines) if m]
        assert len(first) == 1 and [name for name, _ in others] == ["n2", "n3"], lines
        ports = [first[0], *(port for _, port in others)]
        assert len(set(ports)) == 3
        for name, port in zip(["n1", "n2", "n3"], ports, strict=True):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /varz HTTP/1.1\r\nHost: x\r\n\r\n")
            body = (await reader.read()).split(b"\r\n\r\n", 1)[1]
            writer.close()
            assert json.loads(body)["server_name"] == name
    finally:
        proc.terminate()
        await proc.wait()
