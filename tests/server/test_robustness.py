"""One bad or slow client never costs another its connection; idle clients are pinged."""

from __future__ import annotations

import asyncio

from support.rawclient import RawClient

QUIET = {"verbose": False, "pedantic": False}

BAD_INPUTS = [
    b"FOO\r\n",
    b"PUB foo 2000000\r\n",
    b"SUB " + b"x" * 5000 + b"\r\n",
    b"CONNECT {bad\r\n",
    b"PUB foo 3\r\nhello\r\n",
    b"\x00\xff\xfe garbage \r\n",
    b"HPUB foo 99 1\r\n",
]


async def test_bad_input_only_closes_the_sender(server) -> None:
    good = await RawClient.connect(server.port, QUIET)
    await good.exchange(b"SUB foo 1\r\n")
    for bad_input in BAD_INPUTS:
        bad = await RawClient.connect(server.port, QUIET)
        await bad.exchange(b"SUB foo 9\r\nPUB foo 1\r\nb\r\n")
        bad.send(bad_input)
        await bad.read_until_closed()
        assert bad.eof
        await bad.close()
        # The good client still works and saw the bad client's valid message.
        frames = await good.exchange(b"PUB foo 1\r\ng\r\n")
        assert frames == [b"MSG foo 1 1\r\nb\r\n", b"MSG foo 1 1\r\ng\r\n"], bad_input
    await good.close()


async def test_stale_connection(server_factory) -> None:
    srv = await server_factory(ping_interval=0.1, max_pings_out=2)
    client = await RawClient.connect(srv.port, b'CONNECT {"verbose":false}\r\n')
    frames = await client.read_until_closed(timeout=10)
    assert frames == [b"PING\r\n", b"PING\r\n", b"-ERR 'Stale Connection'\r\n"]


async def test_answered_pings_keep_connection(server_factory) -> None:
    srv = await server_factory(ping_interval=0.1, max_pings_out=2)
    client = await RawClient.connect(srv.port, b'CONNECT {"verbose":false}\r\n')
    pings = 0
    while pings < 4:
        frame = await client.next_frame(5)
        assert frame == b"PING\r\n"
        pings += 1
        client.send(b"PONG\r\n")
    assert await client.exchange() == []
    await client.close()


async def test_slow_consumer_is_cut_others_unaffected(server_factory) -> None:
    # 2 MB of slack: under a loaded CI machine (4 test workers on 2 cores) the fast reader may stall for a
    # moment; the 40 MB flood still overruns the slow one many times over.
    srv = await server_factory(max_pending=2 * 1024 * 1024, max_payload=2048, process=True)
    slow = await RawClient.connect(srv.port, QUIET)
    await slow.exchange(b"SUB flood 1\r\n")
    fast = await RawClient.connect(srv.port, QUIET)
    await fast.exchange(b"SUB flood 2\r\n")
    pub = await RawClient.connect(srv.port, QUIET)
    chunk = b"PUB flood 2000\r\n" + b"x" * 2000 + b"\r\n"
    received = 0

    async def drain_fast() -> None:
        # Count raw bytes rather than parsing frames, so this reader keeps up.
        nonlocal received
        seen = 0
        while received < 20000:
            data = await asyncio.wait_for(fast.reader.read(1 << 20), 10)
            assert data
            seen += len(data)
            received = seen // len(b"MSG flood 2 2000\r\n" + b"x" * 2000 + b"\r\n")

    reader = asyncio.create_task(drain_fast())
    # 40 MB in 20,000 messages, far more than loopback socket buffers hold; `slow` never reads.
    for _ in range(200):
        pub.send(chunk * 100)
        await pub.writer.drain()
    await asyncio.wait_for(reader, 30)
    assert received == 20000
    # The slow client was disconnected; reading what it has ends in EOF.
    total = 0
    while True:
        frame = await slow.next_frame(5)
        if frame is None:
            break
        total += 1
    assert slow.eof and total < 20000
    assert [f for f in await pub.exchange() if f != b"PING\r\n"] == []
    for c in (slow, fast, pub):
        await c.close()
