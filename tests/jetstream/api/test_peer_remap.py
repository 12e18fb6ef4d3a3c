"""``STREAM.PEER.REMOVE``/``EVACUATE``, ``STREAM.CANCEL_MOVE`` and ``CONSUMER.PEER.REMOVE``/
``EVACUATE`` on a standalone server, side by side with nats-server: each needs a cluster,
whatever the request (the clustered replies are in tests/jetstream/cluster/test_peer_remap.py,
recorded from a real 3-node cluster)."""

from __future__ import annotations

from support.pair import Pair

from .test_consumers import _req, _stream_with


async def test_peer_endpoints_need_clustering(pair: Pair) -> None:
    await _stream_with(pair, 1)
    await pair.same("$JS.API.CONSUMER.CREATE.S.D", _req({"durable_name": "D"}))
    for subject in ("STREAM.PEER.REMOVE.S", "STREAM.PEER.EVACUATE.S", "CONSUMER.PEER.REMOVE.S.D"):
        await pair.same(f"$JS.API.{subject}")
        await pair.same(f"$JS.API.{subject}", {"peer": "x"})
        await pair.same(f"$JS.API.{subject}", b"{bad")
    await pair.same("$JS.API.CONSUMER.PEER.EVACUATE.T.X", {"peer": "x"})
    await pair.same("$JS.API.STREAM.CANCEL_MOVE.S")
    await pair.same("$JS.API.STREAM.CANCEL_MOVE.T")
    await pair.same("$JS.API.STREAM.PEER.REMOVE", timeout=2.0)  # too few tokens: no reply
    await pair.same("$JS.API.INFO")
