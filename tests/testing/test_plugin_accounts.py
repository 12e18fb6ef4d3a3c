"""``jsemu_factory(accounts={...})``: a server with accounts, each with its own subjects and
JetStream, and its users, as an ``accounts`` block in a config file makes it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import nats
import pytest

from jsemu import Server


async def test_factory_accounts_are_isolated(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    srv = await jsemu_factory(
        accounts={"A": {"users": {"a": "pa"}, "jetstream": True}, "B": {"users": {"b": "pb"}}},
        users={"g": "pg"},
    )
    host = srv.url.removeprefix("nats://")
    a = await nats.connect(f"nats://a:pa@{host}", allow_reconnect=False)
    b = await nats.connect(f"nats://b:pb@{host}", allow_reconnect=False)
    a2 = await nats.connect(f"nats://a:pa@{host}", allow_reconnect=False)
    seen_b = await b.subscribe("x")
    seen_a = await a2.subscribe("x")
    await a2.flush()
    await a.publish("x", b"from A")
    await a.flush()
    assert (await seen_a.next_msg(timeout=2)).data == b"from A"
    with pytest.raises(nats.errors.TimeoutError):
        await seen_b.next_msg(timeout=0.3)
    # A has JetStream, B has not (the server's 10039 "JetStream not enabled for account").
    await a.jetstream().add_stream(name="S", subjects=["s.>"])
    assert (await a.jetstream().publish("s.1", b"v")).seq == 1
    with pytest.raises(nats.js.errors.APIError, match="not enabled"):
        await b.jetstream().add_stream(name="S", subjects=["s.>"])
    with pytest.raises(Exception, match="Authorization Violation"):
        await nats.connect(f"nats://a:wrong@{host}", allow_reconnect=False, connect_timeout=2)
    g = await nats.connect(f"nats://g:pg@{host}", allow_reconnect=False)
    await asyncio.gather(*(nc.close() for nc in (a, a2, b, g)))


async def test_factory_accounts_bad_arguments(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    with pytest.raises(ValueError, match="unknown keys"):
        await jsemu_factory(accounts={"A": {"user": {"a": "pa"}}})
    with pytest.raises(ValueError, match="Duplicate user"):
        await jsemu_factory(accounts={"A": {"users": {"a": "pa"}}}, users={"a": "x"})
    with pytest.raises(ValueError, match="token"):
        await jsemu_factory(accounts={"A": {"users": {"a": "pa"}}}, token="t")


async def test_factory_account_jetstream_limits(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    """``"jetstream": {limits}`` sets the account's limits, as the file's account block does."""
    srv = await jsemu_factory(accounts={"A": {"users": {"a": "pa"}, "jetstream": {"max_streams": 1, "max_mem": 1024}}})
    a = await nats.connect(f"nats://a:pa@{srv.url.removeprefix('nats://')}", allow_reconnect=False)
    js = a.jetstream()
    info = await js.account_info()
    assert (info.limits.max_streams, info.limits.max_memory) == (1, 1024)
    await js.add_stream(name="S", subjects=["s"])
    with pytest.raises(nats.js.errors.APIError, match="maximum number of streams reached"):
        await js.add_stream(name="T", subjects=["t"])
    await a.close()
    with pytest.raises(ValueError, match='parseable size for "max_mem"'):
        await jsemu_factory(accounts={"A": {"users": {"a": "pa"}, "jetstream": {"max_mem": "x"}}})
