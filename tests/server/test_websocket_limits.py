"""Frame and message size limits on the WebSocket port, side by side with nats-server 2.15.1.

An uncompressed frame has no limit of its own (the NATS protocol inside it has
``max_payload``). A compressed message may carry at most 8 x ``max_payload`` compressed
bytes and ``max_payload`` inflated ones (``wsDecompressAndParse``): past either the client
is closed (1009, ``Maximum Message Payload Exceeded``), what was inflated up to
``max_payload`` parsed first (another subscriber gets those messages); a frame of a few KB
that inflates to 50 MB costs nothing. nats-server closes without getting its own frames out
(a race on its side): what it sends must be a prefix of what jsemu sends."""

from __future__ import annotations

import asyncio
import os
import re
import zlib

from support.wsclient import CONNECT, WsClient, frame, read_until_quiet, split_frames

from .ws_pair import Side, ws_pair

_OFFER = "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; server_no_context_takeover\r\n"
_PUBS = b"PUB a 10\r\n0123456789\r\n"


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return (c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH))[:-4]


_CASES = {
    "inflates past max_payload": [frame(2, _deflate(CONNECT + _PUBS * 50 + b"PING\r\n"), rsv1=True)],
    "the same in two fragments": [
        # (not an empty final fragment: nats-server completes no message on one that ends a read)
        frame(2, _deflate(CONNECT + _PUBS * 50 + b"PING\r\n")[:50], fin=False, rsv1=True),
        frame(0, _deflate(CONNECT + _PUBS * 50 + b"PING\r\n")[50:]),
    ],
    "under max_payload": [frame(2, _deflate(CONNECT + _PUBS * 30 + b"PING\r\n"), rsv1=True)],
    "50 MB of zeros in a few KB": [frame(2, _deflate(CONNECT + b"\0" * (50 << 20)), rsv1=True)],
    # Messages that would inflate fine one by one, in one frame of more than 8,000 compressed
    # bytes: refused before anything is inflated.
    "over 8 x max_payload compressed": [
        frame(2, _deflate(CONNECT + b"".join(b"PUB a 80\r\n%b\r\n" % os.urandom(80) for _ in range(120))), rsv1=True)
    ],
    "uncompressed, 2 MB in one frame": [frame(2, CONNECT + _PUBS * 90_000 + b"PING\r\n")],
}


async def _case(side: Side, frames: list[bytes]) -> tuple[int, bool, bytes]:
    """What a TCP subscriber of ``a`` gets, whether the WebSocket client was closed, and the
    frames it got (INFO aside)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", side.port, limit=1 << 24)
    await reader.readuntil(b"\r\n")
    writer.write(CONNECT + b"SUB a 1\r\nPING\r\n")
    await reader.readuntil(b"PONG\r\n")
    client = await WsClient.connect(side.ws_port, _OFFER)
    await client.frames(quiet=0.2)
    client.send(*frames)
    data, closed = await read_until_quiet(client.reader, 1.0, limit=20)
    if not closed and b"PONG" not in b"".join(f.text() for f in split_frames(data)[0]):
        # a loaded machine may take over a second to route 90,000 messages: wait for the PONG
        more, closed = await read_until_quiet(client.reader, 10.0, limit=20)
        data += more
    client.close()
    writer.write(b"PING\r\n")  # after everything the WebSocket client's input routed to it
    got = await asyncio.wait_for(reader.readuntil(b"PONG\r\n"), 30)
    writer.close()
    found, _ = split_frames(data)
    shown = b"".join(bytes([f.first]) + f.text() for f in found)
    return got.count(b"MSG a 1 "), closed, re.sub(rb"INFO \{[^\r]*\r\n", b"INFO\r\n", shown)


async def test_message_size_limits_as_nats_server() -> None:
    async with ws_pair("port: -1, no_tls: true, compression: true", extra="max_payload: 1000") as sides:
        got = {kind: [await _case(side, case) for case in _CASES.values()] for kind, side in sides.items()}
    for name, emu, real in zip(_CASES, got["jsemu"], got["real"], strict=True):
        assert emu[:2] == real[:2], (name, emu[:2], real[:2])
        assert emu[2].startswith(real[2]), name
    results = dict(zip(_CASES, got["jsemu"], strict=True))
    assert results["inflates past max_payload"][:2] == (42, True)
    assert results["inflates past max_payload"][2].endswith(b"\x88\x03\xf1Maximum Message Payload Exceeded")
    assert results["under max_payload"][:2] == (30, False)
    assert results["50 MB of zeros in a few KB"][1]
    assert results["over 8 x max_payload compressed"][:2] == (0, True)
    assert results["uncompressed, 2 MB in one frame"][:2] == (90_000, False)
