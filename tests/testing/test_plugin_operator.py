"""``jsemu_factory(operator=True, ...)`` and ``jsemu serve --operator-demo DIR``: operator mode
with JWTs minted for the test, ``.creds`` files handed back."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import nats
import pytest

from jsemu import Server
from jsemu.testing.operator import OperatorSetup


async def test_default_operator_server(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    server = await jsemu_factory(operator=True)
    creds = server.operator.users["app"].creds_path
    nc = await nats.connect(server.url, user_credentials=str(creds), allow_reconnect=False)
    try:
        ack = await nc.jetstream().add_stream(name="S", subjects=["s"])
        assert ack.config.name == "S"
        accounts = {c.account.name for c in server.connections.values()}
        assert accounts == {server.operator.accounts["APP"].public_key}
    finally:
        await nc.close()


async def test_accounts_users_and_limits(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    server = await jsemu_factory(
        operator=True,
        accounts={
            "A": {"conn": 1, "users": {"alice": {"pub": {"allow": ["a.>"]}}}},
            "B": {"jetstream": {"streams": 1}, "users": {"bob": None}},
        },
    )
    users = server.operator.users
    alice = await nats.connect(server.url, user_credentials=str(users["alice"].creds_path), allow_reconnect=False)
    errors: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    try:
        with pytest.raises(Exception):  # noqa: B017 - the second of A's one connection
            await nats.connect(
                server.url,
                user_credentials=str(users["alice"].creds_path),
                allow_reconnect=False,
                connect_timeout=2,
                error_cb=on_error,
            )
        assert any("maximum account active connections exceeded" in str(e) for e in errors)
        bob = await nats.connect(server.url, user_credentials=str(users["bob"].creds_path), allow_reconnect=False)
        await bob.jetstream().add_stream(name="ONE", subjects=["one"])
        await bob.close()
    finally:
        await alice.close()


async def test_own_setup_and_bad_arguments(jsemu_factory: Callable[..., Awaitable[Server]], tmp_path: Path) -> None:
    setup = OperatorSetup(tmp_path)
    server = await jsemu_factory(operator=setup, accounts={"X": {"users": {"x": {}}}})
    assert server.operator is setup and (tmp_path / "x.creds").exists()
    with pytest.raises(ValueError, match="operator mode takes users"):
        await jsemu_factory(operator=True, users={"a": "b"})
    with pytest.raises(ValueError, match="account 'X'"):
        await jsemu_factory(operator=True, accounts={"X": {"nonsense": 1}})


def test_serve_operator_demo(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "jsemu", "serve", "-p", "-1", "-a", "127.0.0.1", "--operator-demo", str(tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        deadline, port = time.monotonic() + 20, 0
        while time.monotonic() < deadline and not port:
            line = proc.stderr.readline()
            if "Listening for client connections on" in line:
                port = int(line.rsplit(":", 1)[1])
        assert port and (tmp_path / "app.creds").exists() and (tmp_path / "server.conf").exists()

        async def use() -> None:
            nc = await nats.connect(f"nats://127.0.0.1:{port}", user_credentials=str(tmp_path / "app.creds"))
            await nc.jetstream().add_stream(name="DEMO", subjects=["demo"])
            await nc.close()

        import asyncio

        asyncio.run(use())
    finally:
        proc.terminate()
        proc.wait(10)


async def test_the_clock_controls_an_operator_server(jsemu_factory: Callable[..., Awaitable[Server]]) -> None:
    """Operator mode has no ``$G`` JetStream; the controlled clock is the server's all the same:
    a user whose JWT expires in an hour is closed when the test moves the clock past it."""
    now = int(time.time())
    server = await jsemu_factory(
        operator=True, frozen_clock=now * 1_000_000_000, accounts={"A": {"users": {"u": {"exp": now + 3600}}}}
    )
    closed = asyncio.Event()
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc))

    async def on_closed() -> None:
        closed.set()

    creds = str(server.operator.users["u"].creds_path)
    nc = await nats.connect(
        server.url, user_credentials=creds, allow_reconnect=False, error_cb=on_error, closed_cb=on_closed
    )
    await nc.flush()
    assert server.control.now() == now * 1_000_000_000
    server.control.advance_clock(seconds=3599)
    await nc.flush()
    assert not closed.is_set()
    server.control.advance_clock(seconds=2)
    await asyncio.wait_for(closed.wait(), 5)
    assert [c.reason for c in server.closed_clients] == ["Authentication Expired"], errors
