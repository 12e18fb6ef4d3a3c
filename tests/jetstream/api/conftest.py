"""Fixtures of the differential JetStream API suite: a fresh jsemu and a fresh nats-server per
test (the harness, :class:`support.pair.Pair`, says what is compared and how)."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator

import pytest
from support.pair import REAL_REAL, STORAGES, Pair, Side
from support.servers import RealServer

import jsemu


@pytest.fixture
async def pair() -> AsyncIterator[Pair]:
    """jsemu and a real server, both started for this test only.

    A nats-server starts and stops in about 20 ms, so each test gets its own: a shared one
    cleaned between tests (delete every stream) turned out flaky, because nats-server tears a
    deleted stream down in the background and a new stream of the same name created right
    after can fail (10049) or lose its subscription (no responders).
    """
    reals: list[RealServer] = []
    emu_srv: jsemu.Server | None = None
    tmp = tempfile.TemporaryDirectory(prefix="jsemu-pair-")
    try:
        reals.append(RealServer())
        if REAL_REAL:
            reals.append(RealServer())
            emu_port = reals[1].port
        else:
            emu_srv = jsemu.Server(store_dir=tmp.name)
            await emu_srv.start()
            emu_port = emu_srv.port
        p = Pair(await Side.connect("jsemu", emu_port), await Side.connect("real", reals[0].port), reals)
        try:
            yield p
        finally:
            await p.close()
    finally:
        if emu_srv is not None:
            await emu_srv.stop()
        for srv in reals:
            srv.stop()
        tmp.cleanup()


@pytest.fixture(params=STORAGES)
def storage(request: pytest.FixtureRequest) -> str:
    """Parametrise a test over both stream storages."""
    return str(request.param)
