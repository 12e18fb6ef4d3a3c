"""``$SYS.REQ.SERVER.PING`` in a cluster of processes: one answer per server, as ``nats server
list`` collects them (a request with a reply inbox, answers gathered until as many as expected
came or a timeout), and the filters that pick one server out of the cluster.

The same flow runs on a cluster of nats-servers (the yardstick), of jsemu processes, and on a
mixed one (jsemu's system requests cross nats-server's routes and back)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from tests.support.cluster import start_cluster, stop_cluster

CONF = """
accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  A: { users: [ {user: a, password: a} ] }
}
system_account: SYS
"""


async def _collect(nc: Client, subject: str, body: bytes = b"", expect: int = 0, wait: float = 1.0) -> list[Any]:
    """Answers to one request: until ``expect`` came (then a short while for any extra), or
    ``wait`` seconds when none is expected."""
    inbox = nc.new_inbox()
    got: list[Any] = []
    enough = asyncio.Event()

    async def seen(msg: Any) -> None:
        got.append(json.loads(msg.data))
        if expect and len(got) >= expect:
            enough.set()

    sub = await nc.subscribe(inbox, cb=seen)
    await nc.publish(subject, body, reply=inbox)
    if expect:
        try:
            await asyncio.wait_for(enough.wait(), 10)
        except TimeoutError:
            pass
        await asyncio.sleep(0.3)
    else:
        await asyncio.sleep(wait)
    await sub.unsubscribe()
    return got


@pytest.mark.parametrize(
    "kinds", [["real"] * 3, ["jsemu"] * 3, ["jsemu", "real", "jsemu"]], ids=["real", "jsemu", "mixed"]
)
async def test_ping_gathers_one_answer_per_server(kinds: list[str], tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(CONF)
    nodes = await asyncio.to_thread(start_cluster, kinds, ["-c", str(conf)])
    try:
        ids = [str(node.get("varz")["server_id"]) for node in nodes]
        listed = [r for r in nodes[0].get("routez?subs=1")["routes"] if r.get("subscriptions_list")]  # type: ignore[attr-defined]
        detailed = [r for r in nodes[0].get("routez?subs=detail")["routes"] if r.get("subscriptions_list_detail")]  # type: ignore[attr-defined]
        names = [str(node.get("varz")["server_name"]) for node in nodes]
        nc = await nats.connect(nodes[0].url, user="sys", password="sys")
        try:
            # Interest in $SYS.REQ.SERVER.PING reaches the first node a moment after the routes.
            for _ in range(50):
                pings = await _collect(nc, "$SYS.REQ.SERVER.PING", expect=3)
                if len(pings) == 3:
                    break
            subsz = await _collect(nc, "$SYS.REQ.SERVER.PING.SUBSZ", expect=3)
            one = json.dumps({"server_name": names[2], "exact_match": True}).encode()
            picked = await _collect(nc, "$SYS.REQ.SERVER.PING.VARZ", one, wait=1.0)
            in_cluster = await _collect(nc, "$SYS.REQ.SERVER.PING.ACCOUNTZ", b'{"cluster": "c"}', expect=3)
            elsewhere = await _collect(nc, "$SYS.REQ.SERVER.PING.ACCOUNTZ", b'{"cluster": "d"}', wait=1.0)
            leader_only = await _collect(nc, "$SYS.REQ.SERVER.PING.JSZ", b'{"leader_only": true}', wait=1.0)
            by_id = [await _collect(nc, f"$SYS.REQ.SERVER.{server_id}.IDZ", expect=1) for server_id in ids]
        finally:
            await nc.close()
    finally:
        await asyncio.to_thread(stop_cluster, nodes)
    # The system account's interest crosses the routes, and /routez?subs lists it.
    assert listed
    assert {key for r in detailed for d in r["subscriptions_list_detail"] for key in d} == {
        "subject",
        "sid",
        "msgs",
        "cid",
    }
    assert sorted(p["server"]["id"] for p in pings) == sorted(ids)
    assert all(p["statsz"]["active_servers"] >= 1 for p in pings)
    assert sorted(a["data"]["server_id"] for a in subsz) == sorted(ids)
    assert [(a["server"]["id"], a["data"]["server_name"]) for a in picked] == [(ids[2], names[2])]
    assert sorted(a["server"]["id"] for a in in_cluster) == sorted(ids)
    assert elsewhere == []
    assert leader_only == []  # no JetStream on these servers: no metadata leader to answer
    assert [[a["id"] for a in answers] for answers in by_id] == [[server_id] for server_id in ids]
