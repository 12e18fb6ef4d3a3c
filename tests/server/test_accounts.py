"""Accounts side by side with nats-server 2.15.1: the same ``accounts { ... }`` file given to
both. Each account is its own subject space (a message published in one is never seen in
another, a request across accounts gets no responders), INFO's ``remote_account`` names the
user's account, each account with ``jetstream: enabled`` has its own streams and
``$JS.API.INFO`` figures, and every other account (``$G`` too, once accounts are configured)
gets the "JetStream not enabled for account" answer of each endpoint."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support.rawclient import RawClient

import jsemu
from jsemu.config.server_config import load_config
from jsemu.jetstream.api.not_enabled import NOT_ENABLED_REPLIES
from jsemu.jetstream.api.registry import registered_patterns, system_patterns

from .test_auth import Pair, _RealWithConfig

CONF = """
jetstream {{ store_dir: "{store}" }}
accounts {{
  A: {{ users: [ {{user: a1, password: a}}, {{user: a2, password: a}} ], jetstream: enabled }}
  C: {{ users: [ {{user: c, password: c}} ], jetstream: enabled }}
  B: {{ users: [ {{user: b, password: b}} ] }}
}}
authorization {{ users: [ {{user: g, password: g}} ] }}
"""

USERS = ("a1", "a2", "c", "b", "g")
_CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}


async def _pair(tmp_path: Path) -> AsyncIterator[Pair]:
    conf = tmp_path / "server.conf"
    conf.write_text(CONF.format(store=tmp_path / "real-store"))
    real = _RealWithConfig(conf)
    options = jsemu.ServerOptions()
    load_config(conf, options)
    options.host, options.port, options.store_dir = "127.0.0.1", 0, None  # jsemu keeps its streams in memory
    emu = jsemu.Server(options)
    await emu.start()
    try:
        yield Pair(real, real.port, emu)
    finally:
        await emu.stop()
        real.stop()


async def _login(port: int, user: str) -> RawClient:
    password = user[0]
    client = await RawClient.connect(port, {**_CONNECT, "user": user, "pass": password})
    frames = await client.exchange()
    assert not client.eof, frames
    return client


_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT[0-9:.]+Z")


def _message(frame: bytes) -> tuple[bytes, bytes]:
    """(subject and sid, body with timestamps blanked) of a MSG or HMSG frame."""
    line, _, body = frame.partition(b"\r\n")
    head = b" ".join(line.split(b" ")[:3])
    return head, _STAMP.sub(b"TS", body)


async def _collect(client: RawClient, count: int) -> list[tuple[bytes, bytes]]:
    """The next ``count`` messages (a server answers API requests in its own time), then
    whatever else arrives within a moment (a message too many must show)."""
    out: list[tuple[bytes, bytes]] = []
    timeout = 5.0 if count else 0.3
    while True:
        frame = await client.next_frame(timeout)
        if frame is None:
            assert len(out) >= count, f"expected {count} messages, got {out!r}"
            return out
        if frame.startswith((b"MSG ", b"HMSG ")):
            out.append(_message(frame))
        elif frame == b"PING\r\n":
            client.send(b"PONG\r\n")
        if len(out) >= count:
            timeout = 0.2


def _pub(subject: str, body: bytes = b"", reply: str = "_INBOX.r") -> bytes:
    return f"PUB {subject} {reply} {len(body)}\r\n".encode() + body + b"\r\n"


async def test_each_account_is_its_own_subject_space(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            clients = {user: await _login(port, user) for user in USERS}
            for client in clients.values():
                client.send(b"SUB x.> 1\r\n")
                await client.exchange()
            clients["a1"].send(b"SUB svc 2\r\n")
            await clients["a1"].exchange()
            for user, client in clients.items():
                client.send(f"PUB x.from.{user} 2\r\nhi\r\n".encode())
            seen = {
                user: sorted(await _collect(client, 2 if user[0] == "a" else 1)) for user, client in clients.items()
            }
            # A request into another account's service: nobody there, no responders.
            clients["b"].send(b"SUB _INBOX.r 9\r\n" + _pub("svc", b"q"))
            answer = await _collect(clients["b"], 1), await _collect(clients["a1"], 0)
            for client in clients.values():
                await client.close()
            got[kind] = seen, answer
        seen, answer = got["real"]
        # a1 and a2 share account A; c, b and g are alone in theirs.
        assert {user: [m[0] for m in msgs] for user, msgs in seen.items()} == {
            "a1": [b"MSG x.from.a1 1", b"MSG x.from.a2 1"],
            "a2": [b"MSG x.from.a1 1", b"MSG x.from.a2 1"],
            "c": [b"MSG x.from.c 1"],
            "b": [b"MSG x.from.b 1"],
            "g": [b"MSG x.from.g 1"],
        }
        assert got["jsemu"] == got["real"]


async def test_info_names_the_users_account(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            accounts = {}
            for user in USERS:
                client = await RawClient.connect(port, {**_CONNECT, "user": user, "pass": user[0]})
                frames = await client.exchange()
                frames.append(await client.next_frame(2.0) or b"")  # the INFO follows the first PONG
                infos = [json.loads(f[5:]) for f in frames if f.startswith(b"INFO ")]
                accounts[user] = [(info.get("connect_info"), info.get("remote_account")) for info in infos]
                await client.close()
            got[kind] = accounts
        assert got["real"]["b"] == [(True, "B")]
        assert got["jsemu"] == got["real"]


async def test_each_account_has_its_own_jetstream(tmp_path: Path) -> None:
    create = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_direct": True}).encode()
    got: dict[str, Any] = {}
    async for pair in _pair(tmp_path):
        for kind, port in pair.ports.items():
            out = {}
            clients = {user: await _login(port, user) for user in ("a1", "c", "g")}
            for client in clients.values():
                client.send(b"SUB _INBOX.r 1\r\n")
            # The same stream name and subjects in A and in C: two streams.
            for user in ("a1", "c"):
                clients[user].send(_pub("$JS.API.STREAM.CREATE.S", create))
                out[user, "create"] = await _collect(clients[user], 1)
            clients["a1"].send(_pub("s.1", b"from-a"))
            out["a1", "ack"] = await _collect(clients["a1"], 1)
            for body in (b"from-c-1", b"from-c-2"):
                clients["c"].send(_pub("s.2", body))
                out["c", "ack", body] = await _collect(clients["c"], 1)
            # $G has no JetStream once accounts are configured: nothing stores s.1 there.
            clients["g"].send(_pub("s.1", b"from-g"))
            out["g", "publish"] = await _collect(clients["g"], 1)
            for user in ("a1", "c", "g"):
                clients[user].send(_pub("$JS.API.INFO"))
                out[user, "info"] = await _collect(clients[user], 1)
                clients[user].send(_pub("$JS.API.STREAM.NAMES"))
                out[user, "names"] = await _collect(clients[user], 1)
            for user in ("a1", "c"):
                clients[user].send(_pub("$JS.API.DIRECT.GET.S", b'{"seq":1}'))
                out[user, "direct"] = await _collect(clients[user], 1)
            for client in clients.values():
                await client.close()
            got[kind] = out
    real = got["real"]
    assert b'"seq":2' in real["c", "ack", b"from-c-2"][0][1] and b'"seq":1' in real["a1", "ack"][0][1]
    assert b"from-a" in real["a1", "direct"][0][1] and b"from-c-1" in real["c", "direct"][0][1]
    assert b"JetStream not enabled for account" in real["g", "info"][0][1]
    assert got["jsemu"] == real


def _example_subject(pattern: str) -> str:
    return "$JS.API." + pattern.replace(".*.>", ".S.C.f").replace("*.*", "S.C").replace("*", "S")


@pytest.mark.parametrize(
    "body",
    [b"", b"{bad", b"{}", b"[]", b'{"group":"g"}', b'{"group":"b@d"}'],
    ids=["empty", "bad-json", "empty-object", "array", "group", "bad-group"],
)
async def test_every_endpoint_of_an_account_without_jetstream(body: bytes, tmp_path: Path) -> None:
    # The system account's endpoints answer no other account standalone (tests/jetstream/api/test_system_endpoints.py).
    patterns = [p for p in registered_patterns() if p not in system_patterns()]
    assert sorted(patterns) == sorted(NOT_ENABLED_REPLIES)  # a new endpoint needs its answer here
    subjects = [_example_subject(p) for p in patterns] + ["$JS.API.DIRECT.GET.S", "$JS.API.CONSUMER.MSG.NEXT.S.C"]
    silent = ["$JS.API.CONSUMER.RESET.S.C"]  # a consumer's own subject: no consumer, no reply
    got: dict[str, Any] = {}
    async for pair in _pair(tmp_path):
        for kind, port in pair.ports.items():
            out = {}
            for user in ("b", "g"):
                client = await _login(port, user)
                client.send(b"SUB _INBOX.r.* 1\r\n")
                for index, subject in enumerate(subjects + silent):  # one inbox each: replies come in any order
                    client.send(_pub(subject, body, f"_INBOX.r.{index}"))
                out[user] = sorted(await _collect(client, len(subjects)))
                await client.close()
            got[kind] = out
    assert got["jsemu"] == got["real"]


async def test_nats_py_clients_of_two_accounts(tmp_path: Path) -> None:
    import nats

    async for pair in _pair(tmp_path):
        for kind, port in pair.ports.items():
            url = f"nats://127.0.0.1:{port}"
            a = await nats.connect(url, user="a1", password="a", allow_reconnect=False)
            c = await nats.connect(url, user="c", password="c", allow_reconnect=False)
            try:
                await a.jetstream().add_stream(name="K", subjects=["k"], storage="memory")
                await a.jetstream().publish("k", b"1")
                info_a = await a.jetstream().account_info()
                info_c = await c.jetstream().account_info()
                assert (info_a.streams, info_c.streams) == (1, 0), kind
                sub = await c.subscribe("k")
                await a.publish("k", b"2")
                await a.flush()
                with pytest.raises(asyncio.TimeoutError):
                    await sub.next_msg(timeout=0.2)
            finally:
                await a.close()
                await c.close()


def _real_with_monitor(conf: Path) -> tuple[subprocess.Popen[str], int, int]:
    """nats-server on ``conf`` (with ``http_port: -1``): the process, its client and HTTP ports."""
    from support.servers import nats_server_binary

    from .test_monitoring import _CLIENT, _MONITOR

    args = [nats_server_binary(), "-c", str(conf), "-a", "127.0.0.1", "-p", "-1"]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    port = http = 0
    while not (port and http):
        line = proc.stderr.readline()
        assert line, "nats-server exited"
        if m := _MONITOR.search(line):
            http = int(m.group(1))
        if m := _CLIENT.search(line):
            port = int(m.group(1))
    return proc, port, http


async def test_jsz_reports_each_account_with_jetstream(tmp_path: Path) -> None:
    """/jsz sums over the accounts with JetStream; ``accounts=true`` lists each by name."""
    from .test_monitoring import _fetch, _keys

    conf = tmp_path / "server.conf"
    conf.write_text(CONF.format(store=tmp_path / "real-store") + "http_port: -1\n")
    real, real_port, real_http = _real_with_monitor(conf)
    try:
        options = jsemu.ServerOptions()
        load_config(conf, options)
        options.host, options.port, options.store_dir, options.http_port = "127.0.0.1", 0, None, -1
        async with jsemu.Server(options) as emu:
            assert emu.monitor is not None
            got = {}
            for kind, port, http in (("real", real_port, real_http), ("jsemu", emu.port, emu.monitor.port)):
                client = await _login(port, "c")
                client.send(b"SUB _INBOX.r 1\r\n" + _pub("$JS.API.STREAM.CREATE.T", b'{"name":"T","storage":"memory"}'))
                await _collect(client, 1)
                await client.close()
                got[kind] = [json.loads((await _fetch(http, path))[2]) for path in ("/jsz", "/jsz?accounts=true")]
    finally:
        real.terminate()
        real.wait(10)
    for jsz in got.values():
        assert [d["name"] for d in jsz[1]["account_details"]] in (["A", "C"], ["C", "A"])
        jsz[1]["account_details"].sort(key=lambda d: d["name"])
    for plain, detailed in zip(got["jsemu"], got["real"], strict=True):
        assert _keys(plain) == _keys(detailed)
        for key in ("accounts", "streams", "consumers", "messages", "total"):
            assert plain[key] == detailed[key], key
    assert got["real"][0]["accounts"] == 2 and got["real"][0]["streams"] == 1
    details = [[(d["name"], d["api"]) for d in jsz[1]["account_details"]] for jsz in got.values()]
    assert details[0] == details[1]
