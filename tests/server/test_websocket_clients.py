"""WebSocket clients have everything a TCP client has, on both servers: nats-py over
``ws://`` (publish/subscribe, request/reply, headers, a payload larger than one frame,
JetStream, KV, Direct Get), authentication and its close frame, the pytest plugin's
``jsemu_factory(websocket=True)`` and ``wss://``, lame duck mode closing the port."""

from __future__ import annotations

import asyncio
import re
import ssl
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import nats
import pytest
from nats.js.api import StreamConfig
from support.wsclient import CONNECT, WsClient, frame

from .ws_pair import ws_pair

pytest.importorskip("aiohttp")  # nats-py's WebSocket transport
#: nats-py's WebSocket transport hands aiohttp a float timeout, which aiohttp deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:parameter 'timeout' of type 'float':DeprecationWarning")


async def _nats_py_session(url: str) -> list[Any]:
    nc = await nats.connect(url, allow_reconnect=False)
    try:
        out: list[Any] = []
        sub = await nc.subscribe("greet.*")
        await nc.publish("greet.a", b"hello", headers={"X-Who": "ws"})
        msg = await sub.next_msg(timeout=3)
        out.append((msg.subject, msg.data, dict(msg.headers or {})))
        big = bytes(range(256)) * 4096  # 1 MiB: many frames' worth
        await nc.publish("greet.big", big)
        msg = await sub.next_msg(timeout=5)
        out.append(msg.data == big)

        async def echo(m: Any) -> None:
            await m.respond(m.data[::-1])

        await nc.subscribe("echo", cb=echo)
        out.append((await nc.request("echo", b"abc", timeout=3)).data)
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name="WS", subjects=["ws.>"], allow_direct=True))
        ack = await js.publish("ws.one", b"stored")
        out.append((ack.stream, ack.seq))
        got = await js.get_msg("WS", subject="ws.one", direct=True)
        out.append((got.subject, got.data))
        kv = await js.create_key_value(bucket="cfg")
        await kv.put("k", b"v1")
        out.append((await kv.get("k")).value)
        psub = await js.pull_subscribe("ws.>", "puller")
        msgs = await psub.fetch(1, timeout=3)
        await msgs[0].ack()
        out.append((msgs[0].subject, msgs[0].data))
        return out
    finally:
        await nc.close()


async def test_nats_py_over_websocket_as_nats_server() -> None:
    async with ws_pair(jetstream=True) as sides:
        got = {}
        for kind, side in sides.items():
            got[kind] = await _nats_py_session(f"ws://127.0.0.1:{side.ws_port}")
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == ("greet.a", b"hello", {"X-Who": "ws"})


async def test_authentication_applies_to_websocket_clients_as_nats_server() -> None:
    """The server's ``authorization`` holds on the WebSocket port: a CONNECT without the
    password gets ``-ERR 'Authorization Violation'`` and close 1008 ``Authentication
    Failure``; with it, a session."""
    async with ws_pair(extra="authorization { user: a, password: b }") as sides:
        got = {}
        for kind, side in sides.items():
            bad = await WsClient.connect(side.ws_port)
            first, _ = await bad.frames(quiet=0.3)
            bad.send(frame(2, CONNECT + b"PING\r\n"))
            frames, closed = await bad.frames(quiet=1.0)
            good = await WsClient.connect(side.ws_port)
            await good.frames(quiet=0.3)
            good.send(frame(2, b'CONNECT {"verbose":false,"user":"a","pass":"b"}\r\nPING\r\n'))
            pong = await good.until(b"PONG\r\n")
            good.close()
            got[kind] = (
                "auth_required" in first[0].payload.decode(),
                [(f.first, f.payload) for f in frames],
                closed,
                pong,
            )
        assert got["jsemu"] == got["real"]
        assert got["real"][1][-1] == (0x88, struct.pack("!H", 1008) + b"Authentication Failure")


async def test_jsemu_factory_websocket(jsemu_factory: Callable[..., Awaitable[Any]]) -> None:
    server = await jsemu_factory(websocket=True, streams=[{"name": "S", "subjects": ["s.>"]}])
    assert server.ws_url.startswith("ws://127.0.0.1:")
    nc = await nats.connect(server.ws_url, allow_reconnect=False)
    try:
        js = nc.jetstream()
        assert (await js.publish("s.x", b"1")).seq == 1
        assert (await js.stream_info("S")).state.messages == 1
    finally:
        await nc.close()


async def test_jsemu_factory_secure_websocket(jsemu_factory: Callable[..., Awaitable[Any]]) -> None:
    server = await jsemu_factory(websocket="tls")
    assert server.ws_url.startswith("wss://127.0.0.1:")
    port = int(server.ws_url.rsplit(":", 1)[1])
    context = ssl.create_default_context(cafile=server.client_tls.ca_file)
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    client = WsClient(reader, writer, b"")
    writer.write(
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101 ")
    info = await client.until(b"\r\n")
    assert b'"tls_required":true' in info
    client.send(frame(2, CONNECT + b"PING\r\n"))
    assert b"PONG\r\n" in await client.until(b"PONG\r\n")
    client.close()


async def test_lame_duck_closes_the_websocket_port(jsemu_factory: Callable[..., Awaitable[Any]]) -> None:
    server = await jsemu_factory(websocket=True, lame_duck_duration=30_000_000_000)
    port = int(server.ws_url.rsplit(":", 1)[1])
    client = await WsClient.connect(port)
    await client.frames(quiet=0.2)
    assert server.enter_lame_duck()
    await asyncio.sleep(0.1)
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", port)
    client.close()


async def _ws_attempt(
    port: int, connect: bytes, headers: str = "", mask: bool = True
) -> tuple[bool, list[tuple[int, bytes]], bool]:
    """INFO's ``auth_required``, then what a CONNECT and PING get, and whether it closed."""
    client = await WsClient.connect(port, headers)
    first, _ = await client.frames(quiet=0.3)
    client.send(frame(2, connect + b"PING\r\n", mask=mask))
    frames, closed = await client.frames(quiet=0.6)
    client.close()
    return '"auth_required":true' in first[0].payload.decode(), [(f.first, f.payload) for f in frames], closed


async def _tcp_attempt(port: int, connect: bytes) -> tuple[bool, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    info = await reader.readuntil(b"\r\n")
    writer.write(connect + b"PING\r\n")
    data = await asyncio.wait_for(reader.read(4096), 3)
    writer.close()
    return b'"auth_required":true' in info, data


_ANON = b'CONNECT {"verbose":false}\r\n'
_UP = b'CONNECT {"verbose":false,"user":"wsu","pass":"wsp"}\r\n'
_TOKEN = b'CONNECT {"verbose":false,"auth_token":"s3cr3t"}\r\n'


@pytest.mark.parametrize(
    ("block", "extra", "connects"),
    [
        ("authorization { user: wsu, password: wsp }", "", [_ANON, _UP, _TOKEN]),
        ("authorization { token: s3cr3t }", "", [_ANON, _UP, _TOKEN]),
        ("authorization { user: wsu, password: wsp }", "authorization { token: s3cr3t }", [_ANON, _UP, _TOKEN]),
        (
            "no_auth_user: b",
            "authorization { users: [{user: a, password: pa}, {user: b, password: pb}] }",
            [_ANON, b'CONNECT {"verbose":false,"user":"a","pass":"pa"}\r\n', _UP],
        ),
    ],
)
async def test_websocket_authorization_block_as_nats_server(block: str, extra: str, connects: list[bytes]) -> None:
    """The block's own ``authorization`` / ``no_auth_user`` holds for WebSocket clients only;
    TCP clients keep the server's."""
    async with ws_pair(f"port: -1, no_tls: true, {block}", extra=extra) as sides:
        got = {}
        for kind, side in sides.items():
            results: list[Any] = [await _ws_attempt(side.ws_port, c) for c in connects]
            results.append(await _tcp_attempt(side.port, _ANON))
            got[kind] = results
        assert got["jsemu"] == got["real"]


async def test_websocket_authentication_timeout_as_nats_server() -> None:
    async with ws_pair("port: -1, no_tls: true, authorization { user: wsu, password: wsp, timeout: 0.5 }") as sides:
        got = {}
        loop = asyncio.get_running_loop()
        for kind, side in sides.items():
            client = await WsClient.connect(side.ws_port)
            await client.frames(quiet=0.1)
            start = loop.time()
            frames, closed = await client.frames(quiet=3)
            got[kind] = ([(f.first, f.payload) for f in frames], closed, 0.3 < loop.time() - start < 2.5)
            client.close()
        assert got["jsemu"] == got["real"]
        assert got["real"][0][-1] == (0x88, struct.pack("!H", 1008) + b"Authentication Timeout")


async def test_cookies_stand_in_for_connect_credentials_as_nats_server() -> None:
    block = "port: -1, no_tls: true, user_cookie: u, pass_cookie: p, authorization { user: wsu, password: wsp }"
    cases = [
        ("u=wsu; p=wsp", _ANON),
        ('u="wsu"; other=1; p=wsp', _ANON),
        ("u=wsu; p=nope", _ANON),
        ("u=wsu; p=nope", _UP),  # the CONNECT's own win
        ("", _ANON),
    ]
    async with ws_pair(block) as sides:
        got = {}
        for kind, side in sides.items():
            got[kind] = [
                await _ws_attempt(side.ws_port, connect, f"Cookie: {cookie}\r\n" if cookie else "")
                for cookie, connect in cases
            ]
        assert got["jsemu"] == got["real"]
        assert got["real"][0][1] == [(0x82, b"PONG\r\n")]


async def test_no_masking_asked_reads_unmasked_frames_as_nats_server() -> None:
    async with ws_pair() as sides:
        got = {}
        for kind, side in sides.items():
            auth, frames, closed = await _ws_attempt(side.ws_port, CONNECT, "Nats-No-Masking: true\r\n", mask=False)
            # PONG and the async INFO: one frame or two from nats-server (a race on its side).
            firsts = {first for first, _ in frames}
            got[kind] = (auth, firsts, b"".join(p for _, p in frames).split(b"INFO ")[0], closed)
        assert got["jsemu"] == got["real"]
        assert got["real"] == (False, {0x82}, b"PONG\r\n", False)  # read, answered, still open


async def test_server_shutdown_close_frame_as_nats_server() -> None:
    """A stopped server (SIGTERM) sends its WebSocket clients close 1001 ``Server Shutdown``."""
    from support.servers import RealServer

    got = {}
    for process in (False, True):
        server = RealServer(jetstream=False, websocket=True, jsemu_process=process)
        try:
            client = await WsClient.connect(int(server.ws_url.rsplit(":", 1)[1]))
            await client.frames(quiet=0.2)
            client.send(frame(2, CONNECT + b"PING\r\n"))
            await client.until(b"PONG\r\n")
            server.proc.terminate()
            frames, closed = await client.frames(quiet=3)
            got[process] = ([(f.first, f.payload) for f in frames], closed)
            client.close()
        finally:
            server.stop()
    assert got[True] == got[False] == ([(0x88, struct.pack("!H", 1001) + b"Server Shutdown")], True)


_ACCOUNTS = (
    "accounts {\n"
    '  A: { users: [{user: a, password: a, permissions: {publish: {deny: ["secret"]}, subscribe: {deny: ["hidden"]}}}] }\n'
    "  B: { users: [{user: b, password: b}] }\n"
    "}"
)


async def test_permissions_and_accounts_over_websocket_as_nats_server() -> None:
    """Permissions answer a WebSocket client's denied PUB and SUB with nats-server's -ERR (the
    connection stays); accounts keep two WebSocket clients' subjects apart."""
    async with ws_pair(extra=_ACCOUNTS) as sides:
        got = {}
        for kind, side in sides.items():
            a = await WsClient.connect(side.ws_port)
            b = await WsClient.connect(side.ws_port)
            await a.frames(quiet=0.2)
            await b.frames(quiet=0.2)
            a.send(frame(2, b'CONNECT {"verbose":false,"user":"a","pass":"a"}\r\nSUB x 1\r\nSUB hidden 2\r\nPING\r\n'))
            b.send(frame(2, b'CONNECT {"verbose":false,"user":"b","pass":"b"}\r\nSUB x 1\r\nPING\r\n'))
            first_a = await a.until(b"PONG\r\n")
            await b.until(b"PONG\r\n")
            b.send(frame(2, b"PUB x 4\r\nfrom\r\nPING\r\n"))
            from_b = await b.until(b"PONG\r\n")
            a.send(frame(2, b"PUB secret 1\r\ns\r\nPUB x 1\r\na\r\nPING\r\n"))
            second_a = await a.until(b"PONG\r\n")
            _, closed_a = await a.frames(quiet=0.3)
            a.close()
            b.close()
            texts = [re.sub(rb"INFO \{[^\r]*\r\n", b"", t) for t in (first_a, from_b, second_a)]  # async INFOs
            got[kind] = (texts[0].split(b"PONG")[0], texts[1].split(b"PONG")[0], texts[2], closed_a)
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == b"-ERR 'Permissions Violation for Subscription to \"hidden\"'\r\n"
        assert got["real"][1] == b"MSG x 1 4\r\nfrom\r\n"  # b's own message only
        assert got["real"][2] == b"-ERR 'Permissions Violation for Publish to \"secret\"'\r\nMSG x 1 1\r\na\r\nPONG\r\n"


async def test_token_cookie_as_nats_server() -> None:
    block = "port: -1, no_tls: true, token_cookie: t, authorization { token: s3cr3t }"
    cases = [("t=s3cr3t", _ANON), ("t=nope", _ANON), ("", _ANON), ("t=nope", _TOKEN)]
    async with ws_pair(block) as sides:
        got = {}
        for kind, side in sides.items():
            got[kind] = [
                await _ws_attempt(side.ws_port, connect, f"Cookie: {cookie}\r\n" if cookie else "")
                for cookie, connect in cases
            ]
        assert got["jsemu"] == got["real"]
        assert got["real"][0][1] == [(0x82, b"PONG\r\n")]
        assert got["real"][3][1] == [(0x82, b"PONG\r\n")]  # the CONNECT's own token wins


async def test_control_plane_faults_reach_websocket_clients(jsemu_factory: Callable[..., Awaitable[Any]]) -> None:
    """The control plane's faults act on a WebSocket client's messages as on a TCP client's:
    a dropped publish never arrives, a delayed one arrives late, a status answers a request."""
    server = await jsemu_factory(websocket=True)
    client = await WsClient.connect(int(server.ws_url.rsplit(":", 1)[1]))
    await client.frames(quiet=0.1)
    client.send(frame(2, CONNECT + b"SUB f.* 1\r\nSUB _r 2\r\nPING\r\n"))
    await client.until(b"PONG\r\n")
    await client.frames(quiet=0.2)
    server.control.drop("f.drop", count=1)
    server.control.delay("f.late", 0.4, count=1)
    server.control.answer_status("svc", 503, count=1)
    loop = asyncio.get_running_loop()
    start = loop.time()
    client.send(frame(2, b"PUB f.drop 1\r\n1\r\nPUB f.late 1\r\n2\r\nPUB f.now 1\r\n3\r\nPUB svc _r 0\r\n\r\nPING\r\n"))
    first = await client.until(b"PONG\r\n")
    late = await client.until(b"MSG f.late")
    assert b"f.drop" not in first and b"MSG f.now 1 1\r\n3\r\n" in first and b"f.late" not in first
    assert b"HMSG _r 2 " in first and b"503" in first
    assert loop.time() - start >= 0.35 and b"MSG f.late 1 1" in late
    client.close()
