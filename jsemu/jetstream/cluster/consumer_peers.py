"""Consumers in the simulated cluster: their peers, leader and ``cluster`` info block, and the
step-down that ``$JS.API.CONSUMER.LEADER.STEPDOWN`` (``api/cluster.py``) asks for.

One engine serves the consumer whoever leads it; with more than one peer the group keeps a
replica state per peer fed by records (:mod:`.consumer_replication`), and a new leader's
engine restarts from its replica's state (``Consumer.take_over``).

What a client can see of the group is modelled here as in nats-server: the replica count
(``ConsumerConfig.replicas``: the stream's unless set lower; an ephemeral of a limits
stream asking for none is R1), the peers (a subset of the stream's when fewer,
``createGroupForConsumer``), the raft group name ``C-R<n><storage>-<random>``, and the
leader, which moves when its server goes offline or steps down. The block has the shape
of the stream's (``clusterInfo``), built from the stream peers' state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...ids import get_hash, random_name
from ...timefmt import format_ns
from .consumer_replication import ConsumerReplicas
from .leader import consumer_leader_elected
from .quorum import ConsumerQuorum

if TYPE_CHECKING:
    from .members import GroupedConsumer, GroupedConsumerConfig, ReplicatedStream
    from .replicas import Peer

__all__ = ["ConsumerGroup", "consumer_replicas"]


def consumer_replicas(cfg: GroupedConsumerConfig, stream: ReplicatedStream) -> int:
    """``ConsumerConfig.replicas``."""
    sr = stream.config.num_replicas
    if cfg.num_replicas == 0 or cfg.num_replicas > sr:
        if not cfg.durable_name and stream.config.retention == "limits" and cfg.num_replicas == 0:
            return 1
        return sr
    return cfg.num_replicas


class ConsumerGroup:
    """The raft group of one consumer of a stream in the simulated cluster."""

    def __init__(self, consumer: GroupedConsumer) -> None:
        stream = consumer.stream
        js = stream.js
        self.consumer = consumer
        replicas = consumer_replicas(consumer.config, stream)
        stream_peers = [p.name for p in stream.replicas.peers]
        if 0 < replicas < len(stream_peers):
            online = [p.name for p in stream.replicas.peers if not p.offline]
            js.server.rng.shuffle(online)
            self.peers = online[:replicas]
        else:
            self.peers = stream_peers
        memory = stream.config.storage == "memory" or consumer.config.mem_storage
        self.raft_group = f"C-R{len(self.peers)}{'M' if memory else 'F'}-{random_name(js.server.rng)}"
        leader = stream.replicas.leader.name
        self.leader = leader if leader in self.peers else self.peers[0]
        self.leader_since_ns = consumer.created_ns
        self.leaderless = False
        #: The replicas' states and their log; None for an R1 group (nothing to replicate).
        self.replicas: ConsumerReplicas | None = None
        if len(self.peers) > 1:
            self.replicas = ConsumerReplicas(
                self.peers, self.leader, consumer.config.ack_policy, lambda n: self._stream_peer(n).offline
            )
        #: The leader's lost-quorum clock and the QUORUM_LOST advisories (groups with a raft node).
        self.quorum: ConsumerQuorum | None = ConsumerQuorum(self) if len(self.peers) > 1 else None

    def _stream_peer(self, name: str) -> Peer:
        return self.consumer.stream.replicas.peer(name)

    def current_leader(self) -> str:
        """The leader, re-elected among online peers once its server is offline."""
        if not self.leaderless and not self._stream_peer(self.leader).offline:
            return self.leader
        online = [n for n in self.peers if not self._stream_peer(n).offline]
        quorum = self.quorum
        if not online or (quorum is not None and quorum.stalled and not quorum.has_quorum()):
            self.leaderless = True
            return ""
        self._make_leader(online[0])
        return self.leader

    def _make_leader(self, name: str) -> None:
        if name != self.leader or self.leaderless:
            self.leader_since_ns = self.consumer.js.clock.now_ns()
        changed = name != self.leader
        elected = changed or self.leaderless
        self.leader = name
        self.leaderless = False
        if changed and self.replicas is not None:
            self.consumer.take_over(self.replicas.elect(name))
        if elected:
            consumer_leader_elected(self.consumer)

    def step_down(self, preferred: str) -> None:
        """``raft.StepDown``: hand leadership to ``preferred`` or to a healthy other peer."""
        if preferred:
            self._make_leader(preferred)
            return
        others = [n for n in self.peers if n != self.leader and not self._stream_peer(n).offline]
        if others:
            self._make_leader(others[0])
        else:  # raft steps down anyway and is elected again: a new term, the same leader
            self.leader_since_ns = self.consumer.js.clock.now_ns()

    def replace_peer(self, removed: str, spare: str, stream_leader: str) -> None:
        """A stream move: ``spare`` takes ``removed``'s place with the leader's state; when
        ``removed`` led, the stream's leader (or another online peer) takes over first."""
        if self.leader == removed:
            others = [n for n in self.peers if n != removed and not self._stream_peer(n).offline]
            if others:
                self._make_leader(stream_leader if stream_leader in others else others[0])
        self.peers[self.peers.index(removed)] = spare
        if self.leader == removed:  # an R1 group (or no other peer online): it moves with its server
            self._make_leader(spare)
        if self.replicas is not None:
            self.replicas.replace(removed, spare)

    def cluster_json(self) -> dict[str, Any]:
        """``clusterInfo(rg)``: R1 groups have no raft node (name and leader only)."""
        js = self.consumer.js
        leader = self.current_leader()
        out: dict[str, Any] = {"name": js.cluster_name}
        if len(self.peers) == 1:
            if leader:
                out["leader"] = leader
            return out
        out["raft_group"] = self.raft_group
        if leader:
            out["leader"] = leader
            out["leader_since"] = format_ns(self.leader_since_ns)
        out["system_account"] = True
        out["traffic_account"] = "$SYS"
        now = js.clock.now_ns()
        replicas = self.consumer.stream.replicas
        followers = []
        for name in sorted(self.peers):
            if name == leader:
                continue
            peer = self._stream_peer(name)
            info: dict[str, Any] = {"name": name, "current": not peer.offline}
            if peer.offline:
                info["offline"] = True
            info["active"] = replicas.active_ns(peer, now)
            info["peer"] = get_hash(name)
            followers.append(info)
        out["replicas"] = followers
        return out
