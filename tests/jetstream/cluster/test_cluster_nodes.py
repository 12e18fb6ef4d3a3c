"""A simulated cluster's nodes: a client listener, server id and name per node, the cluster's
``connect_urls`` in each INFO, and ``node_down`` / ``node_up`` (port closed and reopened,
clients closed, the others told by an async INFO, the node's stream peers offline and back).

What a real 3-node nats-server cluster does, captured side by side in
``test_info_per_node_matches_a_real_cluster``: each server's INFO carries its own
``server_id``, ``server_name``, ``port`` and ``xkey``, ``cluster``, and ``connect_urls`` with
its own URL first, then the others'; a server that goes away is dropped from the others'
``connect_urls`` by an async INFO (to clients that sent CONNECT ``protocol`` 1), and comes
back in another one when it returns on its port.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import nats
import pytest
from support.rawclient import RawClient
from support.servers import nats_server_binary

import jsemu
from jsemu.control import ControlError

NAMES = ["n1", "n2", "n3"]
CONNECT = {"protocol": 1, "verbose": False, "pedantic": False, "headers": True, "no_responders": True}


async def _client(port: int) -> RawClient:
    """A client that takes async INFO: CONNECT protocol 1 and its first PONG received."""
    client = await RawClient.connect(port, CONNECT)
    assert await client.exchange() == []
    after = await client.next_frame()  # the INFO after the first PONG, with connect_info
    assert after is not None and b'"connect_info":true' in after, after
    return client


async def _infos(client: RawClient, timeout: float = 1.0) -> list[dict[str, Any]]:
    """The INFOs that arrive within ``timeout`` (server PINGs answered)."""
    out = []
    while True:
        frame = await client.next_frame(timeout)
        if frame is None:
            return out
        if frame == b"PING\r\n":
            client.send(b"PONG\r\n")
        elif frame.startswith(b"INFO "):
            out.append(json.loads(frame[5:]))
            timeout = 0.2


def _shape(info: dict[str, Any]) -> list[str]:
    return list(info)


@pytest.fixture
async def cluster() -> AsyncIterator[jsemu.Server]:
    async with jsemu.Server(cluster_size=3, cluster_name="c") as srv:
        yield srv


def _url(port: int) -> str:
    return f"127.0.0.1:{port}"


# --- INFO per node ------------------------------------------------------------------------------


async def test_each_node_has_its_own_listener_and_identity(cluster: jsemu.Server) -> None:
    ports = [node.port for node in cluster.nodes]
    assert len(set(ports)) == 3 and cluster.port == ports[0]
    assert cluster.urls == [f"nats://127.0.0.1:{p}" for p in ports]
    assert cluster.server_name == "n1" and cluster.nodes[0].server_id == cluster.server_id
    infos = []
    for node, port in zip(cluster.nodes, ports, strict=True):
        client = await RawClient.connect(port)
        infos.append(client.info)
        assert client.info["server_name"] == node.name
        assert client.info["server_id"] == node.server_id
        assert client.info["port"] == port
        assert client.info["cluster"] == "c"
        own = _url(port)
        assert client.info["connect_urls"][0] == own
        assert sorted(client.info["connect_urls"]) == sorted(_url(p) for p in ports)
        await client.close()
    assert [i["server_name"] for i in infos] == NAMES
    assert len({i["server_id"] for i in infos}) == 3
    assert len({i["xkey"] for i in infos}) == 3


async def test_stream_peers_are_the_nodes(cluster: jsemu.Server) -> None:
    nc = await nats.connect(cluster.urls[1])
    js = nc.jetstream(timeout=2)
    await js.add_stream(name="S", subjects=["s.>"], num_replicas=3, storage="memory")
    info = await js.stream_info("S")
    assert info.cluster is not None
    names = {info.cluster.leader, *(r.name for r in info.cluster.replicas or [])}
    assert names == {n.name for n in cluster.nodes}
    await nc.close()


async def test_a_standalone_server_is_one_node_without_connect_urls() -> None:
    async with jsemu.Server() as srv:
        assert len(srv.nodes) == 1 and srv.urls == [srv.url]
        client = await RawClient.connect(srv.port)
        assert "connect_urls" not in client.info and "cluster" not in client.info
        assert client.info["server_name"] == srv.server_name == srv.server_id
        await client.close()
        with pytest.raises(ControlError, match="simulated cluster"):
            srv.control.node_down(srv.server_name)


# --- node_down / node_up ------------------------------------------------------------------------


async def test_node_down_closes_its_port_and_clients_and_tells_the_others(cluster: jsemu.Server) -> None:
    ports = [node.port for node in cluster.nodes]
    clients = [await _client(p) for p in ports]
    cluster.control.node_down("n1")
    assert await clients[0].read_until_closed(2.0) == []
    for client, port in zip(clients[1:], ports[1:], strict=True):
        (info,) = await _infos(client)
        assert info["connect_urls"] == [_url(port), *(_url(p) for p in ports[1:] if p != port)]
        assert "connect_info" not in info and "nonce" not in info
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", ports[0])
    assert cluster.control.nodes()[0] == {"name": "n1", "server_id": cluster.server_id, "port": ports[0], "up": False}

    cluster.control.node_up("n1")
    for client, port in zip(clients[1:], ports[1:], strict=True):
        (info,) = await _infos(client)
        assert info["connect_urls"][0] == _url(port)
        assert sorted(info["connect_urls"]) == sorted(_url(p) for p in ports)
    back = await RawClient.connect(ports[0])  # the same port, the same identity
    assert back.info["server_name"] == "n1" and back.info["server_id"] == cluster.server_id
    assert sorted(back.info["connect_urls"]) == sorted(_url(p) for p in ports)
    for client in [back, *clients[1:]]:
        await client.close()


async def test_down_and_up_twice_is_one_change(cluster: jsemu.Server) -> None:
    client = await _client(cluster.nodes[1].port)
    cluster.control.node_down("n3")
    cluster.control.node_down("n3")
    assert len(await _infos(client)) == 1
    cluster.control.node_up("n3")
    cluster.control.node_up("n3")
    assert len(await _infos(client)) == 1
    await client.close()


async def test_a_node_down_while_another_is_down_is_forgotten_by_both(cluster: jsemu.Server) -> None:
    ports = [node.port for node in cluster.nodes]
    cluster.control.node_down("n1")
    cluster.control.node_down("n2")
    cluster.control.node_up("n1")
    client = await RawClient.connect(ports[0])
    assert client.info["connect_urls"] == [_url(ports[0]), _url(ports[2])]
    await client.close()


async def test_node_down_takes_its_peers_offline_in_every_stream(cluster: jsemu.Server) -> None:
    nc = await nats.connect(cluster.urls[2])
    js = nc.jetstream(timeout=2)
    await js.add_stream(name="A", subjects=["a"], num_replicas=3, storage="memory")
    await js.add_stream(name="B", subjects=["b"], num_replicas=2, storage="memory")
    assert (await js.stream_info("A")).cluster.leader == "n1"  # type: ignore[union-attr]
    cluster.control.node_down("n1")
    for stream in ("A", "B"):
        peers = {p["name"]: p for p in cluster.control.peers(stream)}
        assert peers["n1"]["offline"] and not peers["n1"]["leader"]
    info = await js.stream_info("A")
    assert info.cluster is not None and info.cluster.leader in ("n2", "n3")
    await js.publish("a", b"while n1 is down")
    cluster.control.node_up("n1")
    peers = {p["name"]: p for p in cluster.control.peers("A")}
    assert not peers["n1"]["offline"] and peers["n1"]["last_seq"] == 1  # caught up
    await nc.close()


async def test_a_stream_created_while_a_node_is_down_is_placed_on_the_others(cluster: jsemu.Server) -> None:
    cluster.control.node_down("n1")
    nc = await nats.connect(cluster.urls[1])
    js = nc.jetstream(timeout=2)
    await js.add_stream(name="R1", subjects=["r1"], storage="memory")
    await js.add_stream(name="R3", subjects=["r3"], num_replicas=3, storage="memory")
    assert (await js.stream_info("R1")).cluster.leader == "n2"  # type: ignore[union-attr]
    assert {p["name"]: p["offline"] for p in cluster.control.peers("R3")} == {"n1": True, "n2": False, "n3": False}
    assert (await js.publish("r3", b"x")).seq == 1
    cluster.control.node_up("n1")
    assert {p["name"]: p["last_seq"] for p in cluster.control.peers("R3")}["n1"] == 1
    await nc.close()


async def test_node_controls_refuse_unknown_nodes(cluster: jsemu.Server) -> None:
    with pytest.raises(ControlError, match="no node 'n9'"):
        cluster.control.node_down("n9")
    with pytest.raises(ControlError, match="no node 'x'"):
        cluster.control.node_up("x")


async def test_node_down_over_jsemu_api(cluster: jsemu.Server) -> None:
    nc = await nats.connect(cluster.urls[1])
    reply = await nc.request("$JSEMU.API.NODE_DOWN", json.dumps({"name": "n3"}).encode(), timeout=2)
    assert "error" not in json.loads(reply.data)
    assert not cluster.nodes[2].up
    reply = await nc.request("$JSEMU.API.NODES", b"", timeout=2)
    assert [n["up"] for n in json.loads(reply.data)["result"]] == [True, True, False]
    reply = await nc.request("$JSEMU.API.NODE_UP", json.dumps({"name": "n3"}).encode(), timeout=2)
    assert cluster.nodes[2].up
    await nc.close()


async def test_reset_brings_nodes_back(cluster: jsemu.Server) -> None:
    port = cluster.nodes[1].port
    cluster.control.node_down("n2")
    cluster.control.reset()
    client = await RawClient.connect(port)
    assert client.info["server_name"] == "n2"
    await client.close()


async def test_plugin_factory_exposes_the_node_urls(jsemu_factory: Any) -> None:
    srv = await jsemu_factory(cluster_size=3)
    assert len(srv.urls) == 3
    for url, name in zip(srv.urls, NAMES, strict=True):
        nc = await nats.connect(url)
        assert nc._server_info["server_name"] == name
        await nc.close()


# --- the same against a real 3-node cluster -------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RealCluster:
    """Three nats-server processes routed into cluster ``c``, servers named n1..n3."""

    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-cluster-")
        self.ports = [_free_port() for _ in NAMES]
        self.cluster_ports = [_free_port() for _ in NAMES]
        self.procs: list[subprocess.Popen[bytes] | None] = [None, None, None]
        for i in range(3):
            self.start(i)

    def start(self, i: int) -> None:
        routes = ",".join(f"nats://127.0.0.1:{p}" for p in self.cluster_ports)
        args = [nats_server_binary(), "-a", "127.0.0.1", "-p", str(self.ports[i]), "-n", NAMES[i]]
        args += ["-js", "-sd", f"{self.tmp.name}/{NAMES[i]}", "--cluster_name", "c"]
        args += ["--cluster", f"nats://127.0.0.1:{self.cluster_ports[i]}", "--routes", routes]
        self.procs[i] = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self, i: int) -> None:
        proc = self.procs[i]
        if proc is not None:
            proc.terminate()
            proc.wait(10)
            self.procs[i] = None

    def close(self) -> None:
        for i in range(3):
            self.stop(i)
        self.tmp.cleanup()


@pytest.fixture
def real_cluster() -> Iterator[RealCluster]:
    cluster = RealCluster()
    try:
        yield cluster
    finally:
        cluster.close()


async def _formed(port: int, size: int) -> RawClient:
    """A client of the server on ``port`` once its INFO lists ``size`` servers."""
    deadline = time.monotonic() + 15
    while True:
        try:
            client = await _client(port)
        except OSError:
            client = None
        if client is not None:
            if len(client.info.get("connect_urls", [])) == size:
                return client
            await client.close()
        assert time.monotonic() < deadline, f"server on {port} did not see {size} servers"
        await asyncio.sleep(0.1)


async def _infos_until(client: RawClient, done: Any, timeout: float) -> list[dict[str, Any]]:
    """The INFOs ``client`` gets until ``done(infos)`` (fails after ``timeout``)."""
    deadline = time.monotonic() + timeout
    infos: list[dict[str, Any]] = []
    while not done(infos):
        assert time.monotonic() < deadline, f"no such INFO within {timeout}s: {infos}"
        infos += await _infos(client, 0.5)
    return infos


async def _observe(ports: list[int], down: Any, up: Any) -> dict[str, Any]:
    """INFO of each node, then the async INFOs of node 2 when node 1 goes and comes back."""
    clients = [await _formed(p, 3) for p in ports]
    seen: dict[str, Any] = {"info": [c.info for c in clients]}
    await down()
    gone = await _infos_until(clients[1], bool, 10)
    seen["down"] = gone[-1]
    await up()
    back = await _infos_until(clients[1], lambda infos: any(len(i["connect_urls"]) == 3 for i in infos), 15)
    seen["up"] = back[-1]
    for client in clients:
        await client.close()
    return seen


def _check(seen: dict[str, Any], ports: list[int]) -> None:
    for info, name, port in zip(seen["info"], NAMES, ports, strict=True):
        assert (info["server_name"], info["port"], info["cluster"]) == (name, port, "c")
        assert info["connect_urls"][0] == _url(port)
        assert sorted(info["connect_urls"]) == sorted(_url(p) for p in ports)
    assert len({i["server_id"] for i in seen["info"]}) == 3
    assert seen["down"]["connect_urls"] == [_url(ports[1]), _url(ports[2])]
    assert seen["up"]["connect_urls"][0] == _url(ports[1])
    assert sorted(seen["up"]["connect_urls"]) == sorted(_url(p) for p in ports)


async def test_info_per_node_matches_a_real_cluster(real_cluster: RealCluster) -> None:
    async def real_down() -> None:
        real_cluster.stop(0)

    async def real_up() -> None:
        real_cluster.start(0)

    real_seen = await _observe(real_cluster.ports, real_down, real_up)
    _check(real_seen, real_cluster.ports)

    async with jsemu.Server(cluster_size=3, cluster_name="c") as srv:
        ports = [n.port for n in srv.nodes]

        async def emu_down() -> None:
            srv.control.node_down("n1")

        async def emu_up() -> None:
            srv.control.node_up("n1")

        emu_seen = await _observe(ports, emu_down, emu_up)
    _check(emu_seen, ports)
    for key in ("info", "down", "up"):
        emu, real_infos = emu_seen[key], real_seen[key]
        if key == "info":
            assert [_shape(i) for i in emu] == [_shape(i) for i in real_infos]
        else:
            assert _shape(emu) == _shape(real_infos)
