"""Leader-elected advisories of the simulated cluster:
``$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.<stream>`` and
``$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.<stream>.<consumer>``.

As a real 3-node nats-server 2.15.1 cluster sends them (``sendStreamLeaderElectAdvisory``,
``sendConsumerLeaderElectAdvisory``, recorded in tests/jetstream/cluster/test_leader_advisories.py):
when a raft group elects a leader, that is at creation and at every change of leader (a
step-down, a leader's server going down). Only groups with a raft node, so an R1 stream or
consumer sends none. In the user's account the struct has no ``account``; ``replicas`` lists
every peer of the group, the leader included (``s.replicas(node)``: ``PeerInfo`` each).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...ids import get_hash, new_event_id
from ...protocol.gojson import dumps
from ...timefmt import format_ns

if TYPE_CHECKING:
    from .members import GroupedConsumer, ReplicatedStream
    from .replicas import ReplicaSet

__all__ = ["CONSUMER_LEADER_ELECTED", "STREAM_LEADER_ELECTED", "consumer_leader_elected", "stream_leader_elected"]

STREAM_LEADER_ELECTED = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED"
CONSUMER_LEADER_ELECTED = "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED"
_STREAM_TYPE = "io.nats.jetstream.advisory.v1.stream_leader_elected"
_CONSUMER_TYPE = "io.nats.jetstream.advisory.v1.consumer_leader_elected"


def _peer_info(replicas: ReplicaSet, name: str, now: int, lag: int) -> dict[str, Any]:
    """``PeerInfo``: name, current, offline (omitempty), active, lag (omitempty), peer."""
    peer = replicas.peer(name)
    info: dict[str, Any] = {"name": name, "current": not peer.offline and lag == 0}
    if peer.offline:
        info["offline"] = True
    info["active"] = replicas.active_ns(peer, now)
    if lag:
        info["lag"] = lag
    info["peer"] = get_hash(name)
    return info


def _send(stream: ReplicatedStream, subject: str, fields: dict[str, Any]) -> None:
    js = stream.js
    out = js.out
    if not out.has_interest(subject.encode()):
        return
    if js.domain:
        fields["domain"] = js.domain
    out.send_via_sendq(subject.encode(), -1, dumps(fields).encode())


def stream_leader_elected(stream: ReplicatedStream, replicas: ReplicaSet, single: bool = False) -> None:
    """``sendStreamLeaderElectAdvisory`` for a stream of more than one peer (or of one when
    ``single``: an R1 stream restarted on another server)."""
    if (len(replicas.peers) < 2 and not single) or replicas.leaderless:
        return
    now = stream.js.clock.now_ns()
    peers = [_peer_info(replicas, p.name, now, replicas.lag(p)) for p in replicas.peers]
    fields: dict[str, Any] = {
        "type": _STREAM_TYPE,
        "id": new_event_id(),
        "timestamp": format_ns(now),
        "stream": stream.name,
        "leader": replicas.leader.name,
        "replicas": peers,
    }
    _send(stream, f"{STREAM_LEADER_ELECTED}.{stream.name}", fields)


def consumer_leader_elected(consumer: GroupedConsumer, single: bool = False) -> None:
    """``sendConsumerLeaderElectAdvisory`` for a consumer whose group has more than one peer
    (or of one when ``single``: an R1 consumer restarted with its stream)."""
    group = consumer.group
    if group is None or (group.replicas is None and not single) or group.leaderless:
        return
    stream = consumer.stream
    now = stream.js.clock.now_ns()
    replicas = group.replicas
    peers = [_peer_info(stream.replicas, n, now, replicas.lag(n) if replicas else 0) for n in group.peers]
    fields: dict[str, Any] = {
        "type": _CONSUMER_TYPE,
        "id": new_event_id(),
        "timestamp": format_ns(now),
        "stream": stream.name,
        "consumer": consumer.name,
        "leader": group.leader,
        "replicas": peers,
    }
    _send(stream, f"{CONSUMER_LEADER_ELECTED}.{stream.name}.{consumer.name}", fields)
