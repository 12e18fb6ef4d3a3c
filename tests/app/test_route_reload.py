"""A reload (SIGHUP) of a cluster's ``routes`` list, side by side with nats-server 2.15.1.

Captured from nats-server: a new URL in ``routes`` is dialled (``Reloaded: cluster routes``,
then the route comes up); a URL no longer listed has its route closed (``Router connection
closed: Route Removed``, ``Removed route <url>``, then ``Reloaded: cluster routes``); the
cluster's host or port cannot change (``config reload not supported for cluster port:
old=<in use>, new=<file>``), and a server started with ``--cluster ...:-1`` cannot reload at
all (the file's port, 0, is not the one in use). The block's other changes are applied
(``Reloaded: cluster``): a new ``name`` logs ``Cluster name updated to <name>`` first, the
routes stay up, no client is sent an INFO, and new clients and routes get the new name;
``no_advertise`` takes ``connect_urls`` out of the route INFO new routes get (the client
URLs already learnt from peers stay in the client INFO).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from pathlib import Path

import pytest
from support.cluster import Node, free_port, start_node, wait_routes
from support.servers import KINDS

_PREFIX = re.compile(r"^\[\d+\] \S+ \S+ ")


def _write(conf: Path, port: int, routes: list[str], host: str = "127.0.0.1") -> None:
    urls = ", ".join(f'"{r}"' for r in routes)
    conf.write_text(f'cluster {{\n  name: c\n  listen: "{host}:{port}"\n  routes: [{urls}]\n}}\n')


def _reload(node: Node, until: str) -> list[str]:
    mark = len(node.lines)
    os.kill(node.proc.pid, signal.SIGHUP)
    deadline = time.monotonic() + 5
    while not any(until in line for line in node.lines[mark:]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [_PREFIX.sub("", line.rstrip()) for line in node.lines[mark:]]


def _run(kind: str, tmp: Path) -> dict[str, object]:
    b, c = start_node(kind), start_node(kind)
    conf = tmp / kind / "a.conf"
    conf.parent.mkdir()
    port = free_port()
    _write(conf, port, [b.route_url])
    a = start_node(kind, extra=["-c", str(conf)], flags=False)
    try:
        wait_routes([a, b])
        out: dict[str, object] = {}
        _write(conf, port, [b.route_url, c.route_url])
        lines = _reload(a, "Reloaded server configuration")
        out["add"] = [x for x in lines if x.startswith("[INF] Reloaded:")]
        wait_routes([a, b, c])
        _write(conf, port, [c.route_url])
        lines = _reload(a, "Reloaded server configuration")
        out["remove"] = [
            re.sub(r"^\[INF\] [\d.]+:\d+ - rid:\d+ - ", "[INF] ", x).split(" - Remote:")[0]
            for x in lines
            if "Route Removed" in x or "Removed route" in x or "Reloaded:" in x
        ]
        deadline = time.monotonic() + 5
        while a.peers() != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        out["peers after remove"] = a.peers()
        _write(conf, port + 1, [c.route_url])
        out["port"] = _reload(a, "Failed to reload")[-1]
        _write(conf, port, [c.route_url], host="0.0.0.0")
        out["host"] = _reload(a, "Failed to reload")[-1]
        out["urls"] = (b.route_url, c.route_url, port)
        return out
    finally:
        for n in (a, b, c):
            n.stop()


def test_routes_reload_as_nats_server(tmp_path: Path) -> None:
    got = {kind: _run("jsemu" if kind == "jsemu" else "real", tmp_path) for kind in KINDS}
    for kind, out in got.items():
        b_url, _c_url, port = out.pop("urls")  # type: ignore[misc]
        assert out == {
            "add": [
                "[INF] Reloaded: authorization users",
                "[INF] Reloaded: accounts",
                "[INF] Reloaded: cluster routes",
            ],
            "remove": [
                "[INF] Reloaded: authorization users",
                "[INF] Reloaded: accounts",
                # nats-server closes each of its pooled routes to the server; jsemu has one
                *(
                    ["[INF] Router connection closed: Route Removed", f"[INF] Removed route {b_url}"]
                    * (1 if kind == "jsemu" else 4)
                ),
                "[INF] Reloaded: cluster routes",
            ],
            "peers after remove": 1,
            "port": f"[ERR] Failed to reload server configuration: config reload not supported for cluster port: old={port}, new={port + 1}",
            "host": "[ERR] Failed to reload server configuration: config reload not supported for cluster host: old=127.0.0.1, new=0.0.0.0",
        }, kind


@pytest.mark.parametrize("kind", KINDS)
def test_a_random_cluster_port_cannot_reload(kind: str, tmp_path: Path) -> None:
    conf = tmp_path / "x.conf"
    conf.write_text("max_payload: 2000\n")
    n = start_node("jsemu" if kind == "jsemu" else "real", extra=["-c", str(conf)])
    try:
        last = _reload(n, "Failed to reload")[-1]
        assert last == (
            "[ERR] Failed to reload server configuration: config reload not supported for cluster port: "
            f"old={n.route_port}, new=0"
        )
    finally:
        n.stop()


def _info(port: int) -> dict[str, object]:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        buf = b""
        while b"\r\n" not in buf:
            buf += s.recv(65536)
    info = json.loads(buf.split(b"\r\n")[0][5:])
    return {k: info.get(k) for k in ("cluster", "connect_urls")}


def _async_infos(sock: socket.socket) -> int:
    """How many INFOs a client got since the last call (the server's PINGs aside)."""
    sock.settimeout(0.3)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        pass
    return data.count(b"INFO ")


def _settings_run(kind: str, tmp: Path) -> list[object]:
    port = free_port()
    conf = tmp / kind / "a.conf"
    conf.parent.mkdir()

    def write(name: str, no_advertise: bool) -> None:
        flag = "true" if no_advertise else "false"
        conf.write_text(f'cluster {{\n  name: {name}\n  listen: "127.0.0.1:{port}"\n  no_advertise: {flag}\n}}\n')

    write("c", False)
    a = start_node(kind, extra=["-c", str(conf)], flags=False)
    b = start_node(kind, [a.route_url])
    try:
        wait_routes([a, b])
        clients = []
        for n in (a, b):
            s = socket.create_connection(("127.0.0.1", n.port), timeout=2)
            s.sendall(b'CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n')
            clients.append(s)
        for s in clients:
            _async_infos(s)
        out: list[object] = []
        for name, no_advertise in (("d", False), ("d", True), ("d", False)):
            write(name, no_advertise)
            lines = _reload(a, "Reloaded server configuration")
            out.append([x for x in lines if "Reloaded:" in x or "Cluster name" in x])
            out.append([_async_infos(s) for s in clients])
            out.append((a.peers(), b.peers()))
            out.append(_info(a.route_port))
            client_info = _info(a.port)
            out.append((client_info["cluster"], len(client_info["connect_urls"])))  # type: ignore[arg-type]
        for s in clients:
            s.close()
        out.append(str(a.get("varz")["cluster"]["name"]))  # type: ignore[index]
        return [json.loads(json.dumps(x).replace(str(a.port), "A")) for x in out]
    finally:
        a.stop()
        b.stop()


def test_cluster_settings_reload_as_nats_server(tmp_path: Path) -> None:
    got = {kind: _settings_run("jsemu" if kind == "jsemu" else "real", tmp_path) for kind in KINDS}
    auth = ["[INF] Reloaded: authorization users", "[INF] Reloaded: accounts"]
    for kind, out in got.items():
        assert out == [
            [*auth, "[INF] Cluster name updated to d", "[INF] Reloaded: cluster"],
            [0, 0],
            [1, 1],
            {"cluster": "d", "connect_urls": ["127.0.0.1:A"]},
            ["d", 2],
            [*auth, "[INF] Reloaded: cluster"],  # no_advertise on
            [0, 0],
            [1, 1],
            {"cluster": "d", "connect_urls": None},
            ["d", 2],
            [*auth, "[INF] Reloaded: cluster"],  # and off again
            [0, 0],
            [1, 1],
            {"cluster": "d", "connect_urls": ["127.0.0.1:A"]},
            ["d", 2],
            "d",
        ], kind
