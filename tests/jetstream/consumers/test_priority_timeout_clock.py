"""jsemu-only: a pinned client keeps its pin while it asks again within ``priority_timeout``
on the server's clock, and loses it exactly then (the ``consumer_group_unpinned``
advisory with reason ``timeout``), after which the next client is pinned."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest

import jsemu

pytestmark = pytest.mark.fake_only

S = 1_000_000_000


async def _api(nc: Any, subject: str, body: Any = None) -> dict[str, Any]:
    msg = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=2)
    reply: dict[str, Any] = json.loads(msg.data)
    return reply


async def _pull(nc: Any, body: dict[str, Any]) -> Any:
    """One pull request on an inbox of its own (a pulled message keeps its stream subject,
    so the client's request multiplexer could not route it)."""
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.P", json.dumps(body).encode(), reply=inbox)
    msg = await sub.next_msg(timeout=2)
    await sub.unsubscribe()
    return msg


async def test_pin_lapses_after_priority_timeout_on_the_server_clock() -> None:
    async with jsemu.Server() as srv:
        ctl = srv.control
        ctl.freeze_clock()
        nc = await nats.connect(srv.url)
        events: list[dict[str, Any]] = []

        async def on_event(msg: Any) -> None:
            events.append(json.loads(msg.data))

        await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.PINNED.>", cb=on_event)
        await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.>", cb=on_event)
        await _api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        for i in range(4):
            await nc.request(f"s.{i}", f"m{i}".encode(), timeout=2)
        cfg = {
            "durable_name": "P",
            "ack_policy": "none",
            "priority_policy": "pinned_client",
            "priority_groups": ["A"],
            "priority_timeout": 10 * S,
        }
        await _api(nc, "$JS.API.CONSUMER.CREATE.S.P", {"stream_name": "S", "config": cfg})
        first = await _pull(nc, {"batch": 1, "group": "A"})
        pin = first.headers["Nats-Pin-Id"]
        info = await _api(nc, "$JS.API.CONSUMER.INFO.S.P")
        assert info["priority_groups"][0]["pinned_client_id"] == pin
        # asking again with the pin 9.999 s later renews it for another 10 s
        ctl.advance_clock(ns=10 * S - 1_000_000)
        again = await _pull(nc, {"batch": 1, "group": "A", "id": pin})
        assert (again.data, again.headers["Nats-Pin-Id"]) == (b"m1", pin)
        ctl.advance_clock(ns=10 * S - 1_000_000)
        info = await _api(nc, "$JS.API.CONSUMER.INFO.S.P")
        assert info["priority_groups"][0]["pinned_client_id"] == pin
        other = await _pull(nc, {"batch": 1, "group": "A", "id": "other", "no_wait": True})
        assert (other.headers["Status"], other.headers["Description"]) == ("423", "Nats-Pin-Id mismatch")
        ctl.advance_clock(ns=1_000_000)  # exactly priority_timeout after the last request
        for _ in range(50):
            if len(events) == 2:
                break
            await asyncio.sleep(0.02)
        assert [(e["type"].rsplit(".", 1)[1], e.get("reason")) for e in events] == [
            ("consumer_group_pinned", None),
            ("consumer_group_unpinned", "timeout"),
        ]
        info = await _api(nc, "$JS.API.CONSUMER.INFO.S.P")
        assert info["priority_groups"] == [{"group": "A", "pinned_ts": "0001-01-01T00:00:00Z"}]
        # the old pin is refused; a request without one gets a new pin
        stale = await _pull(nc, {"batch": 1, "group": "A", "id": pin, "expires": 30 * S})
        assert stale.headers["Status"] == "423" and stale.headers["Description"] == "Nats-Wrong-Pin-Id"
        nxt = await _pull(nc, {"batch": 1, "group": "A"})
        assert nxt.data == b"m2" and nxt.headers["Nats-Pin-Id"] not in ("", pin)
        await nc.close()
