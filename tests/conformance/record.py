"""Record the Direct Get fixtures from the real nats-server.

    python -m tests.conformance.record [scenario-id ...]

runs every scenario (or the named ones, updating only those) against a fresh ``nats-server -js``
each and writes ``jsemu/conformance/fixtures.json``: scenario id -> one entry per request, with
the request's description and its normalised reply frames, one frame per line. The output is
deterministic: recording again with the same binary gives the same file.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for support (run as a script)

from support.servers import RealServer, nats_server_binary

from jsemu.conformance import FIXTURES, load_fixtures
from jsemu.conformance.cases import SCENARIOS, by_id
from jsemu.conformance.model import Scenario
from jsemu.conformance.runner import run_scenario


def server_version() -> str:
    out = subprocess.run([nats_server_binary(), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def entries(scenario: Scenario, replies: list[list[str]]) -> list[dict[str, Any]]:
    return [{"request": get.describe(), "reply": reply} for get, reply in zip(scenario.requests, replies, strict=True)]


def load() -> dict[str, Any]:
    return load_fixtures()


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=True) + "\n"


async def record_one(scenario: Scenario) -> list[dict[str, Any]]:
    server = RealServer(scenario.server or None)
    try:
        replies = await run_scenario("127.0.0.1", server.port, scenario)
    finally:
        server.stop()
    return entries(scenario, replies)


async def main(ids: list[str]) -> None:
    chosen = [by_id(i) for i in ids] if ids else SCENARIOS
    old = load()
    recorded: dict[str, Any] = {}
    for scenario in chosen:
        start = time.monotonic()
        recorded[scenario.id] = await record_one(scenario)
        n = len(recorded[scenario.id])
        print(f"{scenario.id}: {n} requests, {time.monotonic() - start:.2f}s", file=sys.stderr)
    data: dict[str, Any] = {"_meta": {"server": server_version(), "scenarios": len(SCENARIOS)}}
    for scenario in SCENARIOS:
        if scenario.id in recorded:
            data[scenario.id] = recorded[scenario.id]
        elif scenario.id in old:
            data[scenario.id] = old[scenario.id]
    FIXTURES.write_text(dump(data))
    total = sum(len(v) for k, v in data.items() if k != "_meta")
    print(f"wrote {FIXTURES} ({len(data) - 1} scenarios, {total} requests)", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
