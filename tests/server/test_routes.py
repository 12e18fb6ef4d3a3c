"""The route port byte for byte: a raw socket plays a server of the cluster (one without route
pooling, as jsemu is) against one nats-server process and one ``jsemu serve`` process started
the same way, and both must send the same frames (nats-server's own system-account interest,
``RS+ $SYS ...``, is left out: jsemu has no system account unless one is configured)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cluster import Node, start_node
from support.servers import KINDS, nats_server_binary

FAKE_INFO = {
    "server_id": "NFAKEROUTE",
    "server_name": "fake",
    "version": "2.15.1",
    "proto": 1,
    "host": "127.0.0.1",
    "port": 1,
    "headers": True,
    "cluster": "c",
    "connect_urls": ["127.0.0.1:1"],
}
FAKE_CONNECT = {
    "echo": False,
    "verbose": False,
    "pedantic": False,
    "name": "NFAKEROUTE",
    "cluster": "c",
    "headers": True,
}


def _kind(param: str) -> str:
    return "jsemu" if param == "jsemu" else "real"


@pytest.fixture(scope="module", params=KINDS)
def node(request: pytest.FixtureRequest) -> Iterator[Node]:
    n = start_node(_kind(request.param))
    yield n
    n.stop()


class Wire:
    """A raw connection that reads until a marker frame arrives."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=3)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def until(self, marker: bytes, timeout: float = 3.0) -> bytes:
        deadline = time.monotonic() + timeout
        while marker not in self.buf:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                raise AssertionError(f"no {marker!r} in {self.buf!r}") from None
            if not data:
                raise AssertionError(f"closed before {marker!r}: {self.buf!r}")
            self.buf += data
        head, _, self.buf = self.buf.partition(marker)
        return head + marker

    def rest(self, wait: float = 0.5) -> tuple[bytes, bool]:
        """What arrives until the peer closes (True) or ``wait`` passes (False)."""
        self.sock.settimeout(wait)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    out, self.buf = self.buf, b""
                    return out, True
                self.buf += data
        except TimeoutError:
            out, self.buf = self.buf, b""
            return out, False
        except ConnectionResetError:  # closed with our bytes unread: a reset, still a close
            out, self.buf = self.buf, b""
            return out, True

    def close(self) -> None:
        self.sock.close()


def _route(node: Node, connect: dict[str, object] | None = None) -> Wire:
    w = Wire(node.route_port)
    w.until(b"\r\n")  # the route INFO
    w.send(b"CONNECT " + json.dumps(connect or FAKE_CONNECT).encode() + b"\r\n")
    w.send(b"INFO " + json.dumps(FAKE_INFO).encode() + b"\r\n")
    return w


def _client(node: Node) -> Wire:
    c = Wire(node.port)
    c.until(b"\r\n")
    c.send(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,"protocol":1}\r\n')
    c.send(b"PING\r\n")
    c.until(b"PONG\r\n")
    return c


def _no_info(frames: bytes) -> bytes:
    """A client's frames without the async INFOs (routes coming and going change connect_urls)."""
    return re.sub(rb"INFO [^\r]*\r\n", b"", frames)


def _sync(w: Wire) -> list[bytes]:
    """The route ops up to the answer to our PING, without the system account's."""
    w.send(b"PING\r\n")
    lines = w.until(b"PONG\r\n").split(b"\r\n")
    return [ln for ln in lines if ln and not ln.startswith((b"RS+ $SYS ", b"PONG", b"INFO "))]


def test_route_info_names_the_cluster(node: Node) -> None:
    w = Wire(node.route_port)
    try:
        info = json.loads(w.until(b"\r\n")[5:])
        assert info["cluster"] == "c" and info["headers"] is True and info["port"] == node.route_port
        assert info["connect_urls"] == [f"127.0.0.1:{node.port}"]
        assert "nonce" in info
    finally:
        w.close()


def test_interest_sent_as_rs_ops(node: Node) -> None:
    c = _client(node)
    c.send(b"SUB foo 1\r\nSUB foo 2\r\nSUB bar q 3\r\nSUB bar q 4\r\nPING\r\n")
    c.until(b"PONG\r\n")
    w = _route(node)
    try:
        assert sorted(_sync(w)) == [b"RS+ $G bar q 2", b"RS+ $G foo"]
        c.send(b"SUB bar q 7\r\nSUB foo 8\r\nUNSUB 7\r\nUNSUB 8\r\nPING\r\n")
        c.until(b"PONG\r\n")
        assert _sync(w) == [b"RS+ $G bar q 3", b"RS+ $G bar q 2"]
        c.send(b"UNSUB 3\r\nSUB baz 5\r\nUNSUB 5\r\nUNSUB 1\r\nUNSUB 2\r\nUNSUB 4\r\nPING\r\n")
        c.until(b"PONG\r\n")
        assert _sync(w) == [b"RS+ $G bar q 1", b"RS+ $G baz", b"RS- $G baz", b"RS- $G foo", b"RS- $G bar q"]
        c.send(b"SUB lim 6\r\nUNSUB 6 2\r\nPUB lim 0\r\n\r\nPING\r\n")
        c.until(b"PONG\r\n")
        assert _sync(w) == [b"RS+ $G lim"]
        c.send(b"PUB lim 0\r\n\r\nPING\r\n")  # the second message ends the subscription
        c.until(b"PONG\r\n")
        assert _sync(w) == [b"RS- $G lim"]
    finally:
        w.close()
        c.close()


def test_messages_to_the_route(node: Node) -> None:
    w = _route(node)
    c = _client(node)
    try:
        _sync(w)
        w.send(b"RS+ $G zz\r\nRS+ $G z.*\r\nRS+ $G qq g 2\r\nRS+ $G qq h 1\r\n")
        _sync(w)
        c.send(b"PUB zz 1\r\nx\r\nPUB z.1 r 1\r\ny\r\nPUB qq 1\r\nq\r\nPUB qq rr 1\r\nr\r\n")
        c.send(b"HPUB z.1 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPUB none 0\r\n\r\nPING\r\n")
        c.until(b"PONG\r\n")
        frames = w.until(b"hi\r\n")
        w.send(b"PING\r\n")
        frames += w.until(b"PONG\r\n")
        assert frames.replace(b"| h g", b"| g h").replace(b"rr h g", b"rr g h") == (
            b"RMSG $G zz 1\r\nx\r\n"
            b"RMSG $G z.1 r 1\r\ny\r\n"
            b"RMSG $G qq | g h 1\r\nq\r\n"
            b"RMSG $G qq + rr g h 1\r\nr\r\n"
            b"HMSG $G z.1 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
            b"PONG\r\n"
        )
    finally:
        w.close()
        c.close()


def test_messages_from_the_route(node: Node) -> None:
    c = _client(node)
    c.send(b"SUB foo 1\r\nSUB bar q 2\r\nPING\r\n")
    c.until(b"PONG\r\n")
    w = _route(node)
    try:
        _sync(w)
        w.send(
            b"RMSG $G foo 2\r\nab\r\nRMSG $G foo rep 2\r\ncd\r\nRMSG $G bar 2\r\nno\r\n"
            b"RMSG $G bar | q 2\r\nq1\r\nRMSG $G bar + rr q 2\r\nq2\r\nRMSG $G bar | other 2\r\nno\r\n"
            b"HMSG $G foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\nRMSG $NOACC foo 2\r\nno\r\n"
        )
        _sync(w)
        c.send(b"PING\r\n")
        assert _no_info(c.until(b"PONG\r\n")) == (
            b"MSG foo 1 2\r\nab\r\n"
            b"MSG foo 1 rep 2\r\ncd\r\n"
            b"MSG bar 2 2\r\nq1\r\n"
            b"MSG bar 2 rr 2\r\nq2\r\n"
            b"HMSG foo 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
            b"PONG\r\n"
        )
    finally:
        w.close()
        c.close()


def test_js_deliveries_from_the_route(node: Node) -> None:
    """A JetStream delivery from a route, ``RMSG <acct> <deliver> <ack reply>@<subject>``
    (``tests/server/test_routes_js_deliver.py`` has the sending side): matched on the deliver
    subject, shown with the subject after the ``@``, the reply without it; only a ``$JS.ACK``
    reply with its eight dots before the ``@`` and something after it is taken apart."""
    c = _client(node)
    c.send(b"SUB dlv 1\r\nSUB s.x 2\r\nSUB dlv3 3\r\nPING\r\n")
    c.until(b"PONG\r\n")
    w = _route(node)
    try:
        _sync(w)
        w.send(
            b"RMSG $G dlv $JS.ACK.S.C.1.1.1.1700000000000000000.0@s.x 2\r\nhi\r\n"
            b"HMSG $G dlv $JS.ACK.S.C.1.2.2.1700000000000000000.0@s.y 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
            b"RMSG $G dlv foo@bar 2\r\nhi\r\n"
            b"RMSG $G dlv $JS.ACK.S.C.1.1.1@s.x 2\r\nhi\r\n"
            b"RMSG $G dlv $JS.ACK.S.C.1.1.1.1.1@ 2\r\nhi\r\n"
            b"RMSG $G dlv $JS.ACK.S@x.C.1.1.1.1.1@s.z 2\r\nhi\r\n"
            b"RMSG $G dlv3 + $JS.ACK.S.C.1.1.1.1.1@zz q 2\r\nhi\r\n"
        )
        _sync(w)
        c.send(b"PING\r\n")
        assert _no_info(c.until(b"PONG\r\n")) == (
            b"MSG s.x 1 $JS.ACK.S.C.1.1.1.1700000000000000000.0 2\r\nhi\r\n"
            b"HMSG s.y 1 $JS.ACK.S.C.1.2.2.1700000000000000000.0 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
            b"MSG dlv 1 foo@bar 2\r\nhi\r\n"
            b"MSG dlv 1 $JS.ACK.S.C.1.1.1@s.x 2\r\nhi\r\n"
            b"MSG dlv 1 $JS.ACK.S.C.1.1.1.1.1@ 2\r\nhi\r\n"
            b"MSG s.z 1 $JS.ACK.S@x.C.1.1.1.1.1 2\r\nhi\r\n"
            b"MSG zz 3 $JS.ACK.S.C.1.1.1.1.1 2\r\nhi\r\n"
            b"PONG\r\n"
        )
    finally:
        w.close()
        c.close()


def test_async_info_follows_the_routes(node: Node) -> None:
    """A client that takes async INFO (protocol 1) hears of a peer's client URLs when its
    route registers, and of their going when it closes."""
    c = _client(node)
    w = _route(node)
    try:
        _sync(w)
        info = _async_info(c)
        assert info["connect_urls"] == [f"127.0.0.1:{node.port}", "127.0.0.1:1"]
        assert info["cluster"] == "c" and "nonce" not in info
        w.close()
        assert _async_info(c)["connect_urls"] == [f"127.0.0.1:{node.port}"]
    finally:
        w.close()
        c.close()


def _async_info(c: Wire) -> dict[str, object]:
    """The next INFO pushed to a client, past the one answering its first PING."""
    while True:
        info: dict[str, object] = json.loads(c.until(b"\r\n")[5:])
        if not info.get("connect_info"):
            return info


def test_wrong_cluster_name_is_rejected(node: Node) -> None:
    w = _route(node, {**FAKE_CONNECT, "cluster": "other"})
    try:
        out, closed = w.rest(3.0)
        assert (out, closed) == (b'-ERR \'Rejecting connection, cluster name "other" does not match "c"\'\r\n', True)
    finally:
        w.close()


@pytest.mark.parametrize(
    "garbage",
    [b"HELLO\r\n", b"RMSG $G\r\n", b"RS+ $G a b c d e\r\n", b"RMSG $G foo x\r\n"],
    ids=["unknown-op", "short-rmsg", "long-rs", "bad-size"],
)
def test_garbage_closes_the_route_and_costs_no_client(node: Node, garbage: bytes) -> None:
    c = _client(node)
    c.send(b"SUB keep 1\r\nPING\r\n")
    c.until(b"PONG\r\n")
    w = _route(node)
    try:
        _sync(w)
        w.send(garbage)
        out, closed = w.rest(2.0)
        assert closed
        assert out in (b"", b"-ERR 'Unknown Protocol Operation'\r\n")
        if garbage == b"HELLO\r\n":
            assert out == b"-ERR 'Unknown Protocol Operation'\r\n"
        c.send(b"PUB keep 2\r\nok\r\nPING\r\n")
        assert _no_info(c.until(b"PONG\r\n")) == b"MSG keep 1 2\r\nok\r\nPONG\r\n"
    finally:
        w.close()
        c.close()


def test_route_closing_inside_a_message_costs_no_client(node: Node) -> None:
    c = _client(node)
    c.send(b"SUB foo 1\r\nPING\r\n")
    c.until(b"PONG\r\n")
    w = _route(node)
    _sync(w)
    w.send(b"RS+ $G foo\r\nRMSG $G foo 10\r\nabc")
    time.sleep(0.1)
    w.close()
    time.sleep(0.2)
    try:
        c.send(b"PUB foo 2\r\nok\r\nPING\r\n")
        assert _no_info(c.until(b"PONG\r\n")) == b"MSG foo 1 2\r\nok\r\nPONG\r\n"  # the half message never arrives
        c.send(b"PUB foo.none 0\r\n\r\nPING\r\n")
        assert _no_info(c.until(b"PONG\r\n")) == b"PONG\r\n"
    finally:
        c.close()


@pytest.mark.parametrize("kind", KINDS)
def test_route_credentials(kind: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "server.conf"
        conf.write_text(
            'cluster {\n  name: c\n  listen: "127.0.0.1:-1"\n  authorization { user: ru, password: rp }\n}\n'
        )
        n = start_node(_kind(kind), extra=["-c", str(conf)], flags=False)
        try:
            info = json.loads(Wire(n.route_port).until(b"\r\n")[5:])
            assert info.get("auth_required") is True
            w = _route(n, {**FAKE_CONNECT, "user": "ru", "pass": "wrong"})
            out, closed = w.rest(3.0)
            assert (out, closed) == (b"-ERR 'Authorization Violation'\r\n", True)
            ok = _route(n, {**FAKE_CONNECT, "user": "ru", "pass": "rp"})
            try:
                assert _sync(ok) == []
            finally:
                ok.close()
        finally:
            n.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_routes_need_a_cluster_port(kind: str) -> None:
    program = [sys.executable, "-m", "jsemu", "serve"] if _kind(kind) == "jsemu" else [nats_server_binary()]
    proc = subprocess.run(
        [*program, "-p", "-1", "--routes", "nats://127.0.0.1:4248"],
        check=False,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert (
        proc.stderr.strip().splitlines()[-1]
        == "nats-server: solicited routes require cluster capabilities, e.g. --cluster"
    )
    assert proc.returncode == 1


@pytest.mark.parametrize("kind", KINDS)
def test_no_advertise(kind: str) -> None:
    """``--no_advertise``: the route INFO carries no client URLs, and a peer's URLs never
    reach this server's clients."""
    n = start_node(_kind(kind), extra=["--no_advertise"])
    try:
        first = Wire(n.route_port)
        assert "connect_urls" not in json.loads(first.until(b"\r\n")[5:])
        first.close()
        c = _client(n)
        w = _route(n)
        try:
            _sync(w)
            time.sleep(0.2)
            c.send(b"PING\r\n")
            frames = c.until(b"PONG\r\n")
            infos = [json.loads(line[5:]) for line in frames.split(b"\r\n") if line.startswith(b"INFO ")]
            assert all(i.get("connect_info") and "connect_urls" not in i for i in infos)
        finally:
            w.close()
            c.close()
    finally:
        n.stop()


def test_message_to_the_route_and_a_local_subscriber(node: Node) -> None:
    """One publish that a route and a local client both want reaches both, once each."""
    w = _route(node)
    sub, pub = _client(node), _client(node)
    try:
        _sync(w)
        w.send(b"RS+ $G both\r\n")
        _sync(w)
        sub.send(b"SUB both 1\r\nPING\r\n")
        sub.until(b"PONG\r\n")
        pub.send(b"PUB both 2\r\nok\r\nPING\r\n")
        pub.until(b"PONG\r\n")
        assert w.until(b"ok\r\n").endswith(b"RMSG $G both 2\r\nok\r\n")
        sub.send(b"PING\r\n")
        assert _no_info(sub.until(b"PONG\r\n")) == b"MSG both 1 2\r\nok\r\nPONG\r\n"
    finally:
        w.close()
        sub.close()
        pub.close()
