"""The public API (async, threaded) and ``jsemu serve`` as a nats-server stand-in."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import sys
import time

import nats
import pytest

import jsemu
from jsemu.config.server_config import parse_config


async def test_async_context_manager_and_url() -> None:
    async with jsemu.Server() as srv:
        assert srv.url == f"nats://127.0.0.1:{srv.port}"
        nc = await nats.connect(srv.url)
        assert nc.is_connected
        await nc.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=1)


async def test_start_stop_closes_clients() -> None:
    srv = jsemu.Server()
    await srv.start()
    nc = await nats.connect(srv.url, allow_reconnect=False)
    await srv.stop()
    for _ in range(100):
        if nc.is_closed:
            break
        await asyncio.sleep(0.02)
    assert nc.is_closed


def test_in_thread_for_sync_code() -> None:
    with jsemu.Server.in_thread() as srv:
        sock = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        info = sock.recv(4096)
        assert info.startswith(b"INFO ")
        sock.sendall(b'CONNECT {"verbose":false}\r\nSUB a 1\r\nPUB a 2\r\nhi\r\nPING\r\n')
        data = b""
        while not data.endswith(b"PONG\r\n"):
            data += sock.recv(4096)
        assert data == b"MSG a 1 2\r\nhi\r\nPONG\r\n"
        sock.close()


def test_options_validated_like_nats_server() -> None:
    with pytest.raises(ValueError, match=r"max_payload \(2000\) cannot be higher than max_pending \(1000\)"):
        jsemu.Server(max_payload=2000, max_pending=1000)


def test_config_subset() -> None:
    conf = parse_config(
        """
        # comment
        port: 4333
        server_name = "edge-1"
        max_payload: 2MB
        ping_interval: "100ms"
        jetstream {
            store_dir: "/tmp/x"   // trailing comment
            domain: hub
        }
        """
    )
    assert conf == {
        "port": 4333,
        "server_name": "edge-1",
        "max_payload": 2 * 1024 * 1024,
        "ping_interval": "100ms",
        "jetstream": {"store_dir": "/tmp/x", "domain": "hub"},
    }


def test_config_applied_to_options() -> None:
    from jsemu.config.server_config import apply_config

    opts = apply_config(
        parse_config(
            'port: -1\nhttp: "localhost:8222"\nping_interval: "2m"\nping_max: 3\njetstream {\n domain: hub\n}\n'
        ),
        jsemu.ServerOptions(),
    )
    assert (opts.port, opts.http_port, opts.ping_interval, opts.max_pings_out, opts.domain) == (
        0,
        8222,
        120.0,
        3,
        "hub",
    )


def _spawn(*args: str) -> tuple[subprocess.Popen[str], int, list[str]]:
    proc = subprocess.Popen([sys.executable, "-m", "jsemu", "serve", *args], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    port = 0
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line, "".join(lines)
        lines.append(line)
        m = re.search(r"Listening for client connections on (\S+):(\d+)", line)
        if m:
            port = int(m.group(2))
        if "Server is ready" in line:
            break
    return proc, port, lines


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_random_port_and_signals(sig: signal.Signals) -> None:
    proc, port, lines = _spawn("-p", "-1", "-a", "127.0.0.1", "-n", "edge", "-js", "-sd", "/tmp/jsemu-sd", "-DV")
    try:
        assert port > 0
        assert re.match(
            r"\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[INF\] Listening for client connections on 127\.0\.0\.1:\d+\n",
            lines[-2],
        )
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        info = sock.recv(4096)
        assert b'"server_name":"edge"' in info
        sock.close()
    finally:
        proc.send_signal(sig)
        assert proc.wait(10) == 0


def test_serve_accepts_go_style_flags() -> None:
    proc, port, _ = _spawn("-port", "-1", "--addr", "127.0.0.1", "-m", "0", "--jetstream", "-V", "-D")
    proc.terminate()
    assert proc.wait(10) == 0
    assert port > 0


async def test_serve_simulated_cluster_controlled_over_nats() -> None:
    """``jsemu serve --cluster-size 3`` in its own process: R3 streams, and the control
    plane reached over ``$JSEMU.API``."""
    import json

    import nats

    proc, port, lines = _spawn("-p", "-1", "-a", "127.0.0.1", "--cluster-size", "3", "--cluster-name", "C")
    try:
        assert any("Simulated cluster 'C': n1, n2, n3" in line for line in lines)
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        cfg = {"name": "S", "subjects": ["s"], "num_replicas": 3, "allow_direct": True, "storage": "memory"}
        created = json.loads((await nc.request("$JS.API.STREAM.CREATE.S", json.dumps(cfg).encode())).data)
        assert created["cluster"]["name"] == "C"
        assert json.loads((await nc.request("$JSEMU.API.PAUSE", b'{"stream":"S","peer":"n2"}')).data)["ok"]
        await nc.request("s", b"v")
        await nc.request("$JSEMU.API.RESPONDER_POLICY", b'{"policy":"prefer","prefer":"n2"}')
        stale = await nc.request("$JS.API.DIRECT.GET.S", b'{"last_by_subj":"s"}')
        assert stale.headers == {"Status": "404", "Description": "Message Not Found"}
        await nc.close()
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def test_serve_monitoring_port_like_nats_server() -> None:
    import json
    import urllib.request

    proc, port, lines = _spawn("-p", "-1", "-a", "127.0.0.1", "-m", "-1")
    try:
        monitor = [re.search(r"Starting http monitor on 127\.0\.0\.1:(\d+)", line) for line in lines]
        http_port = int(next(m for m in monitor if m).group(1))
        with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/varz", timeout=5) as r:
            varz = json.loads(r.read())
        assert (varz["port"], varz["http_port"]) == (port, http_port)
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
