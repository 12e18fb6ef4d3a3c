"""Service and stream imports between accounts, side by side with nats-server 2.15.1 (the
same file given to both): a request on the imported subject reaches the exporter on the
exported one with a ``_R_`` reply and ``Nats-Request-Info``, its first response comes back
(later ones do not), no responders name the requester's subject; a stream import shows the
exporter's messages under the prefix or the ``to`` subject, reply and headers kept."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from support.rawclient import RawClient

import jsemu
from jsemu.config.server_config import load_config

from .test_auth import Pair, _RealWithConfig

CONF = """
accounts {
  A: { users: [{user: a, password: a}], exports: [ {service: "svc.>"}, {stream: "feed.>"} ] }
  B: {
    users: [{user: b, password: b}]
    imports: [
      {service: {account: A, subject: "svc.x"}, to: "local.x"}
      {service: {account: A, subject: "svc.echo.*"}}
      {stream: {account: A, subject: "feed.>"}, prefix: "pfx"}
      {stream: {account: A, subject: "feed.y"}, to: "renamed.y"}
    ]
  }
  C: { users: [{user: c, password: c}] }
}
"""
_CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}


async def _pair(tmp_path: Path) -> AsyncIterator[Pair]:
    conf = tmp_path / "server.conf"
    conf.write_text(CONF)
    real = _RealWithConfig(conf)
    options = jsemu.ServerOptions(jetstream=False)
    load_config(conf, options)
    options.host, options.port = "127.0.0.1", 0
    emu = jsemu.Server(options)
    await emu.start()
    try:
        yield Pair(real, real.port, emu)
    finally:
        await emu.stop()
        real.stop()


_REPLY = re.compile(rb"_R_\.[0-9A-Za-z]{6}\.[0-9A-Za-z]{6}")
_RTT = re.compile(rb'"rtt":\d+')


def _normal(frame: bytes) -> bytes:
    """A frame with the random reply tokens and the measured RTT blanked, and without the
    size fields those change."""
    frame = _RTT.sub(b'"rtt":N', _REPLY.sub(b"_R_.X.Y", frame))
    line, _, rest = frame.partition(b"\r\n")
    fields = line.split(b" ")
    drop = 2 if fields[0] == b"HMSG" else 1
    return b" ".join(fields[:-drop]) + b"\r\n" + rest


async def _login(port: int, user: str, subs: bytes) -> RawClient:
    client = await RawClient.connect(port, {**_CONNECT, "user": user, "pass": user})
    client.send(subs)
    await client.exchange()
    await client.next_frame(0.3)  # the INFO after the first PONG
    return client


async def _take(client: RawClient, count: int) -> list[bytes]:
    """``count`` messages (normalised), then whatever else comes within a moment."""
    return [_normal(frame) for frame in await _take_raw(client, count)]


async def _take_raw(client: RawClient, count: int) -> list[bytes]:
    out: list[bytes] = []
    timeout = 5.0 if count else 0.3
    while True:
        frame = await client.next_frame(timeout)
        if frame is None:
            assert len(out) >= count, out
            return out
        if frame.startswith((b"MSG ", b"HMSG ")):
            out.append(frame)
        elif frame == b"PING\r\n":
            client.send(b"PONG\r\n")
        if len(out) >= count:
            timeout = 0.2


async def _run_pair(tmp_path: Path, scenario: Any) -> dict[str, Any]:
    got: dict[str, Any] = {}
    async for pair in _pair(tmp_path):
        for kind, port in pair.ports.items():
            got[kind] = await scenario(port)
    return got


async def test_service_import_request_and_singleton_response(tmp_path: Path) -> None:
    async def scenario(port: int) -> list[Any]:
        a = await _login(port, "a", b"SUB svc.> 1\r\n")
        b = await _login(port, "b", b"SUB _INBOX.b.* 1\r\nSUB svc.x 2\r\n")
        b.send(b"PUB local.x _INBOX.b.1 3\r\nreq\r\n")
        request = await _take_raw(a, 1)
        reply = _REPLY.search(request[0])
        assert reply is not None, request
        out: list[Any] = [[_normal(f) for f in request]]
        a.send(b"PUB " + reply.group() + b" 4\r\nresp\r\nPUB " + reply.group() + b" 5\r\nresp2\r\n")
        out.append(await _take(b, 1))  # the first response only; b's own svc.x sees nothing
        # Headers of the request are kept, the request info comes after them; no reply: no _R_.
        b.send(b"HPUB local.x _INBOX.b.2 22 25\r\nNATS/1.0\r\nFoo: bar\r\n\r\nreq\r\nPUB svc.echo.1 3\r\nraw\r\n")
        out.append(sorted(await _take(a, 2)))
        for client in (a, b):
            await client.close()
        return out

    got = await _run_pair(tmp_path, scenario)
    assert got["real"][1] == [b"MSG _INBOX.b.1 1\r\nresp\r\n"]
    assert got["jsemu"] == got["real"]


async def test_no_responders_for_the_importers_subject(tmp_path: Path) -> None:
    async def scenario(port: int) -> list[bytes]:
        b = await _login(port, "b", b"SUB _INBOX.b.* 1\r\n")
        b.send(
            b"PUB local.x _INBOX.b.1 3\r\nreq\r\nPUB svc.echo.2 _INBOX.b.2 1\r\nq\r\nPUB svc.x _INBOX.b.3 1\r\nq\r\n"
        )
        out = sorted(await _take(b, 3))
        await b.close()
        return out

    got = await _run_pair(tmp_path, scenario)
    assert got["real"][0].startswith(b"HMSG _INBOX.b.1 1\r\nNATS/1.0 503\r\nNats-Subject: local.x")
    assert got["jsemu"] == got["real"]


async def test_stream_import_prefix_and_to(tmp_path: Path) -> None:
    async def scenario(port: int) -> list[Any]:
        a = await _login(port, "a", b"SUB feed.> 1\r\n")
        b = await _login(port, "b", b"SUB pfx.> 2\r\nSUB renamed.> 3\r\nSUB feed.> 4\r\n")
        c = await _login(port, "c", b"SUB > 5\r\n")
        a.send(b"PUB feed.y _INBOX.a.1 2\r\nhi\r\nHPUB feed.z 12 14\r\nNATS/1.0\r\n\r\nho\r\n")
        out = [sorted(await _take(b, 3)), await _take(a, 2), await _take(c, 0)]
        for client in (a, b, c):
            await client.close()
        return out

    got = await _run_pair(tmp_path, scenario)
    assert got["real"][0] == sorted(
        [
            b"MSG pfx.feed.y 2 _INBOX.a.1\r\nhi\r\n",
            b"MSG renamed.y 3 _INBOX.a.1\r\nhi\r\n",
            b"HMSG pfx.feed.z 2\r\nNATS/1.0\r\n\r\nho\r\n",
        ]
    )
    assert got["jsemu"] == got["real"]


JS_CONF = """
jetstream {{ store_dir: "{store}" }}
accounts {{
  A: {{ users: [{{user: a, password: a}}], jetstream: enabled, exports: [ {{service: "$JS.API.>"}} ] }}
  B: {{ users: [{{user: b, password: b}}], imports: [ {{service: {{account: A, subject: "$JS.API.>"}}}} ] }}
}}
"""
_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT[0-9:.]+Z")
_LEADER = re.compile(rb'"leader":"[^"]*"')  # the server's name


async def _both_with_js(tmp_path: Path, conf_text: str, scenario: Any) -> dict[str, Any]:
    """``scenario(port)`` (a list of steps, each a list of frames) on nats-server and on jsemu
    given the same configuration with JetStream; times and the leader's name blanked."""
    conf = tmp_path / "server.conf"
    conf.write_text(conf_text.format(store=tmp_path / "real-store"))
    got: dict[str, Any] = {}
    real = _RealWithConfig(conf)
    try:
        options = jsemu.ServerOptions()
        load_config(conf, options)
        options.host, options.port, options.store_dir = "127.0.0.1", 0, None
        async with jsemu.Server(options) as emu:
            for kind, port in (("real", real.port), ("jsemu", emu.port)):
                out = await scenario(port)
                got[kind] = [[_LEADER.sub(b'"leader":"X"', _STAMP.sub(b"TS", f)) for f in step] for step in out]
    finally:
        real.stop()
    return got


async def test_jetstream_api_imported_from_another_account(tmp_path: Path) -> None:
    """B has no JetStream of its own but imports A's API: its requests create and read A's
    streams, A counts them, and B's own subjects still do not reach A's streams."""
    requests = [
        ("$JS.API.INFO", b""),
        ("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s"],"storage":"memory","allow_direct":true}'),
        ("$JS.API.STREAM.NAMES", b""),
        ("$JS.API.FOO", b""),
    ]

    async def scenario(port: int) -> list[Any]:
        a = await _login(port, "a", b"SUB _INBOX.> 1\r\n")
        b = await _login(port, "b", b"SUB _INBOX.> 1\r\n")
        out: list[Any] = []
        for subject, body in requests:
            b.send(f"PUB {subject} _INBOX.b {len(body)}\r\n".encode() + body + b"\r\n")
            out.append(await _take(b, 0 if subject.endswith("FOO") else 1))
        a.send(b"PUB s _INBOX.a 2\r\nhi\r\n")
        out.append(await _take(a, 1))
        b.send(b'PUB $JS.API.DIRECT.GET.S _INBOX.b 9\r\n{"seq":1}\r\nPUB s _INBOX.b 2\r\nhi\r\n')
        out.append(sorted(await _take(b, 2)))
        a.send(b"PUB $JS.API.INFO _INBOX.a 0\r\n\r\n")
        out.append(await _take(a, 1))
        for client in (a, b):
            await client.close()
        return out

    got = await _both_with_js(tmp_path, JS_CONF, scenario)
    assert b'"streams":1' in got["real"][-1][0] and b'"total":3' in got["real"][-1][0]
    assert got["jsemu"] == got["real"]


MAPPED_CONF = """
jetstream {{ store_dir: "{store}" }}
accounts {{
  A: {{
    users: [{{user: a, password: a}}], jetstream: enabled
    exports: [ {{service: "$JS.API.>"}}, {{service: "svc.*.x"}} ]
  }}
  B: {{
    users: [{{user: b, password: b}}], jetstream: enabled
    imports: [
      {{service: {{account: A, subject: "$JS.API.>"}}, to: "$JS.A.API.>"}}
      {{service: {{account: A, subject: "svc.*.x"}}, to: "local.*.y"}}
    ]
  }}
}}
"""


async def test_service_import_mapped_with_wildcards(tmp_path: Path) -> None:
    """B reaches A's JetStream API under ``$JS.A.API.>`` (the usual way to share one account's
    streams) while keeping its own ``$JS.API``, and a ``*`` carries its token across: the
    requests arrive on the exported subjects and the answers are A's."""
    requests = [
        ("$JS.A.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s"],"storage":"memory"}'),
        ("$JS.A.API.STREAM.NAMES", b""),
        ("$JS.API.STREAM.NAMES", b""),
        ("$JS.A.API.STREAM.INFO.S", b""),
    ]

    async def scenario(port: int) -> list[Any]:
        a = await _login(port, "a", b"SUB _INBOX.> 1\r\nSUB svc.> 2\r\n")
        b = await _login(port, "b", b"SUB _INBOX.> 1\r\n")
        out: list[Any] = []
        for subject, body in requests:
            b.send(f"PUB {subject} _INBOX.b {len(body)}\r\n".encode() + body + b"\r\n")
            out.append(await _take(b, 1))
        b.send(b"PUB local.t1.y _INBOX.c 3\r\nreq\r\nPUB local.t1.z 3\r\nnot\r\n")
        out.append(await _take(a, 1))
        for client in (a, b):
            await client.close()
        return out

    got = await _both_with_js(tmp_path, MAPPED_CONF, scenario)
    assert b'"streams":["S"]' in got["real"][1][0] and b'"streams":null' in got["real"][2][0]
    assert got["real"][4][0].startswith(b"HMSG svc.t1.x 2 _R_.X.Y")
    assert got["jsemu"] == got["real"]
