"""``jsemu_factory(users=...)`` / ``token=...``: a server that requires credentials, with its
streams set up all the same."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import nats
import pytest
from nats.errors import NoServersError

from jsemu import Server


async def _refused(url: str, **creds: Any) -> bool:
    try:
        nc = await nats.connect(url, allow_reconnect=False, connect_timeout=2, max_reconnect_attempts=0, **creds)
    except (NoServersError, nats.errors.Error, OSError) as exc:
        return "Authorization Violation" in str(exc) or isinstance(exc, NoServersError)
    await nc.close()
    return False


async def test_factory_users(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    srv = await jsemu_factory(users={"alice": "secret"}, streams=[{"name": "S", "subjects": ["s.>"]}])
    nc = await nats.connect(srv.url, user="alice", password="secret")
    info = await nc.jetstream().stream_info("S")
    assert info.config.name == "S"
    await nc.close()
    assert await _refused(srv.url)
    assert await _refused(srv.url, user="alice", password="wrong")


async def test_factory_token(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    srv = await jsemu_factory(token="t0k")
    nc = await nats.connect(srv.url, token="t0k")
    await nc.close()
    assert await _refused(srv.url, token="nope")


async def test_factory_token_and_users_refused(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    with pytest.raises(ValueError, match="Can not have a token and a users array"):
        await jsemu_factory(token="t", users={"a": "b"})
