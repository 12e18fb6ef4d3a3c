"""Both servers with the same ``websocket {}`` block: nats-server as a process, jsemu in this
process (its options read from the same text), each side's WebSocket and client ports."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from support.servers import RealServer

import jsemu
from jsemu.config.server_config import apply_config, parse_config


@dataclass
class Side:
    kind: str
    ws_port: int
    port: int
    monitor: str = ""  # http://host:port with http_port
    server: Any = None  # the jsemu.Server, on jsemu's side


@asynccontextmanager
async def ws_pair(
    block: str = "port: -1, no_tls: true", extra: str = "", jetstream: bool = False
) -> AsyncIterator[dict[str, Side]]:
    """``{"jsemu": Side, "real": Side}`` with ``websocket { BLOCK }`` and ``extra`` lines."""
    real = RealServer(jetstream=jetstream, websocket=block, conf_text=extra)
    options = jsemu.ServerOptions(host="127.0.0.1", port=0, jetstream=jetstream)
    apply_config(parse_config(f"{extra}\nwebsocket {{ {block} }}\n"), options)
    options.host, options.port = "127.0.0.1", 0
    emu = jsemu.Server(options)
    await emu.start()
    try:
        assert emu.websocket is not None
        yield {
            "jsemu": Side("jsemu", emu.websocket.port, emu.port, (emu.monitor_urls or [""])[0], emu),
            "real": Side("real", int(real.ws_url.rsplit(":", 1)[1]), real.port, real.monitor_url),
        }
    finally:
        await emu.stop()
        real.stop()
