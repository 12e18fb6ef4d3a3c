"""jsemu-only: advisories cost nothing while nobody listens. With no subscriber on
``$JS.EVENT.ADVISORY.>`` no stream, consumer or API audit event is even built (no event id
drawn, no requester record made); with one, each is. The wire cannot show an advisory sent
to nobody, so this counts the builders' calls in-process."""

from __future__ import annotations

from collections import Counter
from typing import Any

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

import jsemu
from jsemu.jetstream.events import advisories, api_audit
from jsemu.server.routing import Router

pytestmark = pytest.mark.fake_only


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many events each module built (``advisories``: the stream and consumer action
    advisories, which ``send_action`` builds), and how many requester records were made."""
    counts: Counter[str] = Counter()
    for module in (api_audit, advisories):
        original = module.new_event_id

        def counted(name: str = module.__name__.rsplit(".", 1)[1], fn: Any = original) -> str:
            counts[name] += 1
            return str(fn())

        monkeypatch.setattr(module, "new_event_id", counted)
    requester = Router.requester

    def counted_requester(self: Router) -> Any:
        counts["requester"] += 1
        return requester(self)

    monkeypatch.setattr(Router, "requester", counted_requester)
    return counts


async def _lifecycle(nc: nats.NATS, stream: str) -> None:
    js = nc.jetstream()
    await js.add_stream(name=stream, subjects=[f"{stream}.>"])
    await js.update_stream(name=stream, subjects=[f"{stream}.>"], description="x")
    await js.add_consumer(stream, ConsumerConfig(durable_name="D", ack_policy=AckPolicy.EXPLICIT))
    await js.add_consumer(stream, ConsumerConfig(durable_name="E", ack_policy=AckPolicy.EXPLICIT))
    await js.delete_consumer(stream, "D")
    await js.account_info()
    await js.delete_stream(stream)


async def test_no_listener_no_event_built(built: Counter[str]) -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        try:
            await _lifecycle(nc, "Q")
            assert built == Counter()
            sub = await nc.subscribe("$JS.EVENT.ADVISORY.>")
            await nc.flush()
            await _lifecycle(nc, "L")
            # create, update, delete; created D and E, deleted D, then E with its stream;
            # an audit per API request (7), each with its requester record
            assert built == Counter(advisories=3 + 4, api_audit=7, requester=7), built
            await sub.unsubscribe()
        finally:
            await nc.close()
