"""What a jsemu trace event says besides nats-server's fields (the ``jsemu`` object, which
clients' decoders ignore): the path, the internal subscribers that took the message (which
Direct Get responder answered) and the fault rule that held it back."""

from __future__ import annotations

import json

import nats

import jsemu

TRACE = {"Nats-Trace-Dest": "trace.me"}


async def test_fault_rule_and_responder_are_named() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        traces = await nc.subscribe("trace.me")
        js = nc.jetstream()
        await js.add_stream(name="KV", subjects=["kv.>"], allow_direct=True)
        await js.publish("kv.a", b"1", headers=TRACE)
        stored = json.loads((await traces.next_msg(2)).data)
        assert stored["jsemu"] == {"path": "general", "internal": ["stream:KV"]}
        assert stored["events"][1]["type"] == "js" and stored["events"][1]["subject"] == "kv.a"

        await nc.request("$JS.API.DIRECT.GET.KV", b'{"seq":1}', headers=TRACE)
        answered = json.loads((await traces.next_msg(2)).data)
        assert [e["type"] for e in answered["events"]] == ["in"]  # internal: no egress, as nats-server
        assert f"direct_get:KV/{srv.server_name}" in answered["jsemu"]["internal"]

        rule = srv.control.drop("kv.b")
        await nc.publish("kv.b", b"2", headers=TRACE)
        dropped = json.loads((await traces.next_msg(2)).data)
        assert dropped["jsemu"]["fault"] == {"id": rule, "filter": "kv.b", "action": "drop"}
        assert [e["type"] for e in dropped["events"]] == ["in"]
        assert (await js.stream_info("KV")).state.messages == 1
        await nc.close()


async def test_untraced_messages_take_the_fast_lane() -> None:
    """A header block without a trace request changes nothing: the route is still learned."""
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        for _ in range(3):
            await js.publish("s.a", b"x", headers={"Nats-Msg-Id-Not": "1"})
        assert srv.learned_routes.get(b"s.a")
        await nc.close()
