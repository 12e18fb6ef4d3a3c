"""Mirrors and sources of another account's stream (``external: {api, deliver}``), side by
side with nats-server 2.15.1 given the same configuration: B reaches A's JetStream API
through a service import under ``$JS.A.API`` and gets the deliveries back through a stream
import of ``deliver.>``. Without the delivery import the consumer is made but nothing comes
(no error, lag 0); without the API import nobody answers (no error, ``active: -1``); without
the upstream stream the info says 10059. Times, ``active`` and the upstream's hash in
``Nats-Stream-Source`` are blanked (they depend on when each server ran)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from server.test_account_imports import _both_with_js, _login, _take

import jsemu
from jsemu.config.server_config import load_config

CONF = """
jetstream {{{{ store_dir: "{{store}}" }}}}
accounts {{{{
  A: {{{{
    users: [{{{{user: a, password: a}}}}], jetstream: enabled
    exports: [ {{{{service: "$JS.API.CONSUMER.CREATE.>"}}}}, {{{{stream: "deliver.>"}}}} ]
  }}}}
  B: {{{{ users: [{{{{user: b, password: b}}}}], jetstream: enabled, imports: [ {imports} ] }}}}
}}}}
"""
_API = '{{service: {{account: A, subject: "$JS.API.CONSUMER.CREATE.>"}}, to: "$JS.A.API.CONSUMER.CREATE.>"}}'
_DELIVER = '{{stream: {{account: A, subject: "deliver.>"}}}}'
_PREFIXED = '{{stream: {{account: A, subject: "deliver.>"}}, prefix: "p"}}'
VARIANTS = {
    "linked": (_API + ", " + _DELIVER, True),
    "no_deliver_import": (_API, True),
    "deliver_import_prefixed": (_API + ", " + _PREFIXED, True),
    "no_api_import": (_DELIVER, True),
    "no_upstream_stream": (_API + ", " + _DELIVER, False),
}
_MIRROR = {"name": "S", "external": {"api": "$JS.A.API", "deliver": "deliver.M"}}
_SOURCE = {"name": "S", "filter_subject": "s.1", "external": {"api": "$JS.A.API", "deliver": "deliver.SRC"}}
_ACTIVE = re.compile(rb'"active":(\d+)')
_ORIGIN = re.compile(rb"(Nats-Stream-Source: S:\S+ \d+ \S+ \S+ \S+) \S+")


def _pub(subject: str, body: bytes, reply: str = "_INBOX.r") -> bytes:
    return f"PUB {subject} {reply} {len(body)}\r\n".encode() + body + b"\r\n"


def _blank(frame: bytes) -> bytes:
    return _ORIGIN.sub(rb"\1 HASH", _ACTIVE.sub(b'"active":"N"', frame))


async def _scenario(port: int, with_stream: bool, wait_for: int) -> list[Any]:
    a = await _login(port, "a", b"SUB _INBOX.> 1\r\n")
    b = await _login(port, "b", b"SUB _INBOX.> 1\r\n")
    out: list[Any] = []
    if with_stream:
        a.send(_pub("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s.>"],"storage":"memory"}'))
        await _take(a, 1)
        for i in range(5):
            a.send(_pub(f"s.{i}", f"m{i}".encode()))
        a.send(b"HPUB s.2 _INBOX.r 18 20\r\nNATS/1.0\r\nH: 1\r\n\r\nhh\r\n")
        await _take(a, 6)
    for name, spec in (("M", {"mirror": _MIRROR}), ("SRC", {"sources": [_SOURCE]})):
        b.send(
            _pub(
                f"$JS.API.STREAM.CREATE.{name}",
                json.dumps({"name": name, "storage": "memory", "allow_direct": True, **spec}).encode(),
            )
        )
        out.append(await _take(b, 1))
    if with_stream:
        a.send(_pub("s.9", b"late"))
        await _take(a, 1)
    # nats-server sets up the consumers asynchronously: wait for the copies, or a moment.
    for _ in range(50 if wait_for < 10**9 else 5):
        b.send(_pub("$JS.API.STREAM.INFO.M", b""))
        info = json.loads((await _take(b, 1))[0].split(b"\r\n")[1])
        if info["state"]["messages"] >= wait_for:
            break
        await asyncio.sleep(0.1)
    for name in ("M", "SRC"):
        b.send(_pub(f"$JS.API.STREAM.INFO.{name}", b""))
        out.append([_blank(f) for f in await _take(b, 1)])
    b.send(_pub("$JS.API.DIRECT.GET.M", b'{"seq":3}'))
    out.append([_blank(f) for f in await _take(b, 1)])
    b.send(_pub("$JS.API.DIRECT.GET.SRC", b'{"seq":1}'))
    out.append([_blank(f) for f in await _take(b, 1)])
    for client in (a, b):
        await client.close()
    return out


@pytest.mark.parametrize("variant", list(VARIANTS))
async def test_external_mirror_and_source(tmp_path: Path, variant: str) -> None:
    imports, with_stream = VARIANTS[variant]
    wait_for = 7 if variant == "linked" else 10**9

    async def scenario(port: int) -> list[Any]:
        return await _scenario(port, with_stream, wait_for)

    got = await _both_with_js(tmp_path, CONF.format(imports=imports), scenario)
    if variant == "linked":
        assert b'"messages":7' in got["real"][2][0], got["real"][2]
        assert b"Nats-Stream-Source: S:z0zeNTHp 2 s.1 > s.1 HASH" in got["real"][5][0], got["real"][5]
    assert got["jsemu"] == got["real"]


RESTART_CONF = """
jetstream { store_dir: "%s" }
accounts {
  B: {
    users: [{user: b, password: b}], jetstream: enabled
    imports: [
      {service: {account: A, subject: "$JS.API.CONSUMER.CREATE.>"}, to: "$JS.A.API.CONSUMER.CREATE.>"}
      {stream: {account: A, subject: "deliver.>"}}
    ]
  }
  A: {
    users: [{user: a, password: a}], jetstream: enabled
    exports: [ {service: "$JS.API.CONSUMER.CREATE.>"}, {stream: "deliver.>"} ]
  }
}
"""


async def test_external_mirror_after_restart(tmp_path: Path) -> None:
    """B's file mirror of A's stream is linked again after a restart, though B's streams are
    restored before A's (B comes first in the file): what A stores next is copied."""
    conf = tmp_path / "server.conf"
    conf.write_text(RESTART_CONF % (tmp_path / "store"))

    def options() -> jsemu.ServerOptions:
        opts = jsemu.ServerOptions()
        load_config(conf, opts)
        opts.host, opts.port = "127.0.0.1", 0
        return opts

    async def publish(port: int, subject: str) -> None:
        a = await _login(port, "a", b"SUB _INBOX.> 1\r\n")
        a.send(_pub(subject, b"x"))
        await _take(a, 1)
        await a.close()

    async def mirrored(port: int) -> int:
        b = await _login(port, "b", b"SUB _INBOX.> 1\r\n")
        b.send(_pub("$JS.API.STREAM.INFO.M", b""))
        info = json.loads((await _take(b, 1))[0].split(b"\r\n")[1])
        await b.close()
        return int(info["state"]["messages"])

    async with jsemu.Server(options()) as emu:
        a = await _login(emu.port, "a", b"SUB _INBOX.> 1\r\n")
        a.send(_pub("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s.>"]}'))
        await _take(a, 1)
        b = await _login(emu.port, "b", b"SUB _INBOX.> 1\r\n")
        b.send(_pub("$JS.API.STREAM.CREATE.M", json.dumps({"name": "M", "mirror": _MIRROR}).encode()))
        await _take(b, 1)
        await publish(emu.port, "s.1")
        assert await mirrored(emu.port) == 1
    async with jsemu.Server(options()) as emu:
        assert await mirrored(emu.port) == 1
        await publish(emu.port, "s.2")
        assert await mirrored(emu.port) == 2
