"""Connection and subscription limits as nats-server enforces them (both servers, same bytes):
one connection too many gets INFO, ``-ERR 'maximum connections exceeded'`` and is closed;
one subscription too many on a connection gets ``-ERR 'maximum subscriptions exceeded'``
and the connection stays (an UNSUB makes room again)."""

from __future__ import annotations

import json
from typing import Any

from support.rawclient import RawClient

from jsemu.config.server_config import load_config
from jsemu.server.options import ServerOptions


async def test_one_connection_too_many_is_refused_after_info(server_factory: Any) -> None:
    srv = await server_factory(max_connections=2)
    first = await RawClient.connect(srv.port, {"verbose": False})
    second = await RawClient.connect(srv.port, {"verbose": False})
    assert await first.round_trip() == [] and await second.round_trip() == []
    third = await RawClient.connect(srv.port)
    assert third.info["client_id"] > 0
    assert await third.read_until_closed() == [b"-ERR 'maximum connections exceeded'\r\n"]
    # A place freed is a place again.
    await first.close()
    await second.round_trip()
    again = None
    for _ in range(50):  # the server notices the close when it reads it
        again = await RawClient.connect(srv.port, {"verbose": False})
        frames = await again.round_trip()
        if frames == []:
            break
        await again.close()
    assert again is not None and not again.eof
    for client in (second, third, again):
        await client.close()


async def test_one_subscription_too_many_is_refused_and_the_connection_stays(server_factory: Any) -> None:
    srv = await server_factory(max_subscriptions=2)
    client = await RawClient.connect(srv.port, {"verbose": True})
    frames = await client.exchange(b"SUB a 1\r\nSUB b 2\r\nSUB c 3\r\nSUB a 1\r\n")
    assert frames == [b"+OK\r\n"] * 3 + [b"-ERR 'maximum subscriptions exceeded'\r\n"] * 2
    frames = await client.exchange(b"UNSUB 1\r\nSUB c 3\r\nSUB d q 4\r\n")
    assert frames == [b"+OK\r\n", b"+OK\r\n", b"-ERR 'maximum subscriptions exceeded'\r\n"]
    # Another connection has its own count; the refused SUB c 3 above does not deliver.
    other = await RawClient.connect(srv.port, {"verbose": False})
    assert await other.exchange(b"SUB x 1\r\nSUB y 2\r\nPUB c 2\r\nhi\r\n") == []
    assert await client.round_trip() == [b"MSG c 3 2\r\nhi\r\n"]
    await client.close()
    await other.close()


def test_the_config_keys_and_their_aliases(tmp_path: Any) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text("max_conn: 7\nmax_subs: 9\n")
    options = ServerOptions()
    load_config(str(conf), options)
    assert (options.max_connections, options.max_subscriptions) == (7, 9)
    conf.write_text("max_connections: 3\nmax_subscriptions: 4\n")
    load_config(str(conf), options)
    assert json.dumps([options.max_connections, options.max_subscriptions]) == "[3, 4]"
