"""Lame duck mode in a cluster of processes, as each node's clients see it: the same run on
nats-server 2.15.1 clusters, ``jsemu serve`` clusters and mixed ones.

Captured from nats-server: SIGUSR2 to one node (with a client) and at once, long before its
grace period ends, the clients of the other nodes get an INFO whose ``connect_urls`` lack the
lame duck node's URL (their own first; no ``ldm``: that news came over the route), while the
lame duck node's own client gets ``ldm`` and the peers' URLs only. After the grace period
that client is closed, the node exits, and the others' clients hear nothing more (the URL
is already gone). nats-server accepts no ``lame_duck_duration`` under 30 s; the grace period
is 1 s, so a run takes a few seconds.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server.test_routes import Wire, _client
from support.cluster import Node, start_node, wait_routes

GRACE = 1.0
CONF = f'lame_duck_duration: "30s"\nlame_duck_grace_period: "{int(GRACE)}s"\n'

#: (the kinds of the nodes, the node put into lame duck mode)
CASES = {
    "real": (["real", "real", "real"], 1),
    "jsemu": (["jsemu", "jsemu", "jsemu"], 1),
    "real-ldm-to-jsemu": (["jsemu", "real"], 1),
    "jsemu-ldm-to-real": (["real", "jsemu"], 1),
}


@pytest.fixture(params=list(CASES))
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[list[Node], int]]:
    kinds, ldm = CASES[request.param]
    conf = tmp_path / "ldm.conf"
    conf.write_text(CONF)
    extra = ["-c", str(conf)]
    nodes: list[Node] = []
    try:
        nodes.append(start_node(kinds[0], extra=extra))
        for kind in kinds[1:]:
            nodes.append(start_node(kind, [nodes[0].route_url], extra))
        wait_routes(nodes)
        yield nodes, ldm
    finally:
        for node in nodes:
            node.stop(kill=True)


def _next_info(c: Wire, timeout: float) -> dict[str, object]:
    """The next INFO pushed to a client (PINGs skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        frame = c.until(b"\r\n", max(0.01, deadline - time.monotonic()))
        if frame.startswith(b"INFO "):
            info: dict[str, object] = json.loads(frame[5:])
            if not info.get("connect_info"):
                return info
        else:
            assert frame == b"PING\r\n", frame


def test_peers_clients_drop_the_lame_duck_at_once(cluster: tuple[list[Node], int]) -> None:
    nodes, ldm = cluster
    urls = [f"127.0.0.1:{n.port}" for n in nodes]
    clients = [_client(n) for n in nodes]
    try:
        for c in clients:  # the INFO after the first PONG lists every node
            c.send(b"PING\r\n")
            c.until(b"PONG\r\n")
        start = time.monotonic()
        os.kill(nodes[ldm].proc.pid, signal.SIGUSR2)
        mine = _next_info(clients[ldm], GRACE)
        assert mine["ldm"] is True
        assert sorted(mine["connect_urls"]) == sorted(u for i, u in enumerate(urls) if i != ldm)  # type: ignore[type-var]
        for i, c in enumerate(clients):
            if i == ldm:
                continue
            info = _next_info(c, GRACE / 2)
            others = [u for j, u in enumerate(urls) if j not in (i, ldm)]
            assert info["connect_urls"] == [urls[i], *others] and "ldm" not in info, info
        assert time.monotonic() - start < GRACE  # all of it before the grace period ends
        # The lame duck node's client goes after the grace period; then the process.
        data, closed = clients[ldm].rest(GRACE + 3)
        assert closed and b"INFO" not in data, data
        assert time.monotonic() - start >= GRACE
        nodes[ldm].proc.wait(10)
        for i, c in enumerate(clients):
            if i != ldm:
                data, closed = c.rest(0.3)
                assert not closed and data.replace(b"PING\r\n", b"") == b"", data
    finally:
        for c in clients:
            c.close()
