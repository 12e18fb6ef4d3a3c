"""``max_file_store`` / ``max_memory_store`` enforced as nats-server 2.15.1 does, side by side:
10047 / 10028 at create when the reserved ``max_bytes`` would pass the limit, 10023
``insufficient resources`` on a publish once the storage holds more than the limit (the
message that crosses it is still stored), and the account info's usage and reservations."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nats

from jetstream.persistence.test_restart_recovery import Serve


async def _run(port: int) -> list[Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")

    async def api(subject: str, body: Any) -> Any:
        reply = json.loads((await nc.request(subject, json.dumps(body).encode(), timeout=5)).data)
        return reply.get("error") or {k: reply[k] for k in ("did_create",) if k in reply}

    seen: list[Any] = [
        await api("$JS.API.STREAM.CREATE.A", {"name": "A", "subjects": ["a"], "max_bytes": 200000}),
        await api("$JS.API.STREAM.CREATE.M", {"name": "M", "subjects": ["m"], "storage": "memory", "max_bytes": 60000}),
        await api("$JS.API.STREAM.CREATE.B", {"name": "B", "subjects": ["b"], "max_bytes": 60000}),
        await api("$JS.API.STREAM.CREATE.C", {"name": "C", "subjects": ["c"], "max_bytes": 60000}),
        await api("$JS.API.STREAM.CREATE.D", {"name": "D", "subjects": ["d"]}),
        await api("$JS.API.STREAM.CREATE.N", {"name": "N", "subjects": ["n"], "storage": "memory"}),
    ]
    interest = await api("$JS.API.STREAM.CREATE.I", {"name": "I", "subjects": ["i"], "retention": "interest"})
    for subject in ("d", "n"):
        for i in range(200):
            reply = json.loads((await nc.request(subject, b"x" * 1000, timeout=5)).data)
            if "error" in reply:
                seen.append((subject, i, reply))
                break
    # A full store refuses a publish to an interest stream nobody listens to: the storage check
    # comes before the no-interest skip (checked on the binary: 10023, not a PubAck).
    seen.append((interest, json.loads((await nc.request("i", b"y", timeout=5)).data)))
    info = json.loads((await nc.request("$JS.API.INFO", b"", timeout=5)).data)
    seen.append({k: info[k] for k in ("memory", "storage", "reserved_memory", "reserved_storage", "streams")})
    await nc.close()
    return seen


async def test_storage_limits_like_nats_server(tmp_path: Path) -> None:
    config = tmp_path / "server.conf"
    config.write_text("jetstream { max_file_store: 100000, max_memory_store: 50000 }\n")
    results = []
    for kind in ("jsemu", "real"):
        server = await asyncio.to_thread(Serve, kind, tmp_path / kind, config)
        try:
            results.append(await _run(server.port))
        finally:
            await asyncio.to_thread(server.stop)
    assert results[0] == results[1]
    seen = results[0]
    assert [s.get("err_code") for s in seen[:6]] == [10047, 10028, None, 10047, None, None]
    assert seen[6][:2] == ("d", 97) and seen[6][2]["error"]["err_code"] == 10023
    assert seen[7][:2] == ("n", 50)
    assert seen[8][0] == {"did_create": True} and seen[8][1]["error"]["err_code"] == 10023
