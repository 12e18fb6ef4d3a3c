"""Planted bugs in replica moves (``cluster/moves.py`` and the groups it reconfigures), each
with the tests that must catch it."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_MOVES = ("tests/jetstream/cluster/test_moves.py",)

MUTATIONS: list[Mutation] = [
    Mutation(
        "move_leader_not_handed_over",
        "jetstream",
        "jsemu/jetstream/cluster/moves.py",
        "    if old is replicas.leader and any(p is not old and not p.offline for p in replicas.peers):\n",
        "    if False:\n",
        _MOVES,
        "a removed leader keeps leading from a store no longer in the group (no election)",
    ),
    Mutation(
        "move_newcomer_starts_empty",
        "jetstream",
        "jsemu/jetstream/cluster/moves.py",
        "    new.applied = replicas.end\n",
        "    new.applied = replicas.end\n    store.purge()\n",
        _MOVES,
        "the replacement does not catch up from the leader: its store lacks the stream's messages",
    ),
    Mutation(
        "move_consumers_stay_behind",
        "jetstream",
        "jsemu/jetstream/cluster/moves.py",
        "            if consumer.group is not None and removed in consumer.group.peers:\n",
        "            if False:\n",
        _MOVES,
        "the consumers' groups keep the removed peer instead of following their stream",
    ),
    Mutation(
        "move_consumer_leader_not_the_streams",
        "jetstream",
        "jsemu/jetstream/cluster/consumer_peers.py",
        "                self._make_leader(stream_leader if stream_leader in others else others[0])\n",
        "                self._make_leader(others[-1])\n",
        _MOVES,
        "a consumer led by the removed peer is taken over by another peer than the stream's leader",
    ),
    Mutation(
        "move_no_update_advisories",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "    for _ in range(3):\n",
        "    for _ in range(1):\n",
        _MOVES,
        "one STREAM.UPDATED advisory where nats-server's meta layer sends three",
    ),
    Mutation(
        "evacuate_moves_nothing",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        "    for js, stream, spare in moves:\n        move_replica(js, stream, name, spare)\n"
        '    return {"type": response_type(kind), "success": True}\n',
        '    return {"type": response_type(kind), "success": True}\n',
        _MOVES,
        "SERVER.EVACUATE answers success and leaves the replicas on the server",
    ),
    Mutation(
        "move_to_a_down_server",
        "jetstream",
        "jsemu/jetstream/cluster/moves.py",
        "    return [n for n in names if n not in members and is_up(n)]\n",
        "    return [n for n in names if n not in members]\n",
        _MOVES,
        "a server that is down is taken as the spare a replica moves to",
    ),
    Mutation(
        "moves_r1_consumer_left_on_its_removed_server",
        "jetstream",
        "jsemu/jetstream/cluster/consumer_peers.py",
        "        if self.leader == removed:  # an R1 group (or no other peer online): it moves with its server\n            self._make_leader(spare)\n",
        "",
        ("tests/jetstream/cluster/test_moves.py::test_an_r1_consumer_moves_with_its_removed_server",),
        "an R1 consumer on a removed server keeps naming that server as its leader",
    ),
]
