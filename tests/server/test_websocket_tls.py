"""``wss://`` side by side with nats-server 2.15.1: the same ``websocket { tls { } }`` block
(certificates made by ``trustme`` in the test) given to both. The upgrade over TLS byte for
byte, the INFO frame (``tls_required``/``tls_available``, the WebSocket port's host and port),
a round trip, ``same_origin`` taking ``https`` as the request's own scheme, a plain-text
client on the TLS port (Go's ``Client sent an HTTP request to an HTTPS server``), and
nats-py over ``wss://``."""

from __future__ import annotations

import asyncio
import re
import ssl
from pathlib import Path
from typing import Any

import nats
import pytest
import trustme
from support.wsclient import CONNECT, WsClient, frame, info_of, read_until_quiet, upgrade_request

from .ws_pair import ws_pair

pytest.importorskip("aiohttp")  # nats-py's WebSocket transport
pytestmark = pytest.mark.filterwarnings("ignore:parameter 'timeout' of type 'float':DeprecationWarning")

_DATE = re.compile(rb"Date: [^\r]+\r\n")


class Certs:
    def __init__(self, where: Path) -> None:
        ca = trustme.CA()
        server = ca.issue_cert("127.0.0.1", "localhost")
        self.ca, self.cert, self.key = where / "ca.pem", where / "cert.pem", where / "key.pem"
        ca.cert_pem.write_to_path(str(self.ca))
        server.cert_chain_pems[0].write_to_path(str(self.cert))
        server.private_key_pem.write_to_path(str(self.key))

    def block(self, extra: str = "") -> str:
        return f'port: -1, {extra} tls {{ cert_file: "{self.cert}", key_file: "{self.key}" }}'

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("wss"))


async def _tls_exchange(port: int, request: bytes, context: ssl.SSLContext) -> tuple[bytes, bool]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    try:
        writer.write(request)
        data, closed = await read_until_quiet(reader, 0.4)
    finally:
        writer.close()
    return _DATE.sub(b"Date: <now>\r\n", data), closed


async def test_wss_upgrade_info_and_round_trip_as_nats_server(certs: Certs) -> None:
    async with ws_pair(certs.block("same_origin: true,")) as sides:
        got = {}
        for kind, side in sides.items():
            origin = f"Origin: https://127.0.0.1:{side.ws_port}\r\n"
            client = await WsClient.connect(side.ws_port, origin, host=f"127.0.0.1:{side.ws_port}", ssl=certs.context())
            first, _ = await client.frames(quiet=0.3)
            info = info_of(first[0].text())
            client.send(frame(2, CONNECT + b"SUB a 1\r\nPUB a 5\r\nhello\r\nPING\r\n"))
            echoed = (await client.until(b"PONG\r\n")).partition(b"INFO ")[0]  # the async INFO aside
            client.close()
            assert (info["host"], info["port"]) == ("0.0.0.0", side.ws_port), info
            got[kind] = (client.head, first[0].first, list(info), info["tls_required"], info["tls_available"], echoed)
        assert got["jsemu"] == got["real"]
        assert got["real"][3:] == (True, True, b"MSG a 1 5\r\nhello\r\nPONG\r\n")


async def test_wss_origins_as_nats_server(certs: Certs) -> None:
    """With TLS the request's own origin is ``https://host:port``: ``http`` is another
    origin (403), as is any other host."""
    async with ws_pair(certs.block("same_origin: true,")) as sides:
        got = {}
        for kind, side in sides.items():
            host = f"127.0.0.1:{side.ws_port}"
            answers = []
            for origin in (f"http://{host}", "https://evil.example", f"https://{host}"):
                data, closed = await _tls_exchange(
                    side.ws_port, upgrade_request(host, f"Origin: {origin}\r\n"), certs.context()
                )
                answers.append((data.partition(b"\r\n\r\n")[0] if b" 101 " in data[:20] else data, closed))
            got[kind] = answers
        assert got["jsemu"] == got["real"]
        assert got["real"][0][0].startswith(b"HTTP/1.1 403 Forbidden\r\n")
        assert got["real"][2][0].startswith(b"HTTP/1.1 101 ")


async def test_plain_text_on_the_wss_port_as_nats_server(certs: Certs) -> None:
    """An HTTP request in the clear gets Go's answer to it and the close; bytes that look
    like neither HTTP nor TLS a close without a word; a WebSocket client over TLS on the same
    port is not disturbed."""
    async with ws_pair(certs.block()) as sides:
        got = {}
        for kind, side in sides.items():
            bystander = await WsClient.connect(side.ws_port, ssl=certs.context())
            await bystander.frames(quiet=0.2)
            bystander.send(frame(2, CONNECT + b"PING\r\n"))
            await bystander.until(b"PONG\r\n")
            answers = []
            for data in (upgrade_request(), b"POST / HTTP/1.1\r\n\r\n", b"\x00\x01garbage\r\n", b"GE"):
                reader, writer = await asyncio.open_connection("127.0.0.1", side.ws_port)
                writer.write(data)
                if data == b"GE":
                    writer.write_eof()
                answers.append(await read_until_quiet(reader, 1.0))
                writer.close()
            bystander.send(frame(2, b"PING\r\n"))
            answers.append((await bystander.until(b"PONG\r\n"), False))
            bystander.close()
            got[kind] = answers
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == (
            b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n",
            True,
        )


async def _nats_py(url: str, context: ssl.SSLContext) -> list[Any]:
    nc = await nats.connect(url, tls=context, allow_reconnect=False)
    try:
        sub = await nc.subscribe("secure.*")
        await nc.publish("secure.a", b"over wss", headers={"X-T": "1"})
        msg = await sub.next_msg(timeout=3)

        async def echo(m: Any) -> None:
            await m.respond(m.data.upper())

        await nc.subscribe("svc", cb=echo)
        reply = await nc.request("svc", b"abc", timeout=3)
        return [msg.subject, msg.data, dict(msg.headers or {}), reply.data, nc.connected_url.scheme]
    finally:
        await nc.close()


async def test_nats_py_over_wss_as_nats_server(certs: Certs) -> None:
    async with ws_pair(certs.block()) as sides:
        got = {kind: await _nats_py(f"wss://127.0.0.1:{side.ws_port}", certs.context()) for kind, side in sides.items()}
        assert got["jsemu"] == got["real"]
        assert got["real"] == ["secure.a", b"over wss", {"X-T": "1"}, b"ABC", "wss"]


async def test_a_client_that_never_finishes_the_tls_handshake_costs_nothing(certs: Certs) -> None:
    async with ws_pair(certs.block()) as sides:
        for side in sides.values():
            stuck = []
            for _ in range(5):
                _, writer = await asyncio.open_connection("127.0.0.1", side.ws_port)
                writer.write(b"\x16\x03\x01\x02\x00")  # a TLS record header, then nothing
                stuck.append(writer)
            client = await WsClient.connect(side.ws_port, ssl=certs.context())
            await client.frames(quiet=0.2)
            client.send(frame(2, CONNECT + b"PING\r\n"))
            assert b"PONG\r\n" in await client.until(b"PONG\r\n"), side.kind
            client.close()
            for writer in stuck:
                writer.close()
