"""jsemu-only: ``SERVER.REMOVE`` in a simulated 5-node cluster, against a real 5-node
nats-server 2.15.1 cluster (an R3 stream ``S`` in account ``A`` with five messages and a
durable ``D``; ``{"peer": <server>}`` asked by ``SYS``, no evacuation first):

- removing a server of the stream's group answers ``success``; the system account hears
  ``$JS.EVENT.ADVISORY.SERVER.REMOVED`` (type, id, timestamp, server, server_id, cluster); the
  stream's and the consumer's replicas on it move to a spare server (a stream leader on it
  hands over), every message stays; the meta group has four servers; asking again is 400/10044;
- removing the meta leader gets no reply; another server leads (``DOMAIN.LEADER_ELECTED``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest
from support.five_nodes import five_nodes
from support.five_nodes import request_json as _json

import jsemu
from jsemu.ids import get_hash

pytestmark = pytest.mark.fake_only

_T = "io.nats.jetstream.api.v1."
NOT_MEMBER = {"code": 400, "err_code": 10044, "description": "server is not a member of the cluster"}


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[jsemu.Server, nats.NATS, nats.NATS]]:
    async with five_nodes(tmp_path) as nodes:
        yield nodes


def _group(info: dict[str, Any]) -> set[str]:
    cl = info["cluster"]
    return {cl["leader"], *(r["name"] for r in cl["replicas"])}


async def test_removing_a_server_moves_its_replicas(cluster: tuple[jsemu.Server, nats.NATS, nats.NATS]) -> None:
    srv, a, sys = cluster
    removed: list[dict[str, Any]] = []

    async def seen(msg: Any) -> None:
        removed.append(json.loads(msg.data))

    await sys.subscribe("$JS.EVENT.ADVISORY.SERVER.REMOVED", cb=seen)
    await sys.flush()
    before = await _json(a, "$JS.API.STREAM.INFO.S")
    victim = next(n for n in sorted(_group(before)) if n != "n1")
    body = json.dumps({"peer": victim}).encode()
    assert await _json(sys, "$JS.API.SERVER.REMOVE", body) == {
        "type": _T + "meta_server_remove_response",
        "success": True,
    }
    info = await _json(a, "$JS.API.STREAM.INFO.S")
    assert victim not in _group(info) and len(_group(info)) == 3 and info["state"]["messages"] == 5
    consumer = await _json(a, "$JS.API.CONSUMER.INFO.S.D")
    assert victim not in _group(consumer) and _group(consumer) == _group(info)
    await sys.flush()
    await asyncio.sleep(0.05)
    [event] = removed
    assert list(event) == ["type", "id", "timestamp", "server", "server_id", "cluster"]
    assert event["type"] == "io.nats.jetstream.advisory.v1.server_removed"
    node = next(n for n in srv.nodes if n.name == victim)
    assert (event["server"], event["server_id"], event["cluster"]) == (victim, node.server_id, "c")
    assert (await _json(sys, "$JS.API.SERVER.REMOVE", body))["error"] == NOT_MEMBER
    # No new replica goes to the removed server: an R4 stream fits the four servers left.
    r4 = await _json(a, "$JS.API.STREAM.CREATE.R4", b'{"name":"R4","subjects":["r4"],"num_replicas":4}')
    assert victim not in _group(r4)


async def test_removing_the_meta_leader_gets_no_reply(cluster: tuple[jsemu.Server, nats.NATS, nats.NATS]) -> None:
    _srv, _a, sys = cluster
    elected: list[dict[str, Any]] = []

    async def seen(msg: Any) -> None:
        elected.append(json.loads(msg.data))

    await sys.subscribe("$JS.EVENT.ADVISORY.DOMAIN.LEADER_ELECTED", cb=seen)
    await sys.flush()
    with pytest.raises(nats.errors.TimeoutError):
        await sys.request("$JS.API.SERVER.REMOVE", b'{"peer":"n1"}', timeout=0.5)
    await sys.flush()
    await asyncio.sleep(0.05)
    [event] = elected
    assert event["leader"] != get_hash("n1") and "n1" not in {r["name"] for r in event["replicas"]}
    again = await _json(sys, "$JS.API.SERVER.REMOVE", b'{"peer":"n1"}')  # the new leader answers
    assert again["error"] == NOT_MEMBER
