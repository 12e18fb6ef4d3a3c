"""Route liveness and the route INFO, side by side: a raw socket plays a server of the cluster
against one nats-server and one ``jsemu serve`` started with the same configuration file
(``cluster { ping_interval: 100ms, ping_max: 2 }`` so a stale route shows in a fraction of a
second).

What nats-server 2.15.1 does, captured: once the peer's INFO has arrived it PINGs the route
after min(interval, 1 s) plus up to a fifth, then every interval, whatever else the route
sends; the timer that would send a third unanswered PING sends ``-ERR 'Stale Connection'``
and closes, logs ``Router connection closed: Stale Connection - Remote: <server_name>``, drops
the route's interest and tells clients the smaller ``connect_urls``. A PONG clears the count.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cluster import Node, free_port, start_node
from support.servers import KINDS

from .test_routes import FAKE_CONNECT, FAKE_INFO, Wire, _client, _kind

CONF = """
listen: "127.0.0.1:-1"
http: "127.0.0.1:-1"
cluster { name: c, listen: "127.0.0.1:-1", ping_interval: "100ms", ping_max: 2 }
"""

#: nats-server's route INFO keys, in order (no ``git_commit``: the route INFO has none).
REAL_ROUTE_INFO = [
    "server_id",
    "server_name",
    "version",
    "proto",
    "go",
    "host",
    "port",
    "headers",
    "max_payload",
    "nonce",
    "cluster",
    "connect_urls",
    "compression",
    "lnoc",
    "lnocu",
    "ln",
    "route_pool_size",
]
#: What jsemu leaves out on purpose: they would make a nats-server peer pool routes,
#: negotiate compression or send leaf node interest (see ``Cluster.route_info``).
NOT_SPOKEN = {"compression", "lnoc", "lnocu", "ln", "route_pool_size"}


@pytest.fixture(scope="module", params=KINDS)
def node(request: pytest.FixtureRequest) -> Iterator[Node]:
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write(CONF)
    n = start_node(_kind(request.param), extra=["-c", f.name], flags=False)
    yield n
    n.stop()


def _join(node: Node) -> Wire:
    w = Wire(node.route_port)
    w.until(b"\r\n")
    w.send(b"CONNECT " + json.dumps(FAKE_CONNECT).encode() + b"\r\n")
    w.send(b"INFO " + json.dumps(FAKE_INFO).encode() + b"\r\n")
    return w


def _frames(data: bytes) -> list[bytes]:
    return [ln for ln in data.split(b"\r\n") if ln and not ln.startswith(b"RS+ $SYS ")]


def _log_after(node: Node, start: int, text: str, timeout: float = 3.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in node.lines[start:]:
            if text in line:
                return line
        time.sleep(0.02)
    raise AssertionError(f"no {text!r} in {node.lines[start:]}")


def _routes(node: Node) -> int:
    return int(node.get("routez")["num_routes"])  # type: ignore[call-overload]


def test_silent_route_goes_stale(node: Node) -> None:
    c = _client(node)
    mark = len(node.lines)
    w = _join(node)
    try:
        t0 = time.monotonic()
        c.until(b"127.0.0.1:1")  # the peer's client URL reached the client
        c.until(b"\r\n")
        data, closed = w.rest(wait=2.0)
        took = time.monotonic() - t0
        assert closed
        assert _frames(data) == [b"PING", b"PING", b"-ERR 'Stale Connection'"]
        assert 0.25 <= took < 1.5  # about 100 ms (+20%) + 2 x 100 ms
        line = _log_after(node, mark, "Stale Connection")
        assert line.rstrip().endswith(" - Router connection closed: Stale Connection - Remote: fake")
        frame = c.until(b"\r\n")
        assert frame.startswith(b"INFO "), frame
        assert json.loads(frame[5:])["connect_urls"] == [f"127.0.0.1:{node.port}"]
        deadline = time.monotonic() + 2
        while _routes(node) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _routes(node) == 0
    finally:
        w.close()
        c.close()


def test_answered_pings_keep_the_route(node: Node) -> None:
    w = _join(node)
    try:
        pings = 0
        deadline = time.monotonic() + 0.8
        while time.monotonic() < deadline:
            data, closed = w.rest(wait=0.05)
            assert not closed, data
            for frame in _frames(data):
                assert frame == b"PING", frame
                pings += 1
                w.send(b"PONG\r\n")
        assert pings >= 4  # every 100 ms, answered: never stale
        assert _routes(node) >= 1
    finally:
        w.close()


def test_traffic_does_not_delay_route_pings(node: Node) -> None:
    """Unlike a client's, a route's PINGs are not put off by what it sends (here PINGs of its own)."""
    w = _join(node)
    try:
        got = b""
        deadline = time.monotonic() + 2.0
        closed = False
        while time.monotonic() < deadline and not closed:
            w.send(b"PING\r\n")
            data, closed = w.rest(wait=0.03)
            got += data
        assert closed
        assert [f for f in _frames(got) if f != b"PONG"] == [b"PING", b"PING", b"-ERR 'Stale Connection'"]
    finally:
        w.close()


def test_route_info_fields_in_order(node: Node) -> None:
    w = Wire(node.route_port)
    try:
        info = json.loads(w.until(b"\r\n")[5:])
    finally:
        w.close()
    want = REAL_ROUTE_INFO if node.kind == "real" else [k for k in REAL_ROUTE_INFO if k not in NOT_SPOKEN]
    assert list(info) == want
    assert info["proto"] == 3


def test_closed_route_log_names_the_remote(node: Node) -> None:
    mark = len(node.lines)
    w = _join(node)
    w.send(b"PING\r\n")
    w.until(b"PONG\r\n")
    w.close()
    # (nats-server also logs the earlier tests' unregistered routes, without a remote name)
    line = _log_after(node, mark, "Client Closed - Remote")
    assert line.rstrip().endswith(" - Router connection closed: Client Closed - Remote: fake")


@pytest.mark.parametrize("kind", KINDS)
def test_route_info_with_jetstream(kind: str) -> None:
    """``jetstream`` right after ``max_payload`` and ``domain`` right after ``cluster``, where
    nats-server's ``Info`` has them."""
    sd = tempfile.mkdtemp(prefix="rinfo-")
    conf = Path(sd) / "d.conf"
    conf.write_text("jetstream { domain: X }\n")
    extra = ["-c", str(conf), "-js", "-sd", sd, "-n", "x"]
    if kind == "real":  # a JetStream cluster needs routes: its own port will do to start
        port = free_port()
        extra += [
            "--cluster",
            f"nats://127.0.0.1:{port}",
            "--cluster_name",
            "c",
            "--routes",
            f"nats://127.0.0.1:{port}",
        ]
    n = start_node(_kind(kind), extra=extra, flags=kind != "real", jetstream=True)
    try:
        w = Wire(n.route_port)
        try:
            keys = list(json.loads(w.until(b"\r\n")[5:]))
        finally:
            w.close()
    finally:
        n.stop()
    assert keys[keys.index("max_payload") + 1] == "jetstream"
    assert keys[keys.index("cluster") + 1 : keys.index("cluster") + 3] == ["domain", "connect_urls"]
    assert "git_commit" not in keys


@pytest.mark.parametrize("send_connect", [True, False], ids=["connect-only", "silent"])
def test_route_without_info_goes_stale(node: Node, send_connect: bool) -> None:
    """No INFO from the remote, so no PING, but after (ping_max + 1) intervals the route is
    closed as stale (``watchForStaleConnection``), before the 2 s authentication timeout."""
    w = Wire(node.route_port)
    try:
        w.until(b"\r\n")
        t0 = time.monotonic()
        if send_connect:
            w.send(b"CONNECT " + json.dumps(FAKE_CONNECT).encode() + b"\r\n")
        data, closed = w.rest(wait=2.0)
        took = time.monotonic() - t0
        assert closed
        assert _frames(data) == [b"-ERR 'Stale Connection'"]
        assert 0.2 <= took < 1.0  # 3 x 100 ms
    finally:
        w.close()
