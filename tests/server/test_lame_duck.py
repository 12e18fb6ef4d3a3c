"""Lame duck mode in-process, on the controlled clock: the steps of nats-server's
``lameDuckMode`` (listener closed, JetStream quiet, the ``ldm`` INFO, the grace period, the
clients closed one by one at random intervals in [si/2, si), then the server stopped), each
checked at the exact clock reading it is due. The side-by-side run against the binary is
``tests/app/test_lame_duck_process.py``."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from support.rawclient import RawClient

import jsemu
from jsemu.server.lame_duck import close_interval

pytestmark = pytest.mark.fake_only

S = 10**9


def test_close_interval_is_lame_duck_modes() -> None:
    # 2 minutes minus 10 s over 10 clients: 11 s each, capped at 1 s.
    assert close_interval(120 * S, 10 * S, 10) == (S, 1)
    # 30 s minus 25 s over 100 clients: 50 ms each.
    assert close_interval(30 * S, 25 * S, 100) == (50_000_000, 1)
    # A grace period as long as the duration (only possible from Python): 1 s to spread over.
    assert close_interval(30 * S, 30 * S, 4) == (S // 4, 1)
    # More clients than nanoseconds: batches without a wait inside.
    assert close_interval(S + 10, S, 25) == (1, 2)


async def test_lame_duck_schedule_follows_the_controlled_clock() -> None:
    options = jsemu.ServerOptions(host="127.0.0.1", port=0, lame_duck_duration=30 * S, lame_duck_grace_period=5 * S)
    async with jsemu.Server(options) as srv:
        srv.control.freeze_clock()
        srv.rng.seed(7)
        clients = []
        for protocol in (1, 1, 0):
            client = await RawClient.connect(
                srv.port, {"protocol": protocol, "verbose": False, "headers": True, "no_responders": True}
            )
            client.send(b"PING\r\n")
            assert await client.next_frame() == b"PONG\r\n"
            if protocol == 1:  # the INFO after the first PONG
                assert b'"connect_info":true' in (await client.next_frame() or b"")
            clients.append(client)
        create = b'{"name":"S","subjects":["s"],"storage":"memory"}'
        reply = await clients[0].exchange(
            b"SUB _r 1\r\nPUB $JS.API.STREAM.CREATE.S _r %d\r\n%s\r\n" % (len(create), create)
        )
        assert b"did_create" in reply[-1], reply

        assert srv.enter_lame_duck() is True
        assert srv.enter_lame_duck() is False  # once
        # The clients that take async INFO hear of it: ldm, no connect_urls of this server.
        for client in clients[:2]:
            frame = await client.next_frame()
            assert frame is not None and frame.startswith(b"INFO ")
            info = json.loads(frame[5:])
            assert info["ldm"] is True and "connect_urls" not in info
            assert list(info)[-3:] == ["ldm", "api_lvl", "xkey"]
        assert await clients[2].next_frame(0.2) is None  # protocol 0: nothing
        # No new clients; JetStream answers nothing, its stream hears no publish.
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", srv.port)
        assert await clients[0].exchange(b"PUB $JS.API.INFO _r 0\r\n\r\n") == []
        assert await clients[0].exchange(b"PUB s _r 2\r\nhi\r\n") == [
            b"HMSG _r 1 33 33\r\nNATS/1.0 503\r\nNats-Subject: s\r\n\r\n\r\n"
        ]

        # The grace period: nobody closed a nanosecond before it ends.
        srv.control.advance_clock(ns=5 * S - 1)
        await asyncio.sleep(0.05)
        assert not any(c.eof for c in clients) and len(srv.connections) == 3
        expected = random.Random(7)
        si = S  # (30 s - 5 s) / 3 clients, capped at 1 s
        waits = [max(expected.randrange(si), si // 2) for _ in range(2)]
        srv.control.advance_clock(ns=1)
        assert await clients[0].read_until_closed(2.0) == []  # silently
        assert len(srv.connections) == 2
        srv.control.advance_clock(ns=waits[0] - 1)
        await asyncio.sleep(0.05)
        assert len(srv.connections) == 2
        srv.control.advance_clock(ns=1)
        assert await clients[1].read_until_closed(2.0) == []
        srv.control.advance_clock(ns=waits[1])
        assert await clients[2].read_until_closed(2.0) == []
        await asyncio.wait_for(srv.lame_duck_done.wait(), 5)
        assert [c.reason for c in srv.closed_clients][-3:] == ["Server Shutdown"] * 3
        for client in clients:
            await client.close()


async def test_lame_duck_without_clients_stops_at_once() -> None:
    async with jsemu.Server(host="127.0.0.1", port=0, jetstream=False) as srv:
        assert srv.enter_lame_duck() is True
        await asyncio.wait_for(srv.lame_duck_done.wait(), 5)
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", srv.port)


async def test_lame_duck_over_the_control_api() -> None:
    async with jsemu.Server(host="127.0.0.1", port=0, jetstream=False) as srv:
        client = await RawClient.connect(srv.port, {"protocol": 1, "verbose": False})
        assert await client.exchange() == []  # the first PONG (then an INFO: async INFO from now on)
        frames = await client.exchange(b"SUB _r 1\r\nPUB $JSEMU.API.LAME_DUCK _r 0\r\n\r\n")
        assert any(f.startswith(b"INFO ") and b'"ldm":true' in f for f in frames), frames
        assert srv.lame_duck
        await client.close()
