"""N server processes in one cluster, started as client test harnesses start them.

``start_cluster(kinds)`` starts one process per entry of ``kinds`` (``"jsemu"`` for ``jsemu
serve``, ``"real"`` for nats-server) with ``-p -1 --cluster nats://127.0.0.1:-1 --cluster_name
c -m -1``, the later ones with ``--routes`` to the first, and waits until every node's
``/routez`` shows a route to each other node. A mixed list makes a mixed cluster.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nats.errors import NoRespondersError
from nats.js.errors import NoStreamResponseError, ServiceUnavailableError

from .servers import nats_server_binary

if TYPE_CHECKING:
    from nats.aio.msg import Msg
    from nats.js.api import PubAck
    from nats.js.client import JetStreamContext

_CLIENT = re.compile(r"Listening for client connections on (?:[^\s:]+|\[[^\]]+\]):(\d+)")
_ROUTE = re.compile(r"Listening for route connections on (?:[^\s:]+|\[[^\]]+\]):(\d+)")
_HTTP = re.compile(r"Starting http monitor on (?:[^\s:]+|\[[^\]]+\]):(\d+)")


@dataclass
class Node:
    kind: str
    proc: subprocess.Popen[str]
    port: int = 0
    route_port: int = 0
    http_port: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def route_url(self) -> str:
        return f"nats://127.0.0.1:{self.route_port}"

    def get(self, path: str) -> dict[str, object]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/{path}", timeout=5) as resp:
            data: dict[str, object] = json.load(resp)
            return data

    def peers(self) -> int:
        """How many other servers this one has routes to (nats-server pools several routes
        per peer, one more for the system account: ``num_routes`` counts them all)."""
        routes = self.get("routez")["routes"] or []
        return len({r["remote_id"] for r in routes})  # type: ignore[attr-defined,index]

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start_node(
    kind: str,
    routes: list[str] = (),  # type: ignore[assignment]
    extra: list[str] = (),  # type: ignore[assignment]
    flags: bool = True,
    jetstream: bool = False,
) -> Node:
    """One process; ``flags=False`` leaves the cluster to a configuration file in ``extra``
    (nats-server's ``--cluster`` flag replaces the file's whole ``cluster`` block)."""
    program = [sys.executable, "-m", "jsemu", "serve"] if kind == "jsemu" else [nats_server_binary()]
    if kind == "jsemu" and not jetstream:
        program.append("--no-jetstream")
    args = [*program, "-a", "127.0.0.1", "-p", "-1", "-m", "-1"]
    if flags:
        args += ["--cluster", "nats://127.0.0.1:-1", "--cluster_name", "c"]
    args += extra
    if routes:
        args += ["--routes", ",".join(routes)]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    node = Node(kind, proc)
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        said_ready = False
        for line in proc.stderr:
            node.lines.append(line)
            for pattern, attr in ((_CLIENT, "port"), (_ROUTE, "route_port"), (_HTTP, "http_port")):
                m = pattern.search(line)
                if m:
                    setattr(node, attr, int(m.group(1)))
            said_ready = said_ready or "Server is ready" in line  # signal handlers are in place
            if said_ready and node.port and node.route_port and node.http_port:
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(20) or not (node.port and node.route_port and node.http_port):
        node.stop()
        raise RuntimeError(f"{kind} did not start:\n" + "".join(node.lines))
    return node


def wait_routes(nodes: list[Node], timeout: float = 15.0) -> None:
    """Until each node has a route to every other one."""
    deadline = time.monotonic() + timeout
    want = len(nodes) - 1
    while time.monotonic() < deadline:
        if all(n.peers() == want for n in nodes):
            return
        time.sleep(0.05)
    raise RuntimeError("routes did not come up: " + ", ".join(str(n.peers()) for n in nodes))


def start_cluster(kinds: list[str], extra: list[str] = (), jetstream: bool = False) -> list[Node]:  # type: ignore[assignment]
    """jsemu nodes run without JetStream unless ``jetstream`` (nats-server's need ``-js``
    and a JetStream cluster, which is not what these clusters test)."""
    nodes: list[Node] = []
    try:
        first = start_node(kinds[0], extra=list(extra), jetstream=jetstream)
        nodes.append(first)
        for kind in kinds[1:]:
            nodes.append(start_node(kind, [first.route_url], list(extra), jetstream=jetstream))
        wait_routes(nodes)
    except BaseException:
        for node in nodes:
            node.stop()
        raise
    return nodes


def stop_cluster(nodes: list[Node]) -> None:
    for node in nodes:
        node.stop()


def free_port() -> int:
    """A free port below the kernel's ephemeral range: a port the kernel hands out (as for
    another server's ``-p -1`` or ``-m -1``) could be taken between this check and its use."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(10000, max(low, 10001))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def js_ready(node: Node, timeout: float = 15.0) -> None:
    """Until ``$JS.API.INFO`` through ``node`` gets an answer (a real cluster's first metadata
    leader takes a few seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.create_connection(("127.0.0.1", node.port), timeout=2) as sock:
            sock.sendall(b'CONNECT {"verbose":false}\r\nSUB r 1\r\nPUB $JS.API.INFO r 0\r\n\r\n')
            buf = b""
            sock.settimeout(0.5)
            try:
                while b"account_info_response" not in buf:
                    data = sock.recv(65536)
                    if not data:
                        break
                    buf += data
            except TimeoutError:
                pass
            if b"account_info_response" in buf and b'"error"' not in buf:
                return
        time.sleep(0.2)
    raise RuntimeError(f"JetStream did not answer through {node.url}")


def start_js_cluster(kind: str, names: tuple[str, ...] = ("n1", "n2", "n3"), extra: list[str] = ()) -> list[Node]:  # type: ignore[assignment]
    """A JetStream cluster of ``len(names)`` processes named ``names`` (cluster ``c``), each
    with its own store directory, ready when every node answers ``$JS.API.INFO``.
    nats-server's JetStream cluster needs every node's routes configured (the first's too), so
    its nodes get fixed cluster ports and the full list; jsemu's start as ``start_cluster``'s.
    ``extra`` goes to every node (``-c FILE`` for a ``jetstream { domain }``, say)."""
    nodes: list[Node] = []
    dirs = [tempfile.mkdtemp(prefix="jsx-") for _ in names]
    try:
        if kind == "real":
            ports = [free_port() for _ in names]
            routes = [f"nats://127.0.0.1:{p}" for p in ports]
            for name, port, sd in zip(names, ports, dirs, strict=True):
                args = ["-js", "-sd", sd, "-n", name, "--cluster", f"nats://127.0.0.1:{port}", "--cluster_name", "c"]
                nodes.append(start_node(kind, routes, [*extra, *args], flags=False))
        else:
            for i, (name, sd) in enumerate(zip(names, dirs, strict=True)):
                routes = [nodes[0].route_url] if i else []
                nodes.append(start_node(kind, routes, [*extra, "-js", "-sd", sd, "-n", name], jetstream=True))
        wait_routes(nodes)
        for node in nodes:
            js_ready(node)
    except BaseException:
        stop_cluster(nodes)
        raise
    return nodes


async def first_publish(
    js: JetStreamContext, subject: str, data: bytes, headers: dict[str, str] | None = None
) -> PubAck:
    """A publish through another node right after the stream was created: the stream's
    interest reaches that node's routes a moment after the create's reply, on nats-server as on
    jsemu, and until then the publish hears no responders (nothing is stored), so it is retried
    for up to 5 s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while True:
        try:
            return await js.publish(subject, data, headers=headers)
        except (NoStreamResponseError, NoRespondersError):
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)


async def first_fetch(sub: JetStreamContext.PullSubscription, batch: int, timeout: float = 5.0) -> list[Msg]:
    """A fetch through another node right after the consumer was created: the consumer's
    ``MSG.NEXT`` interest reaches that node's routes a moment after the create's reply (nats-server
    under load took long enough for nats-py to hear no responders, a 503), so a 503 is retried
    for up to 5 s; nothing is delivered by a request nobody heard."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while True:
        try:
            return await sub.fetch(batch, timeout=timeout)
        except ServiceUnavailableError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)
