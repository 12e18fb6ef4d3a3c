"""A simulated 5-node jsemu cluster with a system account and account ``A`` holding an R3
stream ``S`` of five messages and a durable ``D``: the set-up of the cluster-management tests
(server remove, stream moves), each of which compares against a real 5-node cluster."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import nats

import jsemu
from jsemu.config.server_config import load_config

CONF = """
jetstream: enabled
accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  A: { users: [ {user: a, password: a} ], jetstream: enabled }
}
system_account: SYS
"""


@asynccontextmanager
async def five_nodes(tmp_path: Path) -> AsyncIterator[tuple[jsemu.Server, nats.NATS, nats.NATS]]:
    """The server, a client of account A and one of the system account."""
    conf = tmp_path / "server.conf"
    conf.write_text(CONF)
    options = jsemu.ServerOptions(cluster_size=5, cluster_name="c")
    load_config(conf, options)
    options.host, options.port = "127.0.0.1", 0
    async with jsemu.Server(options) as srv:
        a = await nats.connect(srv.url, user="a", password="a")
        sys = await nats.connect(srv.url, user="sys", password="sys")
        await a.request("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s"],"num_replicas":3}', timeout=2)
        for i in range(5):
            await a.request("s", b"m%d" % i, timeout=2)
        durable = b'{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}'
        await a.request("$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable, timeout=2)
        try:
            yield srv, a, sys
        finally:
            await a.close()
            await sys.close()


async def request_json(nc: nats.NATS, subject: str, body: bytes = b"") -> dict[str, Any]:
    reply: dict[str, Any] = json.loads((await nc.request(subject, body, timeout=2)).data)
    return reply
