"""The ``prioritized`` priority policy's configuration and request checks, side by side with
nats-server: which consumer configs it refuses (and with which error), the priority range of
a request, and a priority 0 request that comes in the same read as a priority 1 one while a
message is there to take (jsemu only: see the test)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support.pair import Pair
from support.rawclient import RawClient

import jsemu

from .test_consumers import CREATE, _req, _stream_with

_CONFIGS: list[dict[str, Any]] = [
    {"priority_policy": "prioritized"},
    {"priority_policy": "prioritized", "priority_groups": []},
    {"priority_policy": "prioritized", "priority_groups": ["A"]},
    {"priority_policy": "prioritized", "priority_groups": ["A", "B"]},
    {"priority_policy": "prioritized", "priority_groups": [""]},
    {"priority_policy": "prioritized", "priority_groups": ["a b"]},
    {"priority_policy": "prioritized", "priority_groups": ["x" * 17]},
    {"priority_policy": "prioritized", "priority_groups": ["A"], "priority_timeout": 1_000_000_000},
    {"priority_policy": "prioritized", "priority_groups": ["A"], "deliver_subject": "d"},
    {"priority_policy": "prioritized", "priority_groups": ["A"], "max_waiting": 1},
    {"priority_policy": "Prioritized", "priority_groups": ["A"]},
    {"priority_policy": "", "priority_groups": ["A"]},
    {"priority_policy": "PINNED_CLIENT"},
    {"priority_policy": 1},
    {"priority_policy": "none", "priority_groups": ["A"]},
    {"priority_policy": "overflow", "priority_groups": ["A"], "priority_timeout": 1_000_000_000},
    {"priority_policy": "pinned_client", "priority_groups": ["A"], "priority_timeout": -1},
]


@pytest.mark.parametrize("extra", _CONFIGS, ids=[json.dumps(c) for c in _CONFIGS])
async def test_prioritized_configs(pair: Pair, extra: dict[str, Any]) -> None:
    await _stream_with(pair, 0)
    cfg = {"durable_name": "P", "ack_policy": "explicit", **extra}
    created = await pair.same(f"{CREATE}.P", _req(cfg))
    if "error" not in created:
        await pair.same("$JS.API.CONSUMER.INFO.S.P")
        update = {**cfg, "priority_groups": ["B"]}
        await pair.same(f"{CREATE}.P", _req(update))
