"""Message tracing across a cluster of two processes, nats-server's and jsemu's side by side:
the origin's event (``hops``, an ``eg`` of kind 1 per route with its hop id), the message
crossing with ``Nats-Trace-Hop``, and the other server's own event (an ``in`` of kind 1 from
the route, its local egress); the two events race to the destination's subscriber."""

from __future__ import annotations

import time

from support.cluster import Node, start_node, stop_cluster, wait_routes

from .test_msg_trace import Client, hpub

DEST = [("Nats-Trace-Dest", "trace.x")]
CASES = [
    ("remote subscriber", hpub("remote.s", DEST), {"w1": 2, "w2": 1}),
    ("remote, trace only", hpub("remote.s", [*DEST, ("Nats-Trace-Only", "true")]), {"w1": 2}),
    ("remote queue group", hpub("q.s", DEST), {"w1": 2, "w2": 1}),
    ("local and remote", hpub("both.s", DEST), {"w1": 3, "w2": 1}),
    ("nobody", hpub("none.s", DEST), {"w1": 1}),
]


def _cluster_frames(kind: str) -> object:
    """Two processes of ``kind`` routed together (``n1``, ``n2``): what the cases give."""
    nodes: list[Node] = []
    try:
        nodes.append(start_node(kind, extra=["--server_name", "n1"]))
        nodes.append(start_node(kind, [nodes[0].route_url], ["--server_name", "n2"]))
        wait_routes(nodes)
        return _route_cids(_frames(nodes))
    finally:
        stop_cluster(nodes)


def _frames(nodes: list[Node]) -> dict[str, object]:
    from .test_msg_trace import _normal

    w1 = Client(nodes[0].port, "", {}, b"SUB trace.x 1\r\nSUB both.s 2\r\n", "w1")
    w2 = Client(nodes[1].port, "", {}, b"SUB remote.s 1\r\nSUB q.s grp 2\r\nSUB both.s 3\r\n", "w2")
    pub = Client(nodes[0].port, "", {}, b"", "pub")
    clients = {"w1": w1, "w2": w2, "pub": pub}
    # Each server numbers its own clients: w2's id on n2 may be w1's or pub's on n1.
    roles: dict[object, str] = {("n2" if role == "w2" else "n1", client.cid): role for role, client in clients.items()}
    # Interest crosses the route asynchronously: wait until the remote sees it.
    probe = b"PUB remote.s 0\r\n\r\n"
    for _ in range(100):
        pub.sock.sendall(probe)
        pub.drain()
        if w2.drain():
            break
    while True:  # a probe still crossing would land in the first case's frames
        time.sleep(0.2)
        if not w2.drain():
            break
    got: dict[str, object] = {}
    try:
        for name, data, expect in CASES:
            pub.sock.sendall(data)
            seen = {}
            for role, client in clients.items():
                frames = client.messages(expect.get(role, 0))
                if frames:
                    # The two servers' events race to the subscriber (each sends its own
                    # when done): compared in a fixed order.
                    seen[role] = sorted((_normal(f, roles, []) for f in frames), key=repr)
            got[name] = seen
    finally:
        for client in clients.values():
            client.sock.close()
    return got


def _route_cids(got: object) -> object:
    """Route connection ids differ between runs of one server too: blanked."""
    if isinstance(got, dict):
        return {k: ("ROUTE" if k == "cid" and got.get("kind") == 1 else _route_cids(v)) for k, v in got.items()}
    if isinstance(got, list):
        return [_route_cids(v) for v in got]
    return got


def test_trace_across_routes_as_nats_server() -> None:
    real = _cluster_frames("real")
    assert [e[2].get("hops") for e in real["remote subscriber"]["w1"]] == [None, 1]  # type: ignore[index]
    emu = _cluster_frames("jsemu")
    for name, _, _ in CASES:
        assert emu[name] == real[name], name  # type: ignore[index]
