"""The JetStream election of a cluster of jsemu processes (``jsemu/server/meta_leader.py``):
its rules on a stand-in cluster (peers are route INFOs), then on processes: the first node
leads, a later joiner follows, and when the leader is killed the next one takes over and
answers ``$JS.API.INFO``. jsemu only: nats-server elects by Raft."""

from __future__ import annotations

import logging
import signal
import socket
import time
from types import SimpleNamespace
from typing import Any

import pytest
from support.cluster import js_ready, start_js_cluster, start_node, stop_cluster, wait_routes

from jsemu.server.meta_leader import MetaLeader


class _Cluster(SimpleNamespace):
    def send_info(self) -> None:
        self.infos += 1


def _route(server_id: str, start: int, name: str = "", **js: Any) -> SimpleNamespace:
    info: dict[str, Any] = {"jsemu_js": {"start": start, **js}}
    return SimpleNamespace(remote_id=server_id, remote_name=name or server_id, remote_info=info)


def _meta(server_id: str = "NB", start: int = 20, routes: tuple[str, ...] = ()) -> tuple[MetaLeader, list[str]]:
    calls: list[str] = []
    timers = SimpleNamespace(at=lambda deadline, fn: SimpleNamespace(cancel=lambda: None))
    server = SimpleNamespace(server_id=server_id, timers=timers, clock=SimpleNamespace(now_ns=lambda: 0))
    cluster = _Cluster(server=server, routes={}, name="c", infos=0, options=SimpleNamespace(routes=list(routes)))
    meta = MetaLeader(cluster, lambda: calls.append("start"), lambda: calls.append("stop"), ["$G"])  # type: ignore[arg-type]
    meta.start_ns = start
    return meta, calls


def test_alone_it_leads_at_once_and_announces_it() -> None:
    meta, calls = _meta()
    meta.begin()
    assert calls == ["start"] and meta.running and meta.announce() == {"start": 20, "leader": True}
    assert meta.cluster.infos == 1  # type: ignore[attr-defined]


def test_the_earliest_start_leads() -> None:
    meta, calls = _meta(start=20)
    meta.cluster.routes = {"NA": _route("NA", 10), "NC": _route("NC", 30)}  # type: ignore[attr-defined]
    meta.begin()
    assert calls == [] and not meta.running
    early, calls = _meta(start=5)
    early.cluster.routes = {"NA": _route("NA", 10)}  # type: ignore[attr-defined]
    early.begin()
    assert calls == ["start"]


def test_equal_starts_go_by_server_id() -> None:
    meta, calls = _meta(server_id="NB", start=10)
    meta.cluster.routes = {"NA": _route("NA", 10)}  # type: ignore[attr-defined]
    meta.begin()
    assert calls == []
    meta, calls = _meta(server_id="NA", start=10)
    meta.cluster.routes = {"NB": _route("NB", 10)}  # type: ignore[attr-defined]
    meta.begin()
    assert calls == ["start"]


def test_a_later_joiner_never_displaces_a_running_leader(caplog: pytest.LogCaptureFixture) -> None:
    meta, calls = _meta(start=1)  # the earliest start of all, but the leader runs already
    meta.cluster.routes = {"NA": _route("NA", 10, "a", leader=True)}  # type: ignore[attr-defined]
    with caplog.at_level(logging.INFO, logger="jsemu.server"):
        meta.begin()
    assert calls == [] and meta.leader_id == "NA"
    assert "JetStream cluster new metadata leader: a/c" in caplog.text


def test_two_leaders_meet_the_later_stops(caplog: pytest.LogCaptureFixture) -> None:
    later, calls = _meta(start=20)
    later.begin()
    later.cluster.routes = {"NA": _route("NA", 10, "a", leader=True)}  # type: ignore[attr-defined]
    with caplog.at_level(logging.INFO, logger="jsemu.server"):
        later.peers_changed()
    assert calls == ["start", "stop"] and not later.running and later.leader_id == "NA"
    assert "started before this server: stopping JetStream here" in caplog.text
    earlier, calls = _meta(start=5)
    earlier.begin()
    earlier.cluster.routes = {"NA": _route("NA", 10, "a", leader=True)}  # type: ignore[attr-defined]
    earlier.peers_changed()
    assert calls == ["start"] and earlier.running


def test_the_next_takes_over_when_the_leader_goes() -> None:
    meta, calls = _meta(start=20)
    meta.cluster.routes = {"NA": _route("NA", 10, leader=True), "NC": _route("NC", 30)}  # type: ignore[attr-defined]
    meta.begin()
    assert calls == []
    del meta.cluster.routes["NA"]  # type: ignore[attr-defined]
    meta.peers_changed()
    assert calls == ["start"]


def test_retired_and_lame_duck_peers_are_no_candidates() -> None:
    meta, calls = _meta(start=20)
    lame = _route("NC", 5)
    lame.remote_info["ldm"] = True
    meta.cluster.routes = {"NA": _route("NA", 10, retired=True), "NC": lame}  # type: ignore[attr-defined]
    meta.begin()
    assert calls == ["start"]
    meta.retire()
    assert calls == ["start", "stop"] and meta.announce() == {"start": 20, "retired": True}


def test_with_configured_routes_it_waits_for_the_first_round() -> None:
    meta, calls = _meta(start=20, routes=("nats://127.0.0.1:7001",))
    meta.begin()
    assert calls == [] and not meta.decided
    meta.cluster.routes = {"NA": _route("NA", 10)}  # type: ignore[attr-defined]
    meta.dialled("127.0.0.1:7001")
    assert meta.decided and calls == []  # the peer started first: it leads


def _has(node: Any, text: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in line for line in node.lines):
            return True
        time.sleep(0.05)
    return False


def test_processes_first_leads_joiner_follows_next_takes_over() -> None:
    nodes = start_js_cluster("jsemu")
    try:
        n1, n2, n3 = nodes
        assert _has(n1, "Self is new JetStream cluster metadata leader")
        assert _has(n2, "JetStream cluster new metadata leader: n1/c")
        n4 = start_node("jsemu", [n1.route_url], ["-js", "-n", "n4"], jetstream=True)
        nodes.append(n4)
        wait_routes(nodes)
        js_ready(n4)
        assert _has(n4, "JetStream cluster new metadata leader: n1/c")
        assert not any("Self is new" in line for line in n4.lines)
        n1.stop(kill=True)
        assert _has(n2, "Self is new JetStream cluster metadata leader")
        assert _has(n3, "JetStream cluster new metadata leader: n2/c")
        js_ready(n3)
        js_ready(n4)
        assert not any("Self is new" in line for node in (n3, n4) for line in node.lines)
    finally:
        stop_cluster(nodes)


def test_lame_duck_leader_hands_over() -> None:
    """The leader's lame duck mode shuts its JetStream down (nats-server's log lines) and the
    next server takes over before the leader's process is gone."""
    nodes = start_js_cluster("jsemu")
    try:
        n1, n2, n3 = nodes
        client = socket.create_connection(("127.0.0.1", n1.port))  # keeps n1 in lame duck mode
        client.sendall(b"CONNECT {}\r\nPING\r\n")
        client.recv(4096)
        n1.proc.send_signal(signal.SIGUSR2)
        assert _has(n1, "JetStream Shutdown")
        assert _has(n2, "Self is new JetStream cluster metadata leader", timeout=5)
        assert _has(n3, "JetStream cluster new metadata leader: n2/c")
        js_ready(n3)
        assert n1.proc.poll() is None  # still in lame duck mode
        client.close()
    finally:
        nodes[0].stop(kill=True)  # a lame duck process takes SIGTERM slowly (not this test's subject)
        stop_cluster(nodes)
