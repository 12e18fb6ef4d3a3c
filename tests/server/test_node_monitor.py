"""A monitoring port per server of a cluster, side by side: three nats-server processes in a
cluster, and jsemu's simulated cluster (``cluster_size=3``, ``http_port=-1``).

Captured from nats-server 2.15.1 (three processes, ``-m -1`` each): each server's monitoring
port shows that server: ``/varz`` and ``/routez`` its ``server_id``/``server_name`` and
``host``/``port``, ``/connz`` and ``/varz`` ``connections`` only its own clients, ``/jsz``
and ``/healthz`` its id and ``{"status":"ok"}``; a stopped server's port refuses connections.
``/routez`` differs on purpose: nats-server lists its route connections (several per peer,
pooled), jsemu's nodes have none to list (``server/monitor.py``) and show an empty list.
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jsemu import Server
from tests.support.cluster import start_cluster, stop_cluster


class Cluster:
    """Three servers' client and monitoring ports, and a way to stop one."""

    def __init__(self, ports: list[int], monitors: list[str], stop: Any) -> None:
        self.ports = ports
        self.monitors = monitors
        self.stop = stop

    def get(self, i: int, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.monitors[i]}/{path}", timeout=5) as resp:
            data: dict[str, Any] = json.load(resp)
            return data


@pytest.fixture(params=["real", "jsemu"])
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    if request.param == "real":
        nodes = start_cluster(["real"] * 3)
        try:
            yield Cluster(
                [n.port for n in nodes],
                [f"http://127.0.0.1:{n.http_port}" for n in nodes],
                lambda i: nodes[i].stop(),
            )
        finally:
            stop_cluster(nodes)
    else:
        server = Server.in_thread(cluster_size=3, http_port=-1)
        try:
            names = [node.name for node in server.server.nodes]
            yield Cluster(
                [node.port for node in server.server.nodes],
                server.monitor_urls,
                lambda i: server.control.node_down(names[i]),
            )
        finally:
            server.stop()


def _client(port: int, name: str) -> tuple[socket.socket, dict[str, Any]]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(f'CONNECT {{"name":"{name}","verbose":false}}\r\nPING\r\n'.encode())
    buf = b""
    while b"PONG\r\n" not in buf:
        buf += sock.recv(65536)
    info: dict[str, Any] = json.loads(buf.split(b"\r\n")[0][5:])
    return sock, info


def test_each_monitoring_port_shows_its_server(cluster: Cluster) -> None:
    socks = []
    try:
        infos = []
        for i, port in enumerate(cluster.ports):
            sock, info = _client(port, f"c{i}")
            socks.append(sock)
            infos.append(info)
        extra, _ = _client(cluster.ports[1], "extra")
        socks.append(extra)
        for i, info in enumerate(infos):
            varz = cluster.get(i, "varz")
            assert (varz["server_id"], varz["server_name"]) == (info["server_id"], info["server_name"])
            assert (varz["host"], varz["port"]) == (info["host"], info["port"])
            assert varz["connections"] == (2 if i == 1 else 1)
            connz = cluster.get(i, "connz")
            assert connz["server_id"] == info["server_id"]
            names = sorted(c["name"] for c in connz["connections"])
            assert names == (["c1", "extra"] if i == 1 else [f"c{i}"])
            routez = cluster.get(i, "routez")
            assert (routez["server_id"], routez["server_name"]) == (info["server_id"], info["server_name"])
            assert cluster.get(i, "jsz")["server_id"] == info["server_id"]
            assert cluster.get(i, "healthz") == {"status": "ok"}
    finally:
        for sock in socks:
            sock.close()


def test_a_stopped_server_monitoring_port_refuses(cluster: Cluster) -> None:
    cluster.stop(2)
    with pytest.raises(urllib.error.URLError) as exc:
        cluster.get(2, "varz")
    assert isinstance(exc.value.reason, ConnectionRefusedError)
    assert cluster.get(0, "healthz") == {"status": "ok"}


async def test_node_up_reopens_the_monitoring_port() -> None:
    async with Server(cluster_size=3, http_port=-1) as server:
        url = server.monitor_urls[1]
        server.control.node_down("n2")
        with pytest.raises(urllib.error.URLError):
            await asyncio.to_thread(urllib.request.urlopen, f"{url}/varz", None, 2)
        server.control.node_up("n2")
        assert server.monitor_urls[1] == url  # the same port
        with await asyncio.to_thread(urllib.request.urlopen, f"{url}/varz", None, 2) as resp:
            assert json.load(resp)["server_name"] == "n2"


async def test_a_standalone_server_has_one_monitor() -> None:
    async with Server(http_port=-1) as server:
        assert server.monitor_urls == [f"http://127.0.0.1:{server.monitor.port}"]  # type: ignore[union-attr]
    async with Server() as server:
        assert server.monitor_urls == []
