"""The authentication timeout runs on the server's clock: with the controlled clock
frozen a silent client is not timed out however long it waits, and advancing the clock past
the timeout closes it at once; with the clock running, it is timed out in real time (the
side-by-side test in ``test_auth.py``)."""

from __future__ import annotations

import asyncio

import pytest
from support.rawclient import RawClient

import jsemu
from jsemu.server.auth import Auth, User

pytestmark = pytest.mark.fake_only


async def test_auth_timeout_follows_the_controlled_clock() -> None:
    auth = Auth(user=User("a", "b"), timeout=0.3)
    async with jsemu.Server(host="127.0.0.1", port=0, auth=auth) as srv:
        srv.control.freeze_clock()
        silent = await RawClient.connect(srv.port)
        await asyncio.sleep(0.6)
        assert await silent.next_frame(0.2) is None and not silent.eof
        srv.control.advance_clock(seconds=0.31)
        assert await silent.read_until_closed(2.0) == [b"-ERR 'Authentication Timeout'\r\n"]
        await silent.close()
        # A client that logs in in time is not closed by a later clock step.
        good = await RawClient.connect(srv.port, {"user": "a", "pass": "b", "verbose": False})
        assert await good.exchange() == []
        srv.control.advance_clock(seconds=10)
        good.send(b"SUB x 1\r\nPUB x 1\r\nz\r\n")
        assert await good.exchange() == [b"MSG x 1 1\r\nz\r\n"]
        await good.close()
