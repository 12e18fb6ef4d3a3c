"""Planted bugs in a stream's move to another server (``ACCOUNT.STREAM.MOVE``, the cancels;
``cluster/stream_move.py``, ``api/system.py``, ``api/peers.py``), each with the tests that must
catch it."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_MOVE_TESTS = ("tests/jetstream/cluster/test_stream_move.py",)

MUTATIONS: list[Mutation] = [
    Mutation(
        "stream_move_desired_spare_first",
        "jetstream",
        "jsemu/jetstream/cluster/stream_move.py",
        "    desired = [n for n in origin if n != removed] + [spare]\n",
        "    desired = [spare] + [n for n in origin if n != removed]\n",
        _MOVE_TESTS,
        "the desired group lists the new server first, not the leader (the captured order)",
    ),
    Mutation(
        "stream_move_cancel_keeps_move",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        '    out["cluster"]["desired"] = desired_json(js.cluster_name, move, move.origin)\n'
        "    stream.pending_move = None\n",
        '    out["cluster"]["desired"] = desired_json(js.cluster_name, move, move.origin)\n',
        _MOVE_TESTS,
        "a cancelled move stays in progress (stream info keeps its desired block)",
    ),
    Mutation(
        "stream_move_cancel_names_moved_group",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "desired_json(js.cluster_name, move, move.origin)",
        "desired_json(js.cluster_name, move, move.desired)",
        _MOVE_TESTS,
        "the cancel's desired block names the group moved to, not the original group",
    ),
    Mutation(
        "stream_move_hold_ignored",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        "    if not stream.move_held:\n        settle_move(js, stream)\n",
        "    settle_move(js, stream)\n",
        _MOVE_TESTS,
        "a move the control plane holds settles at once (nothing to observe or cancel)",
    ),
]

_REMOVE_TESTS = ("tests/jetstream/cluster/test_server_remove.py",)

MUTATIONS += [
    Mutation(
        "server_remove_keeps_placing_on_it",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        "        if name in js.peer_names:\n            js.peer_names.remove(name)\n",
        "        pass\n",
        _REMOVE_TESTS,
        "a removed server still gets new replicas",
    ),
    Mutation(
        "server_remove_answers_for_the_removed_leader",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        '    return None if led else {"type": response_type(kind), "success": True}\n',
        '    return {"type": response_type(kind), "success": True}\n',
        _REMOVE_TESTS,
        "removing the meta leader is answered (nats-server's removed leader never replies)",
    ),
    Mutation(
        "server_remove_no_advisory",
        "jetstream",
        "jsemu/jetstream/cluster/meta.py",
        "        self._publish(SERVER_REMOVED.encode(), dumps(event).encode())\n",
        "",
        _REMOVE_TESTS,
        "SERVER.REMOVE sends no SERVER.REMOVED advisory",
    ),
    Mutation(
        "server_remove_leaves_replicas",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        "        moves = _replicas_on(sysjs, meta, name, NO_SERVER_REMOVE)\n",
        "        moves = []\n",
        _REMOVE_TESTS,
        "a removed server keeps its stream and consumer replicas",
    ),
]

_CONSUMER_TESTS = ("tests/jetstream/cluster/test_consumer_peer_remap.py",)

MUTATIONS += [
    Mutation(
        "consumer_remap_to_any_server",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "        removed, spare = _remap(js, peer, group.peers, [p.name for p in stream.replicas.peers])\n",
        "        removed, spare = _remap(js, peer, group.peers, js.peer_names)\n",
        _CONSUMER_TESTS,
        "a consumer's replica moves to a server outside its stream's group (nats-server: 10075)",
    ),
    Mutation(
        "consumer_remap_answers_without_moving",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "    group.replace_peer(removed, spare, stream.replicas.leader.name)\n",
        "",
        _CONSUMER_TESTS,
        "CONSUMER.PEER.REMOVE answers success and leaves the replica where it was",
    ),
]

_R1_TESTS = ("tests/jetstream/cluster/test_peer_remap.py",)

MUTATIONS += [
    Mutation(
        "r1_restart_keeps_messages",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "    restart_empty(stream, spare, stream.empty_store())\n",
        "    restart_empty(stream, spare, stream.store)\n",
        _R1_TESTS,
        "an R1 stream restarted on a spare keeps its messages (nats-server's starts empty)",
    ),
    Mutation(
        "r1_restart_consumers_keep_state",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "        consumer.reset_to(first)\n",
        "",
        _R1_TESTS,
        "the restarted R1 stream's consumers keep what they had delivered",
    ),
    Mutation(
        "r1_restart_no_leader_advisory",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "    stream_leader_elected(stream, stream.replicas, single=True)\n",
        "",
        _R1_TESTS,
        "the restarted R1 stream sends no STREAM.LEADER_ELECTED",
    ),
]
