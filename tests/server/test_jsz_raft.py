"""``/jsz?raft=true`` and ``$SYS.REQ.SERVER.<id>.JSZ`` ``{"raft":true}`` on a standalone server,
and /jsz's flags as ``decodeBool`` reads them, side by side with nats-server 2.15.1.

Captured on the binary: standalone, ``raft`` adds only ``streams_leader`` after ``streams`` and
``consumers_leader`` after ``consumers`` (every stream and consumer: none has a Raft node;
left out when 0); no ``stream_raft_group`` or ``consumer_raft_groups`` in the details. A flag
that is not a Go bool (``raft=x``, ``streams=yes``) is a text/plain 400 naming the first bad
one in HandleJsz's order (accounts, streams, consumers, direct-consumers, config, offset,
limit, leader-only, raft, stream-leader-only).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import nats
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.js.api import StorageType

from tests.support.servers import KINDS, RealServer

CONF = """
server_name: srv-jsz
http: "127.0.0.1:-1"
accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  A: { users: [ {user: a, password: a} ], jetstream: enabled }
}
system_account: SYS
"""
FLAGS = ("accounts", "streams", "consumers", "direct-consumers", "config", "leader-only", "raft", "stream-leader-only")
#: Top-level keys whose values are compared (the rest: keys and order only).
COUNTS = ("streams", "streams_leader", "consumers", "consumers_leader", "messages", "accounts", "total")


async def _assets(port: int) -> None:
    nc = await nats.connect(f"nats://a:a@127.0.0.1:{port}")
    js = nc.jetstream()
    await js.add_stream(name="F", subjects=["f"])
    await js.add_stream(name="M", subjects=["m"], storage=StorageType.MEMORY)
    await js.add_consumer("F", durable_name="CF")
    await nc.close()


class _Server:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.proc = RealServer(jetstream=True, jsemu_process=kind == "jsemu", conf_text=CONF)
        asyncio.run(_assets(self.proc.port))

    def get(self, query: str) -> tuple[int, Any]:
        """(status, the page's key order and counts, or the 400's text)."""
        try:
            with urllib.request.urlopen(self.proc.monitor_url + "/jsz" + query, timeout=5) as resp:
                return resp.status, _summary(json.loads(resp.read()))
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def ask(self, body: dict[str, Any]) -> Any:
        return asyncio.run(self._ask(body))

    async def _ask(self, body: dict[str, Any]) -> Any:
        nc = await nats.connect(f"nats://sys:sys@127.0.0.1:{self.proc.port}")
        try:
            msg = await nc.request("$SYS.REQ.SERVER.PING.JSZ", json.dumps(body).encode(), timeout=5)
            return _summary(json.loads(msg.data)["data"])
        finally:
            await nc.close()


def _summary(page: dict[str, Any]) -> Any:
    details = [  # nats-server lists streams in Go map order
        sorted((s["name"], sorted(s)) for s in detail.get("stream_detail", []))
        for detail in page.get("account_details", [])
    ]
    return list(page), {key: page[key] for key in COUNTS if key in page}, details


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, _Server]]:
    started: list[_Server] = []
    try:
        for kind in KINDS:
            started.append(_Server(kind))
        yield {server.kind: server for server in started}
    finally:
        for server in started:
            server.proc.stop()


CASES = [
    "?raft=true",
    "?raft=1&accounts=true&streams=true&consumers=true",
    "?acc=A&raft=true&streams=true&consumers=true&config=true",
    "?raft=false",
    "?raft=x",
    "?raft=x&streams=yes",
    "?stream-leader-only=x&raft=x",
    "?raft=x&limit=y",
]


@pytest.mark.parametrize("query", CASES)
def test_jsz_raft_cases(servers: dict[str, _Server], query: str) -> None:
    assert servers["jsemu"].get(query) == servers["real"].get(query)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.dictionaries(
        st.sampled_from([*FLAGS, "offset", "limit"]),
        st.sampled_from(["true", "false", "1", "0", "T", "yes", "x", "", "2", "-1"]),
        max_size=4,
    )
)
def test_jsz_flags_generated(servers: dict[str, _Server], query: dict[str, str]) -> None:
    target = "?" + urllib.parse.urlencode(query) if query else ""
    assert servers["jsemu"].get(target) == servers["real"].get(target), target


@pytest.mark.parametrize(
    "body",
    [{"raft": True}, {"raft": True, "accounts": True, "streams": True, "consumer": True}, {"raft": False}],
    ids=["raft", "raft-details", "no-raft"],
)
def test_sys_jsz_raft(servers: dict[str, _Server], body: dict[str, Any]) -> None:
    assert servers["jsemu"].ask(body) == servers["real"].ask(body)


def test_jsz_raft_without_consumers() -> None:
    """Streams but no consumer: ``consumers_leader`` (0) is left out, ``streams_leader`` not."""
    seen = {}
    for kind in KINDS:
        proc = RealServer(jetstream=True, jsemu_process=kind == "jsemu", config={"http_port": -1})
        try:

            async def make(port: int = proc.port) -> None:
                nc = await nats.connect(f"nats://127.0.0.1:{port}")
                await nc.jetstream().add_stream(name="S", subjects=["s"])
                await nc.close()

            asyncio.run(make())
            with urllib.request.urlopen(proc.monitor_url + "/jsz?raft=true", timeout=5) as resp:
                seen[kind] = _summary(json.loads(resp.read()))
        finally:
            proc.stop()
    assert seen["jsemu"] == seen["real"]
    assert "consumers_leader" not in seen["real"][0]
