"""Record the stream API conformance cases from the real nats-server:
``python -m tests.conformance.record_api`` writes ``jsemu/conformance/api_fixtures.json``
(case id -> [{"request": subject, "reply": normalised reply}]), one fresh server per case."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from jsemu.conformance.api_cases import API_CASES, API_FIXTURES, run_api_case

from .record import RealServer, server_version  # record puts tests/ on sys.path first


async def record() -> dict[str, Any]:
    data: dict[str, Any] = {"_meta": {"server": server_version()}}
    for case in API_CASES:
        server = RealServer()
        try:
            replies = await run_api_case("127.0.0.1", server.port, case)
        finally:
            server.stop()
        data[case.id] = [{"request": s, "reply": r} for (s, _), r in zip(case.steps, replies, strict=True)]
    return data


def main() -> None:
    data = asyncio.run(record())
    API_FIXTURES.write_text(json.dumps(data, indent=1, ensure_ascii=True) + "\n")
    print(f"wrote {API_FIXTURES} ({len(data) - 1} cases)", file=sys.stderr)


if __name__ == "__main__":
    main()
