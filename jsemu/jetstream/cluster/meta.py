"""The metadata group of the simulated cluster: which server leads JetStream's meta layer.

A real cluster's servers form one raft group (the "meta" group) whose leader answers the
system account's JetStream endpoints. jsemu's simulated cluster keeps its streams in one
process, so the meta group is only its leader's name: ``n1`` at start, moved by
``META.LEADER.STEPDOWN`` to a preferred or any other server that is up (a server taken
down with ``node_down`` is not a candidate). Each change sends the system account's
``$JS.EVENT.ADVISORY.DOMAIN.LEADER_ELECTED``, as nats-server 2.15.1 does
(``sendDomainLeaderElectAdvisory``): the new leader's peer id (the 8-character hash of its
name), every server of the group as a ``PeerInfo`` (the leader first here), the cluster name.

``SERVER.REMOVE`` takes a server out of the group for good (``remove``): the system account
hears ``$JS.EVENT.ADVISORY.SERVER.REMOVED`` (``JSServerRemovedAdvisory``: the server's name
and id, the cluster, the domain when there is one; captured), and a removed leader hands over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...ids import get_hash, new_event_id
from ...protocol.gojson import dumps
from ...timefmt import format_ns

__all__ = ["DOMAIN_LEADER_ELECTED", "SERVER_REMOVED", "MetaGroup"]

DOMAIN_LEADER_ELECTED = "$JS.EVENT.ADVISORY.DOMAIN.LEADER_ELECTED"
_TYPE = "io.nats.jetstream.advisory.v1.domain_leader_elected"
SERVER_REMOVED = "$JS.EVENT.ADVISORY.SERVER.REMOVED"
_REMOVED_TYPE = "io.nats.jetstream.advisory.v1.server_removed"


class MetaGroup:
    """The meta leader of a simulated cluster of ``names`` (``n1``..``nN``)."""

    def __init__(
        self,
        names: Sequence[str],
        cluster: str,
        domain: str,
        is_up: Callable[[str], bool],
        now_ns: Callable[[], int],
        publish: Callable[[bytes, bytes], None],
    ) -> None:
        self.names = list(names)
        self.cluster = cluster
        self.domain = domain
        self.leader = self.names[0]
        self._is_up = is_up
        self._now_ns = now_ns
        #: Sends an advisory in the system account (subject, body); it checks for interest.
        self._publish = publish

    def peer_ids(self) -> dict[str, str]:
        """Peer id -> server name, for requests that name a server by its peer id."""
        return {get_hash(name): name for name in self.names}

    def up(self, name: str) -> bool:
        return self._is_up(name)

    def has_quorum(self) -> bool:
        """A meta group answers only while a majority of its servers is up."""
        return sum(1 for n in self.names if self._is_up(n)) > len(self.names) // 2

    def candidates(self) -> list[str]:
        """The servers that could take over: up, and not the leader."""
        return [n for n in self.names if n != self.leader and self._is_up(n)]

    def step_down(self, to: str) -> None:
        """Move the leadership to ``to`` (a candidate) and tell the system account."""
        self.leader = to
        now = self._now_ns()
        replicas: list[dict[str, Any]] = []
        for name in [to, *(n for n in self.names if n != to)]:
            info: dict[str, Any] = {"name": name, "current": self._is_up(name)}
            if not self._is_up(name):
                info["offline"] = True
            info["active"] = 0
            info["peer"] = get_hash(name)
            replicas.append(info)
        event: dict[str, Any] = {
            "type": _TYPE,
            "id": new_event_id(),
            "timestamp": format_ns(now),
            "leader": get_hash(to),
            "replicas": replicas,
            "cluster": self.cluster,
        }
        if self.domain:
            event["domain"] = self.domain
        self._publish(DOMAIN_LEADER_ELECTED.encode(), dumps(event).encode())

    def remove(self, name: str, server_id: str) -> None:
        """Take ``name`` out of the group (``processRemovePeer``): the ``server_removed``
        advisory, then a new leader when it led."""
        self.names.remove(name)
        event: dict[str, Any] = {
            "type": _REMOVED_TYPE,
            "id": new_event_id(),
            "timestamp": format_ns(self._now_ns()),
            "server": name,
            "server_id": server_id,
            "cluster": self.cluster,
        }
        if self.domain:
            event["domain"] = self.domain
        self._publish(SERVER_REMOVED.encode(), dumps(event).encode())
        if name == self.leader:
            candidates = self.candidates()
            if candidates:
                self.step_down(candidates[0])
