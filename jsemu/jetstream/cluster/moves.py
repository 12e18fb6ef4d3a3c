"""Moving a stream's replica to another server of the simulated cluster.

nats-server answers ``STREAM.PEER.REMOVE`` (and ``STREAM.PEER.EVACUATE``, a server
evacuation) of a stream with a spare server by reconfiguring the stream's raft group,
captured from a real 2.15.1 cluster of five servers with an R3 stream:

- the removed peer leaves at once (stream info's ``cluster.replicas`` no longer lists it);
  when it led, the remaining peers elect a leader (``STREAM.LEADER_ELECTED``, whose
  ``replicas`` still list the removed peer);
- each consumer whose group holds the removed peer follows: when that peer led it, the
  stream's leader takes over (``CONSUMER.LEADER_ELECTED``), and the same spare replaces it
  in the consumer's group; a consumer without the peer keeps its group;
- a spare server (one outside the group) joins, catches up from the leader, and the move
  settles (three ``STREAM.UPDATED`` advisories of action ``modify`` in the stream's account,
  as the meta layer rewrites the assignment); every message stays.

nats-server shows the move in progress for half a second (a ``desired`` block in
``cluster``). jsemu's replacement catches up at once from a copy of the leader's store (what
raft's snapshot and catch-up leave it with), so the move has settled by the time the reply
goes out.

An R1 stream has no other replica to copy from: nats-server 2.15.1 answers the removal of its
only peer ``success`` and starts the stream anew on a spare server (captured from a real
5-node cluster): no leader for about four seconds, then ``STREAM.LEADER_ELECTED``,
``STREAM.CREATED`` and ``modify`` advisories, every message gone (the next publish is
sequence 1), each consumer recreated there (``CONSUMER.LEADER_ELECTED``, ``CONSUMER.CREATED``)
with nothing delivered or acked. jsemu makes the settled state at once (``restart_empty``,
the consumers in ``api/peers.py``); a stream with state beyond its messages (a mirror, sources,
delete markers, schedules, a store dir) is refused instead.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .replicas import Peer, ReplicatedStore

if TYPE_CHECKING:
    from ...store import Store
    from .members import ReplicatedStream

__all__ = ["replace_peer", "restart_empty", "spare_servers"]


def spare_servers(members: Sequence[str], names: Sequence[str], is_up: Callable[[str], bool]) -> list[str]:
    """The servers a replica could move to: outside the group and up, in the cluster's order."""
    return [n for n in names if n not in members and is_up(n)]


def replace_peer(stream: ReplicatedStream, removed: str, spare: str) -> None:
    """Take ``removed`` out of the stream's group (and its consumers' groups) and put a
    caught-up replica on ``spare`` in its place."""
    replicas = stream.replicas
    old = replicas.peer(removed)
    if old is replicas.leader and any(p is not old and not p.offline for p in replicas.peers):
        replicas.step_down()
    consumers = stream.consumer_set
    if consumers is not None:
        for consumer in list(consumers.by_name.values()):
            if consumer.group is not None and removed in consumer.group.peers:
                consumer.group.replace_peer(removed, spare, replicas.leader.name)
    now = stream.js.clock.now_ns()
    store = copy.deepcopy(replicas.leader.store, {id(replicas): None, id(stream.js.clock): stream.js.clock})
    new = Peer(spare, store, now)
    new.applied = replicas.end
    if isinstance(store, ReplicatedStore):
        store.replicas = replicas
    old.offline = True  # its Direct Get responders leave with it
    stream.sync_responders()
    replicas.peers[replicas.peers.index(old)] = new
    replicas.forget(old)
    stream.sync_responders()


def restart_empty(stream: ReplicatedStream, spare: str, store: Store) -> None:
    """Start the R1 stream anew on ``spare`` with ``store`` (empty); it leads at once."""
    stream.replicas.restart_on(Peer(spare, store, stream.js.clock.now_ns()))
