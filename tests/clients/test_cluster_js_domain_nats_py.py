"""A JetStream domain (``jetstream { domain: X }``) in a cluster of processes, seen by nats-py
through every node: ``$JS.X.API.>`` reaches the cluster's JetStream whichever node the client
is on, as on nats-server (every server of a domain maps ``$JS.X.API.>`` onto the JetStream API;
in a jsemu cluster the metadata leader answers it, ``jsemu/server/meta_leader.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from nats.js.api import StreamConfig
from support.cluster import Node, first_fetch, first_publish, start_js_cluster, stop_cluster
from support.servers import KINDS


@pytest.fixture(scope="module", params=KINDS)
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Node]]:
    conf: Path = tmp_path_factory.mktemp("domain") / "d.conf"
    conf.write_text("jetstream { domain: X }\n")
    nodes = start_js_cluster("jsemu" if request.param == "jsemu" else "real", extra=["-c", str(conf)])
    yield nodes
    stop_cluster(nodes)


async def test_domain_api_through_every_node(cluster: list[Node]) -> None:
    ncs = [await nats.connect(node.url) for node in cluster]
    try:
        first = ncs[0].jetstream(domain="X")
        await first.add_stream(StreamConfig(name="DOM", subjects=["dom.>"]))
        for i, nc in enumerate(ncs):
            js = nc.jetstream(domain="X")
            info = await js.account_info()
            assert info.domain == "X"
            ack = await first_publish(js, f"dom.{i}", b"m")
            assert (ack.stream, ack.seq, ack.domain) == ("DOM", i + 1, "X")
            assert (await js.stream_info("DOM")).state.messages == i + 1
        sub = await ncs[2].jetstream(domain="X").pull_subscribe("dom.>", "w", stream="DOM")
        msgs = await first_fetch(sub, 3)
        assert [m.subject for m in msgs] == ["dom.0", "dom.1", "dom.2"]
        for m in msgs:
            await m.ack_sync()
        raw = await ncs[1].request("$JS.X.API.CONSUMER.INFO.DOM.w", b"", timeout=5)
        assert json.loads(raw.data)["ack_floor"]["stream_seq"] == 3
    finally:
        for nc in ncs:
            await nc.close()
