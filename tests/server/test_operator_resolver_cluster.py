"""The NATS-based account resolver across a cluster of processes, side by side with a cluster
of nats-server 2.15.1 processes given the same operator, accounts and users (minted here).

Captured from nats-server first:
* an update pushed to one server reaches every server (the resolver's subscriptions cross
  routes): one answer per server, ``jwt updated`` from the full resolvers, ``jwt update cache
  skipped`` from a cache without the account; ``CLAIMS.LIST`` answers once per server,
  ``CLAIMS.LOOKUP`` once per full resolver (a JWT or an empty message), ``CLAIMS.PACK`` once
  (queue group ``responder``); ``CLAIMS.DELETE`` is refused by a full resolver without
  ``allow_delete`` and carried out by a cache (its file removed);
* a user of an account its server does not have waits for a lookup in the cluster: taken from
  another server's directory (and stored), refused at once when every server that could answer
  said it has none, refused after ``timeout`` when some server (a cache) never answers, and on a
  standalone server after ``timeout`` (default 1.9 s);
* a full resolver that started late gets the others' JWTs from ``CLAIMS.PACK`` within one
  ``interval`` (its ``limit`` still applies: the JWTs that do not fit are not taken);
* a cluster of jsemu and nats-server processes answers as one of nats-servers;
* a cache forgets a JWT ``ttl`` after its last use (the file goes, ``CLAIMS.LIST`` drops it),
  while users of the account it already runs still log in.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from support.cluster import Node, start_node, stop_cluster, wait_routes
from support.servers import KINDS

from jsemu.testing.operator import OperatorSetup


class Cluster:
    """Per-node configurations for one operator: ``conf(i, block)`` is node ``n<i>`` with the
    resolver ``block`` (``{dir}`` replaced by its own directory)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.setup = OperatorSetup(tmp / "creds")
        self.setup.user("admin", "SYS")
        self.names = {self.setup.system.public_key: "SYS", self.setup.operator.public_key: "OP"}

    def account(self, name: str) -> str:
        account = self.setup.account(name)
        self.names[account.public_key] = name
        self.setup.user(f"u{name}", name)
        return account.jwt

    def show(self, text: str) -> str:
        for key, name in self.names.items():
            text = text.replace(key, name)
        return text

    def conf(self, i: int, block: str) -> list[str]:
        system = self.setup.accounts["SYS"]
        path = self.tmp / f"n{i}.conf"
        path.write_text(
            f"server_name: n{i}\noperator: {self.setup.operator_jwt}\nsystem_account: {system.public_key}\n"
            f"resolver: {{ {block.replace('{dir}', str(self.tmp / f'jwt{i}'))} }}\n"
            f"resolver_preload: {{ {system.public_key}: {system.jwt} }}\n"
        )
        return ["-c", str(path)]

    def files(self, i: int) -> list[str]:
        directory = self.tmp / f"jwt{i}"
        return sorted(self.show(f) for f in os.listdir(directory)) if directory.exists() else []

    def creds(self, user: str) -> str:
        return str(self.setup.users[user].creds_path)

    async def login(self, node: Node, user: str) -> tuple[str, float]:
        """What the server answers ``user``'s CONNECT and PING with (``PONG`` or its ``-ERR``),
        on a raw socket, and how long the answer took."""
        minted = self.setup.users[user]
        reader, writer = await asyncio.open_connection("127.0.0.1", node.port)
        try:
            info = json.loads((await reader.readline()).split(b" ", 1)[1])
            sig = base64.urlsafe_b64encode(minted.key.sign(info["nonce"].encode())).rstrip(b"=").decode()
            connect = {"jwt": minted.jwt, "sig": sig, "verbose": False, "pedantic": False, "protocol": 1}
            start = time.monotonic()
            writer.write(b"CONNECT %s\r\nPING\r\n" % json.dumps(connect).encode())
            line = b"PING"
            while line.strip() == b"PING":  # the server's first PING can come while it waits
                line = await asyncio.wait_for(reader.readline(), 10)
            return line.decode().strip(), time.monotonic() - start
        finally:
            writer.close()

    async def gather(self, nc: Any, subject: str, body: str | bytes = b"", wait: float = 1.0) -> list[Any]:
        """Every answer to one request within ``wait``: JSON ones by server name, others as
        an empty message, a JWT or a PACK line."""
        inbox = nc.new_inbox()
        got: list[bytes] = []

        async def seen(msg: Any) -> None:
            got.append(msg.data)

        sub = await nc.subscribe(inbox, cb=seen)
        await nc.publish(subject, body.encode() if isinstance(body, str) else body, reply=inbox)
        await asyncio.sleep(wait)
        await sub.unsubscribe()
        out: list[Any] = []
        for data in got:
            text = data.decode()
            if text.startswith("{"):
                answer = json.loads(text)
                answer["server"] = answer["server"]["name"]
                if isinstance(answer.get("data"), list):
                    answer["data"] = sorted(self.show(key) for key in answer["data"])
                out.append(self.show(json.dumps(answer, sort_keys=True)))
            elif "|" in text:
                out.append(self.show(text.split("|")[0]) + "|a JWT")
            else:
                out.append("a JWT" if text else "empty")
        return sorted(out)


def start(kind: str, confs: list[list[str]]) -> list[Node]:
    """A cluster of one kind, or ``mixed``: jsemu, nats-server, jsemu, ..."""
    nodes: list[Node] = []
    try:
        for i, conf in enumerate(confs):
            one = ("jsemu", "real")[i % 2] if kind == "mixed" else kind
            nodes.append(start_node(one, [nodes[0].route_url] if nodes else [], conf))
        wait_routes(nodes)
    except BaseException:
        stop_cluster(nodes)
        raise
    return nodes


async def both(flow: Any, tmp: Path) -> dict[str, Any]:
    """``flow(kind, directory)`` on a cluster of each kind at once (separate processes)."""
    return dict(zip(KINDS, await asyncio.gather(*(flow(kind, tmp / kind) for kind in KINDS)), strict=True))


async def until(check: Any, timeout: float = 8.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(0.1)
    return bool(check())


async def updates_and_lookups(kind: str, tmp: Path) -> list[Any]:
    c = Cluster(tmp)
    a_jwt = c.account("A")
    c.account("Z")  # never pushed anywhere
    nodes = await asyncio.to_thread(
        start,
        kind,
        [
            c.conf(1, 'type: full, dir: "{dir}", timeout: "1500ms", allow_delete: true'),
            c.conf(2, 'type: full, dir: "{dir}"'),
            c.conf(3, 'type: cache, dir: "{dir}", ttl: "1h"'),
        ],
    )
    seen: list[Any] = []
    try:
        admin = await nats.connect(nodes[0].url, user_credentials=c.creds("admin"))
        # The resolvers' interest reaches the first node a moment after the routes.
        await until(lambda: False, 0.5)
        for _ in range(20):
            listed = await c.gather(admin, "$SYS.REQ.CLAIMS.LIST", wait=0.5)
            if len(listed) == 3:
                break
        seen.append(("list at start", listed))
        seen.append(("update A on n1", await c.gather(admin, "$SYS.REQ.CLAIMS.UPDATE", a_jwt)))
        seen.append(("files", c.files(1), c.files(2), c.files(3)))
        seen.append(("list", await c.gather(admin, "$SYS.REQ.CLAIMS.LIST")))
        key_a, key_z = (next(k for k, n in c.names.items() if n == name) for name in "AZ")
        seen.append(("lookup A", await c.gather(admin, f"$SYS.REQ.ACCOUNT.{key_a}.CLAIMS.LOOKUP")))
        seen.append(("lookup Z", await c.gather(admin, f"$SYS.REQ.ACCOUNT.{key_z}.CLAIMS.LOOKUP")))
        seen.append(("pack", await c.gather(admin, "$SYS.REQ.CLAIMS.PACK")))
        # The cache looks A up in the cluster, stores it and lets the user in.
        said, _ = await c.login(nodes[2], "uA")
        seen.append(("uA on the cache", said, c.files(3)))
        # Z: both full resolvers answer "none" at once; the cache never answers n1's lookup,
        # so n1 waits for its timeout (1.5 s).
        said, took = await c.login(nodes[2], "uZ")
        seen.append(("uZ on the cache", said, took < 1.0))
        said, took = await c.login(nodes[0], "uZ")
        seen.append(("uZ on n1", said, took >= 1.3))
        seen.append(("update A again, the cache has it", await c.gather(admin, "$SYS.REQ.CLAIMS.UPDATE", a_jwt)))
        # A delete reaches every server: each answers as its own settings say.
        delete = c.setup.delete_request("A")
        seen.append(("delete A", await c.gather(admin, "$SYS.REQ.CLAIMS.DELETE", delete)))
        seen.append(("files after delete", c.files(1), c.files(2), c.files(3)))
        await admin.close()
    finally:
        stop_cluster(nodes)
    return seen


async def test_updates_and_lookups_cross_the_cluster(tmp_path: Path) -> None:
    got = await both(updates_and_lookups, tmp_path)
    assert got["jsemu"] == got["real"]
    flat = json.dumps(got["real"])
    assert "jwt update cache skipped" in flat and "jwt updated cache" in flat
    assert "PONG" in flat and "-ERR 'Authorization Violation'" in flat


async def test_mixed_cluster_answers_as_nats_server(tmp_path: Path) -> None:
    """jsemu full, nats-server full, jsemu cache: the same answers as three nats-servers (the
    lookups and updates cross both implementations' routes)."""
    flows = [updates_and_lookups(kind, tmp_path / kind) for kind in ("real", "mixed")]
    real, mixed = await asyncio.gather(*flows)
    assert mixed == real


async def pack_sync(kind: str, tmp: Path) -> list[Any]:
    c = Cluster(tmp)
    jwts = [c.account(name) for name in ("A", "B", "C")]
    block = 'type: full, dir: "{dir}", interval: "1s"'
    nodes = await asyncio.to_thread(start, kind, [c.conf(1, block), c.conf(2, block)])
    seen: list[Any] = []
    try:
        admin = await nats.connect(nodes[0].url, user_credentials=c.creds("admin"))
        await until(lambda: False, 0.5)
        for text in jwts:
            await c.gather(admin, "$SYS.REQ.CLAIMS.UPDATE", text, wait=0.3)
        await admin.close()
        # Two servers join late: one takes all, one with room for two JWTs only.
        route = [nodes[0].route_url]
        nodes.append(await asyncio.to_thread(start_node, kind, route, c.conf(3, block)))
        nodes.append(await asyncio.to_thread(start_node, kind, route, c.conf(4, block + ", limit: 2")))
        await asyncio.to_thread(wait_routes, nodes)
        synced = await until(lambda: len(c.files(3)) == 4 and len(c.files(4)) == 2)
        seen.append(("after interval", synced, c.files(3), len(c.files(4))))
        said, _ = await c.login(nodes[2], "uB")
        seen.append(("uB on the late server", said))
    finally:
        stop_cluster(nodes)
    return seen


async def test_late_server_catches_up_by_pack(tmp_path: Path) -> None:
    got = await both(pack_sync, tmp_path)
    assert got["jsemu"] == got["real"]
    assert got["real"][0][1] is True


async def ttl_eviction(kind: str, tmp: Path) -> list[Any]:
    c = Cluster(tmp)
    a_jwt = c.account("A")
    confs = [c.conf(1, 'type: full, dir: "{dir}"'), c.conf(2, 'type: cache, dir: "{dir}", ttl: "2s"')]
    nodes = await asyncio.to_thread(start, kind, confs)
    seen: list[Any] = []
    try:
        admin = await nats.connect(nodes[0].url, user_credentials=c.creds("admin"))
        await until(lambda: False, 0.5)
        seen.append(await c.gather(admin, "$SYS.REQ.CLAIMS.UPDATE", a_jwt, wait=0.5))
        said, _ = await c.login(nodes[1], "uA")
        seen.append(("uA on the cache", said, "A.jwt" in c.files(2)))
        # ttl 2 s, looked at every 1 s: gone within about 3 s (the preloaded SYS too).
        seen.append(("evicted", await until(lambda: c.files(2) == [], 6.0)))
        admin2 = await nats.connect(nodes[1].url, user_credentials=c.creds("admin"))
        seen.append(("list", await c.gather(admin2, "$SYS.REQ.CLAIMS.LIST")))
        await admin2.close()
        said, _ = await c.login(nodes[1], "uA")  # the account is still run: no lookup
        seen.append(("uA again", said, c.files(2)))
        await admin.close()
    finally:
        stop_cluster(nodes)
    return seen


async def test_cache_forgets_after_ttl(tmp_path: Path) -> None:
    got = await both(ttl_eviction, tmp_path)
    assert got["jsemu"] == got["real"]


@pytest.mark.parametrize("kind", KINDS)
async def test_standalone_unknown_account_waits_for_timeout(kind: str, tmp_path: Path) -> None:
    """No other server to ask: the lookup runs out its ``timeout`` before the refusal, and
    the authentication timer (2 s) does not cut it short (nats-server clears it first)."""
    c = Cluster(tmp_path)
    c.account("Z")
    node = await asyncio.to_thread(start_node, kind, [], c.conf(1, 'type: full, dir: "{dir}", timeout: "2500ms"'))
    try:
        said, took = await c.login(node, "uZ")
    finally:
        node.stop()
    assert (said, took >= 2.4) == ("-ERR 'Authorization Violation'", True)
