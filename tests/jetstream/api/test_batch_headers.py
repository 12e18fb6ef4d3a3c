"""Batch publish headers on a stream that does not allow batches (``allow_atomic`` off; atomic
batches themselves are in ``test_atomic_batch.py``), side by side with
nats-server 2.15.1: each header alone and together, with and without a reply, then the
stream's state (nothing stored)."""

from __future__ import annotations

import pytest
from support.pair import Pair

HEADERS: list[dict[str, str]] = [
    {"Nats-Batch-Id": "b1"},
    {"Nats-Batch-Id": "b1", "Nats-Batch-Sequence": "1"},
    {"Nats-Batch-Id": "b1", "Nats-Batch-Sequence": "1", "Nats-Batch-Commit": "1"},
    {"Nats-Batch-Sequence": "1"},
    {"Nats-Batch-Commit": "1"},
    {"Nats-Batch-Id": ""},
    {"Nats-Fast-Batch-Id": "f1"},
    {"Nats-Fast-Batch-Id": "f1", "Nats-Batch-Sequence": "1"},
    {"Nats-Batch-Id": "b1", "Nats-Msg-Id": "m1"},
    {"Nats-Batch-Id": "b1", "Nats-Expected-Stream": "OTHER"},
    {"Nats-Expected-Stream": "OTHER", "Nats-Batch-Id": "b1"},
    {"Nats-Incr": "1", "Nats-Batch-Id": "b1"},
]


@pytest.mark.parametrize("headers", HEADERS, ids=[",".join(f"{k}={v}" for k, v in h.items()) for h in HEADERS])
async def test_batch_headers_on_a_stream_without_batches(pair: Pair, headers: dict[str, str]) -> None:
    await pair.create("B", subjects=["b.>"], storage="memory")
    await pair.same("b.1", b"x", headers)
    await pair.info("B")


async def test_batch_id_comes_before_the_stream_rules(pair: Pair) -> None:
    """Refused as a batch before the size limit, a sealed stream or a rollup are looked at."""
    await pair.create("B", subjects=["b.>"], storage="memory", max_msg_size=8, allow_rollup_hdrs=True)
    await pair.same("b.1", b"x" * 20, {"Nats-Batch-Id": "b1"})
    await pair.same("b.1", b"x", {"Nats-Batch-Id": "b1", "Nats-Rollup": "bad"})
    await pair.publish("b.2", b"x", {"Nats-Batch-Id": "b1"})  # no reply: nothing stored
    cfg = (await pair.info("B"))["config"]
    await pair.same("$JS.API.STREAM.UPDATE.B", {**cfg, "sealed": True})
    await pair.same("b.1", b"x", {"Nats-Batch-Id": "b1"})
    await pair.info("B")
