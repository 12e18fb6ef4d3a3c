"""jsemu-only: consumer timers run on the server's clock. A test that freezes the clock and
advances it by ``ack_wait`` sees the redelivery at once (no sleeping); pull request expiry
and the inactive threshold of ephemerals follow the same clock."""

from __future__ import annotations

import asyncio
import time

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import NotFoundError

import jsemu

pytestmark = pytest.mark.fake_only


async def test_ack_wait_redelivery_and_max_deliver_on_the_frozen_clock() -> None:
    async with jsemu.Server() as srv:
        ctl = srv.control
        ctl.freeze_clock()
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        await js.publish("s.a", b"one")
        await js.publish("s.b", b"two")
        cfg = ConsumerConfig(durable_name="D", ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0, max_deliver=2)
        await js.add_consumer("S", cfg)
        sub = await js.pull_subscribe_bind("D", "S")
        first = await sub.fetch(2, timeout=2)
        await first[1].ack_sync()
        ctl.advance_clock(seconds=29.999)
        with pytest.raises(nats.errors.TimeoutError):
            await sub.fetch(1, timeout=0.2)
        # A request waiting while the clock reaches ack_wait gets the redelivery at once.
        started = time.monotonic()
        waiting = asyncio.ensure_future(sub.fetch(1, timeout=5))
        await asyncio.sleep(0.05)
        ctl.advance_clock(ns=1_000_000)
        again = await waiting
        assert time.monotonic() - started < 2
        assert [(m.data, m.metadata.num_delivered) for m in again] == [(b"one", 2)]
        info = await js.consumer_info("S", "D")
        assert (info.num_ack_pending, info.num_redelivered) == (1, 1)
        # max_deliver 2: after the next ack wait it is not delivered again; the next pull
        # request drops it from pending (as nats-server 2.15.1: tests/jetstream/api/test_consumer_policies.py)
        ctl.advance_clock(seconds=30)
        with pytest.raises(nats.errors.TimeoutError):
            await sub.fetch(1, timeout=0.2)
        info = await js.consumer_info("S", "D")
        assert (info.num_ack_pending, info.num_redelivered) == (0, 1)
        await nc.close()


async def test_nak_delay_request_expiry_and_inactive_threshold_follow_the_clock() -> None:
    async with jsemu.Server() as srv:
        ctl = srv.control
        ctl.freeze_clock()
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        await js.publish("s.a", b"one")
        await js.add_consumer("S", ConsumerConfig(durable_name="D", ack_policy=AckPolicy.EXPLICIT))
        sub = await js.pull_subscribe_bind("D", "S")
        (msg,) = await sub.fetch(1, timeout=2)
        await msg.nak(delay=10)
        await nc.flush()
        ctl.advance_clock(seconds=9)
        with pytest.raises(nats.errors.TimeoutError):
            await sub.fetch(1, timeout=0.2)
        ctl.advance_clock(seconds=1)
        (again,) = await sub.fetch(1, timeout=2)
        assert again.metadata.num_delivered == 2
        await again.ack_sync()

        # A pull request with expires ends (408) when the clock gets there, not the wall clock.
        inbox = nc.new_inbox()
        isub = await nc.subscribe(inbox)
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.D", b'{"batch":1,"expires":60000000000}', reply=inbox)
        await nc.flush()
        ctl.advance_clock(seconds=60)
        status = await isub.next_msg(timeout=1)
        assert status.headers is not None and status.headers.get("Status") == "408"

        # An ephemeral goes away once it has been inactive for inactive_threshold.
        eph = await js.add_consumer("S", ConsumerConfig(name="E", inactive_threshold=5.0))
        assert eph.config.inactive_threshold == 5.0
        ctl.advance_clock(seconds=4)
        assert (await js.consumer_info("S", "E")).name == "E"
        ctl.advance_clock(seconds=2)
        with pytest.raises(NotFoundError):
            await js.consumer_info("S", "E")
        await nc.close()
