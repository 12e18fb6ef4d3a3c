"""Helpers for differential tests of asynchronous things (mirrors, sources): the real server
copies in the background, so a test polls ``STREAM.INFO`` on both sides before comparing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

INFO = "$JS.API.STREAM.INFO."


def parse_reply(text: str) -> Any:
    """A normalised reply as JSON when it is JSON, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


async def _poll(side: Any, name: str, ready: Callable[[dict[str, Any]], bool], timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got: Any = parse_reply(await side.request(INFO + name, b"", None, 1.0, scrub=False))
        if isinstance(got, dict) and ready(got):
            return
        if loop.time() > deadline:
            raise AssertionError(f"{side.name}: stream {name} not ready after {timeout}s: {got}")
        await asyncio.sleep(0.02)


async def wait_for(pair: Any, name: str, ready: Callable[[dict[str, Any]], bool], timeout: float = 5.0) -> None:
    """Poll ``STREAM.INFO.<name>`` on both servers until ``ready(info)``."""
    results = await asyncio.gather(
        _poll(pair.emu, name, ready, timeout), _poll(pair.real, name, ready, timeout), return_exceptions=True
    )
    for res in results:
        if isinstance(res, BaseException):
            raise res
