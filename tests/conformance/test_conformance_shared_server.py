"""``jsemu conformance nats://...`` against a server that already holds other streams (a
developer's ``jsemu serve``, a shared nats-server): every case it can run passes, on jsemu and
on nats-server alike. Stream listings name the other streams too; the runner compares the
case's own entries."""

from __future__ import annotations

import uuid

import nats
from support.servers import Handle

from jsemu.conformance.api_cases import API_CASES
from jsemu.conformance.command import run_all


async def test_runner_copes_with_other_streams(server: Handle) -> None:
    other = f"OTHER_{uuid.uuid4().hex[:8]}"
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    await js.add_stream(name=other, subjects=[f"{other.lower()}.>"])
    await js.create_key_value(bucket=f"{other.lower()}_kv")
    try:
        cases = [case.id for case in API_CASES]
        results = await run_all(server.url, only=[*cases, "t9-basic-memory"])
        bad = [(r.case, r.status, r.request, r.got) for r in results if r.status not in ("pass", "skip")]
        assert bad == []
        skipped = [r.case for r in results if r.status == "skip"]
        assert skipped == [case.id for case in API_CASES if case.fresh_server]
        assert len(results) == len(cases) + 1
    finally:
        await js.delete_stream(other)
        await js.delete_key_value(f"{other.lower()}_kv")
        await nc.close()
