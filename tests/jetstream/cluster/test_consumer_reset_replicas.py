"""jsemu-only: a ``CONSUMER.RESET`` of a replicated consumer reaches every replica (one
``Snapshot`` record), so a new leader after a step-down continues from the reset."""

from __future__ import annotations

import json

import pytest
from nats.aio.client import Client

import jsemu
from jsemu.jetstream.cluster.consumer_replication import ConsumerReplicas

from .test_consumer_replication import _consumer, _drain, _engine_view, _setup, _stepdown, cluster

pytestmark = pytest.mark.fake_only
__all__ = ["cluster"]


async def test_a_reset_is_replicated(cluster: tuple[jsemu.Server, Client]) -> None:
    srv, nc = cluster
    _js, sub = await _setup(nc, 6)
    msgs = await sub.fetch(4, timeout=2)
    await msgs[0].ack_sync()
    reply = json.loads((await nc.request("$JS.API.CONSUMER.RESET.S.D", b'{"seq":3}', 2)).data)
    assert reply["reset_seq"] == 3
    c = _consumer(srv, "S", "D")
    replicas = c.replicas
    assert isinstance(replicas, ConsumerReplicas)
    for state in replicas.states.values():
        assert state.view() == _engine_view(c) == ((0, 2), (0, 2), {}, {})
    await _stepdown(nc, "S", "D")
    assert await _drain(sub) == [(3, 1), (4, 1), (5, 1), (6, 1)]
