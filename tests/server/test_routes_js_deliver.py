"""Consumer deliveries to a route, byte for byte: a raw socket plays a server of the cluster
with interest in a push consumer's deliver subject and in a pull request's inbox, against the
node that holds the stream in a real three-node JetStream cluster and in a jsemu one (its
metadata leader). Both send ``RMSG <account> <deliver subject> <ack reply>@<stored subject>``
(``HMSG`` with headers), as ``processMsgResults`` builds it; the receiving side is
``test_routes.py::test_js_deliveries_from_the_route``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from support.cluster import Node, start_js_cluster, stop_cluster
from support.servers import KINDS

from server.test_routes import Wire, _client, _route


@pytest.fixture(scope="module", params=KINDS)
def cluster(request: pytest.FixtureRequest) -> Iterator[list[Node]]:
    nodes = start_js_cluster("jsemu" if request.param == "jsemu" else "real")
    yield nodes
    stop_cluster(nodes)


def _api(c: Wire, subject: str, body: dict[str, object]) -> dict[str, object]:
    c.send(b"PUB %b r %d\r\n%b\r\n" % (subject.encode(), len(json.dumps(body)), json.dumps(body).encode()))
    line = c.until(b"\r\n")
    while not line.startswith(b"MSG r "):
        line = c.until(b"\r\n")
    payload = c.until(b"\r\n")[:-2]
    out: dict[str, object] = json.loads(payload)
    return out


def test_consumer_deliveries_cross_the_route_as_reply_at_subject(cluster: list[Node]) -> None:
    c = _client(cluster[0])
    c.send(b"SUB r 1\r\n")
    created = _api(c, "$JS.API.STREAM.CREATE.D", {"name": "D", "subjects": ["d.>"]})
    c.close()
    leader = created["cluster"]["leader"]  # type: ignore[index]
    node = cluster[["n1", "n2", "n3"].index(leader)]  # the consumers run where the stream is
    w = _route(node)
    c = _client(node)
    try:
        w.send(b"RS+ $G dlv\r\nRS+ $G dlv2\r\nRS+ $G inbox.1\r\nPING\r\n")
        w.until(b"PONG\r\n")
        c.send(b"SUB r 1\r\n")
        for name, deliver, ack in (("C", "dlv", "explicit"), ("N", "dlv2", "none")):
            cfg = {"durable_name": name, "deliver_subject": deliver, "ack_policy": ack}
            assert "error" not in _api(c, f"$JS.API.CONSUMER.CREATE.D.{name}", {"stream_name": "D", "config": cfg})
        assert "error" not in _api(
            c,
            "$JS.API.CONSUMER.CREATE.D.P",
            {"stream_name": "D", "config": {"durable_name": "P", "ack_policy": "explicit"}},
        )
        c.send(b"HPUB d.x 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\nPUB d.y 2\r\nyo\r\n")
        c.send(b'PUB $JS.API.CONSUMER.MSG.NEXT.D.P inbox.1 11\r\n{"batch":1}\r\n')
        c.send(b"PING\r\n")
        c.until(b"PONG\r\n")
        frames, _ = w.rest(0.5)
        # The first delivery's pending count (last ack token) is 1 or 0: on nats-server the
        # consumer's goroutine may deliver d.x before d.y is stored.
        normalised = re.sub(rb"\.\d{19}\.", b".<ts>.", frames).replace(b"<ts>.0@d.x", b"<ts>.1@d.x")
        ops = [ln for ln in normalised.split(b"\r\n") if ln.startswith((b"RMSG", b"HMSG"))]
        assert sorted(ops) == sorted(
            [
                b"HMSG $G dlv $JS.ACK.D.C.1.1.1.<ts>.1@d.x 18 20",
                b"RMSG $G dlv $JS.ACK.D.C.1.2.2.<ts>.0@d.y 2",
                b"HMSG $G dlv2 $JS.ACK.D.N.1.1.1.<ts>.1@d.x 18 20",
                b"RMSG $G dlv2 $JS.ACK.D.N.1.2.2.<ts>.0@d.y 2",
                b"HMSG $G inbox.1 $JS.ACK.D.P.1.1.1.<ts>.1@d.x 18 20",
            ]
        )
        assert b"HMSG $G dlv $JS.ACK.D.C.1.1.1." in frames and b"@d.x 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n" in frames
    finally:
        w.close()
        c.close()
