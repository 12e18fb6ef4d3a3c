"""Clusters of server processes seen by nats.js v3: the same scenarios on three nats-server
processes and on three ``jsemu serve`` processes (``js/cluster_check.mjs``, one mode per
scenario; the nats-py versions are ``test_cluster_nats_py.py`` and
``test_cluster_jetstream_nats_py.py``).

Each scenario's JSON result must be the same outcome on both kinds: what differs between two
clusters (ports, the metadata leader's name) is checked against the cluster it ran on. The core
and JetStream clusters are shared by the module; failover kills a node, so it starts its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.cluster import Node, start_cluster, start_js_cluster, stop_cluster
from support.servers import KINDS

from . import test_kv_nats_js as kv_nats_js

node = kv_nats_js.node
__all__ = ["node"]  # fixtures

SCRIPT = "cluster_check.mjs"
NAMES = ("n1", "n2", "n3")


def _kind(param: str) -> str:
    return "jsemu" if param == "jsemu" else "real"


@pytest.fixture(scope="module", params=KINDS)
def core_cluster(request: pytest.FixtureRequest) -> Iterator[list[Node]]:
    nodes = start_cluster([_kind(request.param)] * 3)
    yield nodes
    stop_cluster(nodes)


@pytest.fixture(scope="module", params=KINDS)
def js_cluster(request: pytest.FixtureRequest) -> Iterator[list[Node]]:
    nodes = start_js_cluster(_kind(request.param), NAMES)
    yield nodes
    stop_cluster(nodes)


async def test_discovery_pubsub_queue_and_request_reply(node: str, core_cluster: list[Node]) -> None:
    result = await kv_nats_js.run_script(node, SCRIPT, "core", *(n.url for n in core_cluster))
    ports = sorted(n.port for n in core_cluster)
    others = sorted(n.port for n in core_cluster[1:])
    assert result == {
        "discovery": {"cluster": "c", "connectUrls": ports, "pool": ports, "gossiped": others},
        "pubsub": sorted(
            json.dumps(m, separators=(",", ":"))
            for m in [["orders.1", "one", None]] * 2 + [["orders.2", "", "v"]] * 2  # type: ignore[operator]
        ),
        "queue": {"total": 200, "everyMember": True},
        "reply": "re:ping",
        "noResponders": ["RequestError", "NoResponders"],
    }


@pytest.mark.parametrize("kind", KINDS)
async def test_failover_to_another_node(node: str, kind: str) -> None:
    """The client's node is killed: it reconnects to another node it learned from
    ``connect_urls``, sends what it published while away, and its subscription keeps receiving."""
    nodes = start_cluster([_kind(kind)] * 3)
    try:
        victim, other = nodes[1], nodes[0]
        out = await _run_until_ready(node, nodes, "failover", victim.url, other.url)
        assert out == {
            "events": ["disconnect", "reconnecting", "reconnect"],
            "discovered": 2,
            "reconnectedToVictim": False,
            "received": ["buffered", "from-other"],
            "pool": sorted(n.port for n in nodes),  # the URL it was given stays, gossiped or not
            "gossiped": sorted(n.port for n in nodes if n is not victim),
            "connectUrls": sorted(n.port for n in nodes if n is not victim),
        }
    finally:
        stop_cluster(nodes)


@pytest.mark.parametrize("kind", KINDS)
async def test_pull_consume_carries_on_after_its_node_is_killed(node: str, kind: str) -> None:
    """A client consuming from a node that leads neither the metadata (jsemu's JetStream is its
    metadata leader's) nor the stream is moved to another node by the node's death; its
    ``consume()`` pulls again there and gets what is published after."""
    nodes = start_js_cluster(_kind(kind), NAMES)
    try:
        meta = nodes[0].get("jsz").get("meta_cluster") if kind != "jsemu" else {"leader": "n1"}
        urls = [n.url for n in nodes]
        out = await _run_until_ready(node, nodes, "jsfailover", *urls, meta["leader"], "x")  # type: ignore[index]
        assert out == {
            "events": ["disconnect", "reconnect"],
            "received": [[str(i), f"m{i}", i, True] for i in (1, 2, 3, 4)],
            "consumerInfo": {"delivered": 4, "ackFloor": 4, "ackPending": 0},
        }
    finally:
        stop_cluster(nodes)


async def _run_until_ready(node: str, nodes: list[Node], *args: str) -> dict[str, Any]:
    """Run the script with ``args``; kill the node it names when it says ``ready <port>``; its
    JSON result."""
    proc = await asyncio.create_subprocess_exec(
        node,
        str(kv_nats_js.JS_DIR / SCRIPT),
        *args,
        cwd=kv_nats_js.JS_DIR,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        line = await asyncio.wait_for(proc.stderr.readline(), 15)
        assert line.startswith(b"ready "), line + await proc.stderr.read()
        victim = next(n for n in nodes if n.port == int(line.split()[1]))
        victim.stop(kill=True)
        out, err = await asyncio.wait_for(proc.communicate(), 20)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


async def test_kv_stream_pull_and_ordered_consumers_across_nodes(node: str, js_cluster: list[Node]) -> None:
    result: dict[str, Any] = await kv_nats_js.run_script(node, SCRIPT, "js", *(n.url for n in js_cluster), "a")
    stream_leader = result["streamInfo"].pop("leader")
    consumer_leader = result["consumerInfo"].pop("leader")
    assert stream_leader in NAMES and consumer_leader in NAMES
    messages = [[str(i), f"m{i}", i + 1] for i in range(4)]
    assert result == {
        "kvGet": {"key": "k", "value": "v1", "revision": 1, "operation": "PUT"},
        "kvWatch": [
            {"key": "k", "value": "v1", "revision": 1, "operation": "PUT"},
            {"key": "k", "value": "v2", "revision": 2, "operation": "PUT"},
        ],
        "acks": [[True, i + 1] for i in range(4)],
        "streamInfo": {"messages": 4, "clusterKeys": ["leader", "name"], "clusterName": "c"},
        "fetched": [[*m, True] for m in messages[:2]],
        "consumed": [[*m, True] for m in messages[2:]],
        "consumerInfo": {"delivered": 4, "ackFloor": 4, "ackPending": 0, "pending": 0, "clusterName": "c"},
        "ordered": [*messages, ["late", "late", 5]],
        "orderedFetched": [*messages, ["late", "late", 5]],
        "late": [["late", "late", 5, True]],
        "emptyFetch": [],
        "emptyNext": None,
        "idleStatuses": [["heartbeat", True], ["heartbeats_missed", False]],
        "nak": [["nak", "again", 6], 1, ["nak", "again", 6], 2, True, True],
        "nakInfo": {"ackFloor": 6, "ackPending": 0, "redelivered": 0},
    }
