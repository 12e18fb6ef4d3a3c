"""Stopping a server's JetStream (``JetStream.shut_down``: lame duck mode, or another server of
a cluster of processes leads now) and serving again (``resume``, this server leads again):
every subscription the account's JetStream owns goes and comes back, the consumers' too (pull requests, acks),
so no interest of a stopped JetStream lingers on the routes. nats-server stops a consumer
with its stream in ``shutdownJetStream``; ``tests/app/test_lame_duck_process.py`` shows the
same on the wire for lame duck mode."""

from __future__ import annotations

import nats

import jsemu

NEXT = b"$JS.API.CONSUMER.MSG.NEXT.S.D"
ACK = b"$JS.ACK.S.D.1.1.1.1.0"


async def test_stopping_jetstream_drops_every_subscription_it_owns() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"])
        await js.add_consumer("S", durable_name="D", ack_policy="explicit")
        await js.publish("s", b"x")
        sublist = srv.sublist

        def owned() -> list[int]:
            return [len(sublist.match(s).psubs) for s in (NEXT, ACK, b"s")]

        assert owned() == [2, 1, 1]  # MSG.NEXT: the consumer and the API ($JS.API.>)
        service = srv.jetstream
        assert service is not None
        service.shut_down()
        assert owned() == [1, 0, 0]  # the API is the caller's (JetStreamApi.stop)
        service.resume()
        assert owned() == [2, 1, 1]  # MSG.NEXT: the consumer and the API ($JS.API.>)
        sub = await js.pull_subscribe("s", durable="D", stream="S")
        (msg,) = await sub.fetch(1, timeout=2)
        await msg.ack_sync()  # the ack lane is back too
        info = await js.consumer_info("S", "D")
        assert info.ack_floor.stream_seq == 1
        await nc.close()
