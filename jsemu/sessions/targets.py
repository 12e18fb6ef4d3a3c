"""The server a session is replayed against: a running one (``--against URL``), a fresh
in-process jsemu (``--spawn-jsemu``, JetStream on, as ``nats-server -js``) or a fresh
``nats-server -js`` process (``--spawn-real``, the conformance runner's). A spawned server is
new for each session, so streams a recording created do not exist yet, as when it was recorded
against a fresh server."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from .recorder import parse_hostport

__all__ = ["SPAWN_JSEMU", "SPAWN_REAL", "default_nats_server", "server_at"]

SPAWN_JSEMU = "spawn-jsemu"
SPAWN_REAL = "spawn-real"


def default_nats_server(given: str | None) -> str | None:
    """The nats-server binary: ``given``, else on PATH, else beside this Python; None if none."""
    binary = given or shutil.which("nats-server") or str(Path(sys.executable).parent / "nats-server")
    return binary if os.path.exists(binary) or shutil.which(binary) else None


@asynccontextmanager
async def server_at(target: str, nats_server: str = "nats-server") -> AsyncIterator[tuple[str, int]]:
    """(host, port) of ``target``: ``spawn-jsemu``, ``spawn-real`` or a URL."""
    if target == SPAWN_JSEMU:
        from ..app import Server

        async with Server() as srv:
            yield "127.0.0.1", srv.port
    elif target == SPAWN_REAL:
        from ..conformance.command import _RealProcess

        proc = await asyncio.to_thread(_RealProcess, nats_server, {})
        try:
            yield "127.0.0.1", proc.port
        finally:
            await asyncio.to_thread(proc.stop)
    else:
        yield parse_hostport(target)
