"""The WebSocket port's HTTP upgrade side by side with nats-server 2.15.1, the same
``websocket {}`` block given to both: the ``101`` response byte for byte (compression, the
configured headers), every refusal (status line, headers, body; the ``Date`` aside) and
whether the connection stays for another request, origins (``same_origin``,
``allowed_origins``), requests Go's HTTP server cannot read, the handshake timeout."""

from __future__ import annotations

import asyncio
import re

from support.wsclient import KEY, read_until_quiet, upgrade_request

from .ws_pair import ws_pair

_DATE = re.compile(rb"Date: [^\r]+\r\n")


async def _exchange(port: int, request: bytes, quiet: float = 0.4) -> tuple[bytes, bool]:
    """What the server answers (the head only, for an upgrade) and whether it closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        data, closed = await read_until_quiet(reader, quiet)
    finally:
        writer.close()
    head, sep, _ = data.partition(b"\r\n\r\n")
    if head.startswith(b"HTTP/1.1 101"):
        data = head + sep
    return _DATE.sub(b"Date: <now>\r\n", data), closed


_GOOD = upgrade_request()
_REQUESTS = {
    "upgrade": _GOOD,
    "http/1.0": _GOOD.replace(b"HTTP/1.1", b"HTTP/1.0"),
    "path and query": upgrade_request(path="/some/path?x=1"),
    "post": upgrade_request(method="POST"),
    "no upgrade": _GOOD.replace(b"Upgrade: websocket\r\n", b""),
    "upgrade foo": _GOOD.replace(b"Upgrade: websocket", b"Upgrade: foo"),
    "upgrade in a list": _GOOD.replace(b"Upgrade: websocket", b"Upgrade: foo, WebSocket"),
    "no connection": _GOOD.replace(b"Connection: Upgrade\r\n", b""),
    "connection keep-alive, upgrade": _GOOD.replace(b"Connection: Upgrade", b"Connection: keep-alive, upgrade"),
    "no key": _GOOD.replace(f"Sec-WebSocket-Key: {KEY}\r\n".encode(), b""),
    "short key": _GOOD.replace(KEY.encode(), b"c2hvcnQ="),
    "key not base64": _GOOD.replace(KEY.encode(), b"!!!notbase64!!!!!!!!!!=="),
    "no version": _GOOD.replace(b"Sec-WebSocket-Version: 13\r\n", b""),
    "version 12": _GOOD.replace(b"Version: 13", b"Version: 12"),
    "no host": _GOOD.replace(b"Host: 127.0.0.1\r\n", b""),
    "host line without a colon": _GOOD.replace(b"Host: 127.0.0.1", b"Host127.0.0.1"),
    "control character in a value": upgrade_request(extra="X-A: a\x0eb\r\n"),
    "DEL in a value": upgrade_request(extra="X-A: a\x7fb\r\n"),
    "tab and high bytes in values": upgrade_request(extra="X-A: a\tb\r\nX-B: \x91\r\n"),
    "space in a header name": upgrade_request(extra="X A: b\r\n"),
    "space before the colon": upgrade_request(extra="X-A : b\r\n"),
    "space in the host": _GOOD.replace(b"Host: 127.0.0.1", b"Host: a b"),
    "two hosts": _GOOD.replace(b"Host: 127.0.0.1", b"Host: a\r\nHost: b"),
    "odd host bytes": _GOOD.replace(b"Host: 127.0.0.1", b"Host: [::1]:80,x;y=z~_!"),
    "garbage": b"hello world\r\n\r\n",
    "binary garbage": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(40)) + b"\r\n\r\n",
    "origin, no checks": upgrade_request(extra="Origin: http://evil.example\r\n"),
    "deflate offered, not configured": upgrade_request(extra="Sec-WebSocket-Extensions: permessage-deflate\r\n"),
    "no masking": upgrade_request(extra="Nats-No-Masking: true\r\n"),
    "no masking, not true": upgrade_request(extra="Nats-No-Masking: TRUE\r\n"),
}


async def test_upgrades_and_refusals_as_nats_server() -> None:
    async with ws_pair() as sides:
        names = list(_REQUESTS)
        answers = await asyncio.gather(
            *(_exchange(side.ws_port, _REQUESTS[name]) for side in sides.values() for name in names)
        )
        got = {
            kind: dict(zip(names, answers[i * len(names) : (i + 1) * len(names)], strict=True))
            for i, kind in enumerate(sides)
        }
        for name in _REQUESTS:
            assert got["jsemu"][name] == got["real"][name], name
        assert got["real"]["post"][0].startswith(b"HTTP/1.1 405 Method Not Allowed\r\n")
        assert got["real"]["garbage"] == (
            b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request",
            True,
        )


async def test_a_refused_request_leaves_the_connection_for_the_next_as_nats_server() -> None:
    async with ws_pair() as sides:
        got = {}
        for kind, side in sides.items():
            reader, writer = await asyncio.open_connection("127.0.0.1", side.ws_port)
            writer.write(_REQUESTS["no key"])
            first, closed = await read_until_quiet(reader)
            assert not closed
            writer.write(_GOOD)
            second, _ = await read_until_quiet(reader)
            writer.close()
            got[kind] = (_DATE.sub(b"", first), second.partition(b"\r\n\r\n")[0])
        assert got["jsemu"] == got["real"]
        assert got["real"][1].startswith(b"HTTP/1.1 101 Switching Protocols")


_CONFIGURED = (
    'port: -1, no_tls: true, compression: true, same_origin: true, allowed_origins: ["http://a.example:8080"], '
    'headers: { "X-Custom": "yes", "Cache-Control": "no-store" }'
)


_CONFIGURED_CASES = [
    (
        "deflate offered",
        "a.example:8080",
        "Origin: http://a.example:8080\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n",
    ),
    ("deflate among others", "a.example:8080", "Sec-WebSocket-Extensions: x-foo, permessage-deflate\r\n"),
    ("no origin", "anything", ""),
    ("same origin, not allowed", "b.example:8080", "Origin: http://b.example:8080\r\n"),
    ("allowed, not same", "127.0.0.1", "Origin: http://a.example:8080\r\n"),
    ("other port", "a.example:8080", "Origin: http://a.example:8081\r\n"),
    ("other scheme", "a.example:8080", "Origin: https://a.example:8080\r\n"),
    ("not a URL", "a.example:8080", "Origin: not a url\r\n"),
    ("Sec-WebSocket-Origin", "a.example:8080", "Sec-WebSocket-Origin: http://c.example\r\n"),
]


async def test_origins_compression_and_headers_as_nats_server() -> None:
    await _compare_upgrades(_CONFIGURED, _CONFIGURED_CASES)


_ALLOWED_CASES = [
    ("listed", "127.0.0.1", "Origin: http://a.example:8080\r\n"),
    ("listed, https default port", "127.0.0.1", "Origin: https://b.example\r\n"),
    ("listed host, other port", "127.0.0.1", "Origin: http://a.example:8081\r\n"),
    ("listed host, default port", "127.0.0.1", "Origin: http://a.example\r\n"),
    ("upper case host", "127.0.0.1", "Origin: http://A.EXAMPLE:8080\r\n"),
]


async def test_allowed_origins_alone_as_nats_server() -> None:
    block = 'port: -1, no_tls: true, allowed_origins: ["http://a.example:8080", "https://b.example"]'
    await _compare_upgrades(block, _ALLOWED_CASES)


async def _upgrade(port: int, host: str, extra: str) -> tuple[bytes, list[bytes], bool]:
    data, closed = await _exchange(port, upgrade_request(host, extra))
    status, _, rest = data.partition(b"\r\n")
    # nats-server writes the configured headers in Go's (random) map order.
    return status, sorted(rest.split(b"\r\n")), closed


async def _compare_upgrades(block: str, cases: list[tuple[str, str, str]]) -> None:
    async with ws_pair(block) as sides:
        answers = await asyncio.gather(
            *(_upgrade(side.ws_port, host, extra) for side in sides.values() for _, host, extra in cases)
        )
        for i, (name, _, _) in enumerate(cases):
            assert answers[i] == answers[len(cases) + i], name


#: Request heads never finished, and what the handshake timeout does with them: Go's line
#: reader takes the unfinished line as whole at the deadline, so one that does not parse
#: gets a 400, one that does (or none) a silent close.
_UNFINISHED = [
    b"GET / HTTP/1.1\r\nHost: x\r\n",
    b"",
    b"GE",
    b"x",
    b"GET / HTTP/1.1",
    b"GET / HTTP/1.1\r\n",
    b"GET / HTTP/1.1\r\nHo",
    b"GET / HTTP/1.1\r\nHost: x",
]


async def _unfinished(port: int, data: bytes) -> tuple[bytes, bool, bool]:
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    start = loop.time()
    answer, closed = await read_until_quiet(reader, quiet=3)
    writer.close()
    return answer, closed, 0.2 < loop.time() - start < 2.5


async def test_handshake_timeout_closes_a_silent_socket_as_nats_server() -> None:
    async with ws_pair("port: -1, no_tls: true, handshake_timeout: 300ms") as sides:
        got = {
            kind: await asyncio.gather(*(_unfinished(side.ws_port, data) for data in _UNFINISHED))
            for kind, side in sides.items()
        }
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == (b"", True, True)
        assert got["real"][2][0].startswith(b"HTTP/1.1 400 Bad Request\r\n")
