"""Fixtures of the client-level tests: a nats-py connection and JetStream context to ``server``,
and :class:`support.names.Names` for the test (the real server is shared by the whole session
and keeps its streams, so every test names its own and deletes them afterwards)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import nats
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from support.names import Names


@pytest.fixture
async def nc(server) -> AsyncIterator[NATS]:  # type: ignore[no-untyped-def]
    conn = await nats.connect(server.url)
    yield conn
    await conn.close()


#: Request timeout of the JetStream contexts: short, so that a request jsemu does not answer yet
#: fails fast (the servers are local and answer in milliseconds).
JS_TIMEOUT = 2.0


@pytest.fixture
def js(nc: NATS) -> JetStreamContext:
    return nc.jetstream(timeout=JS_TIMEOUT)


@pytest.fixture
async def names(server, nc: NATS) -> AsyncIterator[Names]:  # type: ignore[no-untyped-def]
    """Names for this test; on the shared real server their streams are deleted afterwards (a jsemu
    server is private to the test and goes away with it)."""
    n = Names()
    yield n
    if server.kind == "real" and nc.is_connected:
        await n.cleanup(nc.jetstream())
