"""The WebSocket port in a cluster of processes, as nats-server 2.15.1 has it: each server's
route INFO carries its WebSocket URLs (``ws_connect_urls``: the block's ``advertise`` if
set, else the listener's), peers count them, and a WebSocket client's INFO ``connect_urls``
are the cluster's WebSocket URLs (its own server's first) where a TCP client's are the
client URLs; ``/varz`` has both lists and ``websocket.advertise``. When a server goes, the
WebSocket clients of the others get an INFO without its URL. Clusters of two nats-servers,
two jsemus and both mixes give the same answers."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from support.cluster import Node, start_node, stop_cluster, wait_routes
from support.wsclient import CONNECT, WsClient, frame, info_of

_WS = re.compile(r"Listening for websocket clients on ws://127\.0\.0\.1:(\d+)")
_ADVERTISED = "ws.example.com:9999"


def _ws_port(node: Node) -> int:
    for _ in range(100):
        for line in node.lines:
            m = _WS.search(line)
            if m:
                return int(m.group(1))
        time.sleep(0.02)
    raise RuntimeError("no websocket line:\n" + "".join(node.lines))


def _tcp_info(port: int) -> dict[str, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        data = b""
        while b"\r\n" not in data:
            data += sock.recv(65536)
    return info_of(data)


def _start(kinds: tuple[str, str], tmp_path: Path) -> list[Node]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    confs = []
    for i, extra in enumerate((f', advertise: "{_ADVERTISED}"', "")):
        conf = tmp_path / f"n{i}.conf"
        conf.write_text(f'websocket {{ listen: "127.0.0.1:-1", no_tls: true{extra} }}\n')
        confs.append(conf)
    nodes: list[Node] = []
    try:
        nodes.append(start_node(kinds[0], extra=["-c", str(confs[0])]))
        nodes.append(start_node(kinds[1], [nodes[0].route_url], extra=["-c", str(confs[1])]))
        wait_routes(nodes)
    except BaseException:
        stop_cluster(nodes)
        raise
    return nodes


async def _observe(kinds: tuple[str, str], tmp_path: Path) -> list[Any]:
    nodes = await asyncio.to_thread(_start, kinds, tmp_path)
    try:
        ws_ports = [_ws_port(n) for n in nodes]
        names = {f"127.0.0.1:{n.port}": f"tcp{i}" for i, n in enumerate(nodes)}
        names |= {f"127.0.0.1:{p}": f"ws{i}" for i, p in enumerate(ws_ports)}

        def named(urls: Any) -> list[str]:
            return [names.get(u, u) for u in urls or []]

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until each has heard of the other's URLs
            varz = [n.get("varz") for n in nodes]
            if all(len(v.get("ws_connect_urls") or []) == 2 for v in varz):
                break
            await asyncio.sleep(0.05)
        out: list[Any] = []
        for i, node in enumerate(nodes):
            client = await WsClient.connect(ws_ports[i])
            first, _ = await client.frames(quiet=0.2)
            client.close()
            ws_info = info_of(first[0].text())
            tcp_info = await asyncio.to_thread(_tcp_info, node.port)
            v = varz[i]
            out.append(
                {
                    "ws connect_urls": named(ws_info.get("connect_urls")),
                    "ws host/port": (ws_info["host"], names.get(f"127.0.0.1:{ws_info['port']}")),
                    "tcp connect_urls": named(tcp_info.get("connect_urls")),
                    "varz connect_urls": named(v.get("connect_urls")),
                    "varz ws_connect_urls": named(v.get("ws_connect_urls")),
                    "varz websocket advertise": v["websocket"].get("advertise"),  # type: ignore[attr-defined]
                    "varz keys": [k for k in v if k in ("port", "connect_urls", "ws_connect_urls", "max_connections")],
                }
            )
        # A WebSocket client of the second server that takes async INFO, then the first goes.
        client = await WsClient.connect(ws_ports[1])
        await client.frames(quiet=0.2)
        client.send(frame(2, CONNECT + b"PING\r\n"))
        await client.until(b"PONG\r\n")
        await client.frames(quiet=0.3)  # the INFO after the first PONG
        nodes[0].stop()
        text = await client.until(b"INFO ", timeout=10)
        client.close()
        out.append(named(info_of(text[text.index(b"INFO ") :]).get("connect_urls")))
        return out
    finally:
        stop_cluster(nodes)


@pytest.mark.parametrize("kinds", [("jsemu", "jsemu"), ("jsemu", "real"), ("real", "jsemu")], ids="-".join)
async def test_websocket_urls_in_a_cluster_as_nats_server(kinds: tuple[str, str], tmp_path: Path) -> None:
    real = await _observe(("real", "real"), tmp_path / "real")
    got = await _observe(kinds, tmp_path / "got")
    assert json.dumps(got) == json.dumps(real)
    assert real[0]["ws connect_urls"] == [_ADVERTISED, "ws1"]
    assert real[1]["ws connect_urls"] == ["ws1", _ADVERTISED]
    assert real[0]["tcp connect_urls"] == ["tcp0", "tcp1"]
    assert real[2] == ["ws1"]
