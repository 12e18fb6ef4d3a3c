"""nats-py's pull consumers on jsemu and on nats-server: the same messages, metadata, acks
and consumer info (``pull_subscribe`` + ``fetch``, ``ack`` / ``nak`` / ``term`` /
``in_progress``, ``add_consumer`` / ``consumer_info`` / ``delete_consumer``)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError


def _info_numbers(info: Any) -> dict[str, Any]:
    return {
        "delivered": (info.delivered.consumer_seq, info.delivered.stream_seq),
        "ack_floor": (info.ack_floor.consumer_seq, info.ack_floor.stream_seq),
        "num_ack_pending": info.num_ack_pending,
        "num_redelivered": info.num_redelivered,
        "num_waiting": info.num_waiting,
        "num_pending": info.num_pending,
    }


async def test_pull_fetch_ack_nak_term_and_info(server) -> None:  # type: ignore[no-untyped-def]
    name = "C" + uuid.uuid4().hex[:8]
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    try:
        await js.add_stream(name=name, subjects=[f"{name}.>"])
        for i in range(6):
            await js.publish(f"{name}.{i % 2}", b"m%d" % i)
        sub = await js.pull_subscribe(f"{name}.>", durable="work", stream=name)
        msgs = await sub.fetch(4, timeout=2)
        assert [m.data for m in msgs] == [b"m0", b"m1", b"m2", b"m3"]
        meta = [
            (m.metadata.sequence.stream, m.metadata.sequence.consumer, m.metadata.num_delivered, m.metadata.num_pending)
            for m in msgs
        ]
        assert meta == [(1, 1, 1, 5), (2, 2, 1, 4), (3, 3, 1, 3), (4, 4, 1, 2)]
        await msgs[0].ack_sync()
        await msgs[1].nak()
        await msgs[2].term()
        await msgs[3].in_progress()
        await nc.flush()
        await asyncio.sleep(0.2)  # nats-server queues acks to the consumer's own goroutine
        again = await sub.fetch(3, timeout=2)
        assert [(m.data, m.metadata.num_delivered) for m in again] == [(b"m1", 2), (b"m4", 1), (b"m5", 1)]
        for m in again:
            await m.ack_sync()
        info = await js.consumer_info(name, "work")
        numbers = _info_numbers(info)
        assert numbers == {
            "delivered": (7, 6),
            "ack_floor": (3, 3),
            "num_ack_pending": 1,
            "num_redelivered": 0,
            "num_waiting": 0,
            "num_pending": 0,
        }
        assert info.config.ack_policy == AckPolicy.EXPLICIT and info.config.max_ack_pending == 1000
        with pytest.raises(nats.errors.TimeoutError):
            await sub.fetch(1, timeout=0.5)
        await sub.unsubscribe()

        # add_consumer with a filter and a start sequence, then delete it
        cfg = ConsumerConfig(
            durable_name="odd",
            filter_subject=f"{name}.1",
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=3,
            ack_policy=AckPolicy.ALL,
        )
        created = await js.add_consumer(name, cfg)
        assert created.num_pending == 2
        psub = await js.pull_subscribe_bind("odd", name)
        got = await psub.fetch(5, timeout=1)
        assert [m.metadata.sequence.stream for m in got] == [4, 6]
        await got[-1].ack_sync()
        info = await js.consumer_info(name, "odd")
        assert _info_numbers(info)["ack_floor"] == (2, 6)
        assert await js.delete_consumer(name, "odd")
        with pytest.raises(NotFoundError):
            await js.consumer_info(name, "odd")
        assert (await js.stream_info(name)).state.consumer_count == 1
    finally:
        try:
            await js.delete_stream(name)
        finally:
            await nc.close()
