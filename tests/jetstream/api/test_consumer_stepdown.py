"""``CONSUMER.LEADER.STEPDOWN`` on a standalone server, side by side with nats-server: it
needs a cluster (the clustered replies are in tests/jetstream/cluster/test_consumer_cluster.py,
recorded from a real 3-node cluster)."""

from __future__ import annotations

from support.pair import Pair

from .test_consumers import _req, _stream_with


async def test_stepdown_needs_clustering(pair: Pair) -> None:
    await _stream_with(pair, 1)
    await pair.same("$JS.API.CONSUMER.CREATE.S.D", _req({"durable_name": "D"}))
    await pair.same("$JS.API.CONSUMER.LEADER.STEPDOWN.S.D")
    await pair.same("$JS.API.CONSUMER.LEADER.STEPDOWN.S.D", {"placement": {"preferred": "x"}})
    await pair.same("$JS.API.CONSUMER.LEADER.STEPDOWN.T.X")
    await pair.same("$JS.API.CONSUMER.LEADER.STEPDOWN.S", timeout=2.0)  # too few tokens: no reply
    await pair.same("$JS.API.CONSUMER.INFO.S.D")  # no cluster block standalone
    await pair.same("$JS.API.INFO")
