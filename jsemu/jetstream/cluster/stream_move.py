"""A stream's move to another server that stays in progress while the control plane holds it.

``ACCOUNT.STREAM.MOVE.<acc>.<stream>`` with a ``server`` of the stream's group replaces that
peer by a spare server (captured from a real 5-node nats-server 2.15.1 cluster with an R3
stream): the reply is a ``stream_update_response`` whose ``cluster`` carries a ``desired``
block (``created``, the cluster's ``name``, the new group's ``replicas`` as name and peer id,
``origin: {"replicas": <old count>}``) while ``replicas`` still lists the old followers.
nats-server takes about a second to settle (the new peer catches up, consumers migrate, the
old peer leaves); a ``STREAM.CANCEL_MOVE`` meanwhile answers a ``stream_cancel_move_response``
with the stream's info whose ``desired`` names the original group, and the stream is left
where it was (no ``desired`` in stream info afterwards).

jsemu settles a move at once unless the control plane holds moves of the stream
(``control.hold_moves``); a held move shows its ``desired`` block in stream info until
``control.finish_move`` settles it or a cancel drops it. The intermediate steps nats-server
shows (a ``status`` of the move, the new peer listed ``pending``) are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...ids import get_hash
from ...timefmt import format_ns

__all__ = ["PendingMove", "desired_json", "start_move"]


@dataclass(slots=True)
class PendingMove:
    """A move under way: the peer that leaves, the spare that joins, and the groups."""

    created_ns: int
    removed: str
    spare: str
    origin: list[str]
    desired: list[str]


def start_move(leader: str, members: list[str], removed: str, spare: str, now_ns: int) -> PendingMove:
    """The move of ``removed``'s replica to ``spare``: the leader first, then the members
    that stay, then the new one (the order of the captured ``desired`` blocks)."""
    origin = [leader] + [n for n in members if n != leader]
    desired = [n for n in origin if n != removed] + [spare]
    return PendingMove(now_ns, removed, spare, origin, desired)


def desired_json(cluster: str, move: PendingMove, names: list[str]) -> dict[str, Any]:
    """The ``desired`` block of ``cluster`` naming the group ``names``."""
    return {
        "created": format_ns(move.created_ns),
        "name": cluster,
        "replicas": [{"name": n, "peer": get_hash(n)} for n in names],
        "origin": {"replicas": len(move.origin)},
    }
