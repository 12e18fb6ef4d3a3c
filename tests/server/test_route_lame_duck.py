"""Lame duck mode over a route, byte for byte: a raw socket plays a server of the cluster
against one nats-server process and one ``jsemu serve`` process started the same way.

nats-server 2.15.1, as captured: a server entering lame duck mode with clients sends each
route one INFO with ``"ldm":true`` right after ``connect_urls`` (its own client URLs, no
nonce) before its clients get theirs (``sendLDMToRoutes``, then ``sendLDMToClients``); with
no client it shuts down at once and the route only closes. A server that gets such an INFO
from a route drops that peer's client URLs and sends its protocol-1 clients an INFO without
them (no ``ldm`` in it: the lame duck is the peer); a second ``ldm`` INFO, a plain INFO from
the same peer, or the route closing afterwards send nothing more.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cluster import Node, start_node
from support.servers import KINDS

from .test_routes import FAKE_INFO, Wire, _async_info, _client, _route, _sync

#: The shortest lame duck duration nats-server accepts, and a grace period no test waits out.
LDM_CONF = 'lame_duck_duration: "30s"\nlame_duck_grace_period: "10s"\n'


@pytest.fixture(params=KINDS)
def ldm_node(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Node]:
    conf = tmp_path / "ldm.conf"
    conf.write_text(LDM_CONF)
    n = start_node("jsemu" if request.param == "jsemu" else "real", extra=["-c", str(conf)])
    yield n
    n.stop(kill=True)


def _quiet(w: Wire, wait: float = 0.3) -> tuple[bytes, bool]:
    """What arrives in ``wait``, without the server's PINGs (nats-server's first one comes 2 s in)."""
    data, closed = w.rest(wait)
    return data.replace(b"PING\r\n", b""), closed


def _info(frame: bytes) -> dict[str, object]:
    assert frame.startswith(b"INFO "), frame
    info: dict[str, object] = json.loads(frame[5:])
    return info


def test_lame_duck_sends_the_routes_an_ldm_info(ldm_node: Node) -> None:
    c = _client(ldm_node)
    w = _route(ldm_node)
    try:
        _sync(w)
        assert _async_info(c)["connect_urls"] == [f"127.0.0.1:{ldm_node.port}", "127.0.0.1:1"]
        os.kill(ldm_node.proc.pid, signal.SIGUSR2)
        info = _info(w.until(b"\r\n"))
        keys = list(info)
        assert info["ldm"] is True and info["server_id"] and "nonce" not in info
        assert info["connect_urls"] == [f"127.0.0.1:{ldm_node.port}"]
        assert keys.index("ldm") == keys.index("connect_urls") + 1
        assert info["cluster"] == "c" and info["port"] == ldm_node.route_port
        # The clients' own INFO: ldm, only the peers' URLs.
        mine = _async_info(c)
        assert mine["ldm"] is True and mine["connect_urls"] == ["127.0.0.1:1"]
        # Nothing else on the route during the grace period.
        assert _quiet(w) == (b"", False)
    finally:
        w.close()
        c.close()


def test_lame_duck_without_clients_only_closes_the_routes(ldm_node: Node) -> None:
    w = _route(ldm_node)
    try:
        _sync(w)
        os.kill(ldm_node.proc.pid, signal.SIGUSR2)
        assert w.rest(5.0) == (b"", True)
    finally:
        w.close()


@pytest.mark.parametrize("kind", KINDS)
def test_an_ldm_info_from_a_route_withdraws_its_client_urls(kind: str) -> None:
    n = start_node("jsemu" if kind == "jsemu" else "real")
    c = _client(n)
    w = _route(n)
    try:
        _sync(w)
        own = f"127.0.0.1:{n.port}"
        assert _async_info(c)["connect_urls"] == [own, "127.0.0.1:1"]
        ldm = b"INFO " + json.dumps({**FAKE_INFO, "ldm": True}).encode() + b"\r\n"
        w.send(ldm)
        _sync(w)
        info = _async_info(c)
        assert info["connect_urls"] == [own] and "ldm" not in info
        # Once: again, a plain INFO of the same peer, the route closing: nothing more.
        w.send(ldm + b"INFO " + json.dumps(FAKE_INFO).encode() + b"\r\n")
        _sync(w)
        assert _quiet(c) == (b"", False)
        w.close()
        assert _quiet(c) == (b"", False)
        c.send(b"PING\r\n")
        assert c.until(b"PONG\r\n") == b"PONG\r\n"
    finally:
        w.close()
        c.close()
        n.stop()
