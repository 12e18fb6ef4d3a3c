"""Quorum-lost advisories of the simulated cluster:
``$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.<stream>`` and
``$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.<stream>.<consumer>``.

Why a clock of its own: nats-server does not send them when peers go away but when raft
notices, and a client watching for a stalled stream sees exactly that delay. The rules
(``raft.go`` and ``sendStreamLostQuorumAdvisory`` / ``sendConsumerLostQuorumAdvisory`` in
``jetstream_cluster.go``), as a real 3-node 2.15.1 cluster showed them (two of three servers
killed, recorded in tests/jetstream/cluster/test_quorum_advisories.py):

* the leader checks its quorum on a ticker every 10 s from when it became leader; once
  fewer than a quorum of the group's peers (itself counted) were heard from in the last
  10 s it steps down, and the step-down sends the advisory (real: the stream's 50 s after
  its leader was elected, 16 s after the second kill);
* the group is then leaderless and stalled; its surviving peer campaigns on election
  timeouts (4-9 s, random) and, from its second timeout on, signals the loss again once
  more than 20 s passed since the last signal (or since the group was created): another
  advisory each time (real: 12.9 s after the first, then every 20 s and a timeout or so);
* never for a group younger than 5 s, and at most one per 10 s per stream or consumer;
* one peer of three down leaves a quorum: nothing is sent.

The JSON is ``JSStreamQuorumLostAdvisory`` / ``JSConsumerQuorumLostAdvisory``: type, id,
timestamp, stream, (consumer), replicas (``s.replicas(node)``: every peer of the group, the
sender included, as ``PeerInfo``), domain (omitempty); in the user's account no
``account``. At the step-down the sender is ``current`` and ``active`` since it was
elected, the others' ``active`` since they went down; a candidate has reset every peer's
last-heard time, so all are ``active`` 0. Sent only while someone listens.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...ids import get_hash, new_event_id
from ...protocol.gojson import dumps
from ...timefmt import format_ns

if TYPE_CHECKING:
    from ..clock_timers import Timer
    from .consumer_peers import ConsumerGroup
    from .members import ClusterServices
    from .replicas import ReplicaSet

__all__ = [
    "CONSUMER_QUORUM_LOST",
    "STREAM_QUORUM_LOST",
    "ConsumerQuorum",
    "QuorumWatch",
    "StreamQuorum",
]

STREAM_QUORUM_LOST = "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST"
CONSUMER_QUORUM_LOST = "$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST"
_STREAM_TYPE = "io.nats.jetstream.advisory.v1.stream_quorum_lost"
_CONSUMER_TYPE = "io.nats.jetstream.advisory.v1.consumer_quorum_lost"

_S = 1_000_000_000
#: ``lostQuorumInterval`` and ``lostQuorumCheck``: a peer unheard for this long does not count.
LOST_QUORUM_NS = 10 * _S
#: ``lostQuorumSignal``: a candidate signals the loss again after this long.
SIGNAL_NS = 20 * _S
#: ``lostQuorumAdvInterval``: at most one advisory per stream or consumer per this long.
ADVISORY_INTERVAL_NS = 10 * _S
#: A group this young sends none (``time.Since(node.Created()) > 5*time.Second``).
MIN_AGE_NS = 5 * _S
#: ``minElectionTimeout`` .. ``maxElectionTimeout``.
ELECTION_MIN_NS = 4 * _S
ELECTION_MAX_NS = 9 * _S

#: Its own generator, so election timeouts never shift the server's seeded ``rng``.
_rng = random.Random()


def election_timeout_ns() -> int:
    """``randElectionTimeout``."""
    return _rng.randrange(ELECTION_MIN_NS, ELECTION_MAX_NS)


class QuorumWatch:
    """The lost-quorum clock of one raft group: the leader's ticker, then the candidate's.

    Subclasses say who the peers are and how the group loses its leader; :meth:`check` is
    called whenever a peer goes down or up or the leader changes.
    """

    def __init__(self, js: ClusterServices, created_ns: int) -> None:
        self.js = js
        self.created_ns = created_ns
        #: ``lqsent``: when the last advisory went out (throttle).
        self.sent_ns: int | None = None
        #: ``llqrt``: when the candidate last signalled (starts at the node's creation).
        self.signalled_ns = created_ns
        #: After a lost-quorum step-down: no leader until a quorum of peers is online.
        self.stalled = False
        self._timer: Timer | None = None
        self._mode = ""  # "leader": the ticker runs; "candidate": the election timer
        #: The armed deadline: a tick happens then, however far the clock has jumped since.
        self._due = created_ns

    # --- what the group provides ------------------------------------------------------

    def peers(self) -> list[str]:
        raise NotImplementedError

    def offline(self, name: str) -> bool:
        raise NotImplementedError

    def down_since_ns(self, name: str) -> int:
        raise NotImplementedError

    def leader(self) -> str:
        """The leader's name, "" while leaderless."""
        raise NotImplementedError

    def leader_since_ns(self) -> int:
        raise NotImplementedError

    def lose_leader(self) -> None:
        """The leader steps down: the group is leaderless and stalled."""
        raise NotImplementedError

    def subject(self) -> str:
        raise NotImplementedError

    def fields(self, now: int, replicas: list[dict[str, Any]]) -> dict[str, Any]:
        """The advisory's JSON object, without ``domain``."""
        raise NotImplementedError

    def live(self) -> bool:
        """The stream or consumer still exists (a deleted one's clock stops)."""
        raise NotImplementedError

    # --- the rules --------------------------------------------------------------------

    def quorum(self) -> int:
        return len(self.peers()) // 2 + 1

    def online(self) -> list[str]:
        return [n for n in self.peers() if not self.offline(n)]

    def has_quorum(self) -> bool:
        """Enough peers online for raft to elect and commit."""
        return len(self.online()) >= self.quorum()

    def check(self, now: int | None = None) -> None:
        """Arm or cancel the clock for the group's state at ``now`` (the clock's if None)."""
        if not self.live() or len(self.peers()) < 2 or self.has_quorum() or not self.online():
            self._cancel()
            if self.has_quorum():
                self.stalled = False
            return
        if now is None:
            now = self.js.clock.now_ns()
        if self.leader():
            since = self.leader_since_ns()
            ticks = max(1, (now - since) // LOST_QUORUM_NS + 1)
            self._arm("leader", since + ticks * LOST_QUORUM_NS, self._leader_tick)
        elif self._mode != "candidate":
            self.stalled = True
            self._arm("candidate", now + election_timeout_ns() + election_timeout_ns(), self._candidate_tick)

    def _arm(self, mode: str, deadline: int, callback: Any) -> None:
        self._cancel()
        self._mode = mode
        self._due = deadline
        self._timer = self.js.timers.at(deadline, callback)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._mode = ""

    def _heard(self, name: str, leader: str, now: int) -> bool:
        """The leader heard from ``name`` in the last 10 s (heartbeats while online)."""
        return name == leader or not self.offline(name) or now - self.down_since_ns(name) < LOST_QUORUM_NS

    def _leader_tick(self) -> None:
        """``runAsLeader``'s ``lq`` ticker: step down once the quorum was not heard from."""
        self._timer = None
        self._mode = ""
        if not self.live():
            return
        now = self._due
        leader = self.leader()
        if not leader or self.has_quorum():
            self.check(now)
            return
        if sum(self._heard(n, leader, now) for n in self.peers()) >= self.quorum():
            self.check(now)
            return
        since = self.leader_since_ns()
        replicas = [self._peer_info(n, now, leader, now - since, False) for n in self.peers()]
        self.lose_leader()
        self.stalled = True
        self._signal(now, lambda: replicas)
        self.check(now)

    def _candidate_tick(self) -> None:
        """``switchToCandidate`` while already a candidate: signal again after 20 s."""
        self._timer = None
        self._mode = ""
        if not self.live():
            return
        now = self._due
        if self.has_quorum() or self.leader() or not self.online():
            self.check(now)
            return
        if now - self.signalled_ns > SIGNAL_NS:
            self.signalled_ns = now
            me = self.online()[0]
            self._signal(now, lambda: [self._peer_info(n, now, me, 0, True) for n in self.peers()])
        self._arm("candidate", now + election_timeout_ns(), self._candidate_tick)

    def _signal(self, now: int, replicas: Callable[[], list[dict[str, Any]]]) -> None:
        """``processStreamLeaderChange(false)`` without quorum: the throttled advisory
        (the throttle counts one sent to nobody, as ``lqsent`` does)."""
        if now - self.created_ns <= MIN_AGE_NS:
            return
        if self.sent_ns is not None and now - self.sent_ns < ADVISORY_INTERVAL_NS:
            return
        self.sent_ns = now
        subject = self.subject().encode()
        out = self.js.out
        if not out.has_interest(subject):
            return
        fields = self.fields(now, replicas())
        if self.js.domain:
            fields["domain"] = self.js.domain
        out.send_via_sendq(subject, -1, dumps(fields).encode())

    def _peer_info(self, name: str, now: int, me: str, my_active: int, candidate: bool) -> dict[str, Any]:
        """``PeerInfo`` as ``s.replicas(node)`` gives it on the sender (a candidate has
        reset every last-heard time: ``active`` 0)."""
        info: dict[str, Any] = {"name": name}
        if name == me:
            info["current"] = True
            info["active"] = my_active
        elif self.offline(name):
            info["current"] = False
            info["offline"] = True
            info["active"] = 0 if candidate else now - self.down_since_ns(name)
        else:
            info["current"] = not candidate
            info["active"] = 0 if candidate else min(max(0, now - self.down_since_ns(name)), _S)
        info["peer"] = get_hash(name)
        return info

    def close(self) -> None:
        self._cancel()


class StreamQuorum(QuorumWatch):
    """The stream's raft group (``ReplicaSet``)."""

    def __init__(self, replicas: ReplicaSet) -> None:
        super().__init__(replicas.stream.js, replicas.stream.created_ns)
        self.replicas = replicas

    def peers(self) -> list[str]:
        return [p.name for p in self.replicas.peers]

    def offline(self, name: str) -> bool:
        return self.replicas.peer(name).offline

    def down_since_ns(self, name: str) -> int:
        return self.replicas.peer(name).last_active_ns

    def leader(self) -> str:
        return "" if self.replicas.leaderless else self.replicas.leader.name

    def leader_since_ns(self) -> int:
        return self.replicas.leader_since_ns

    def lose_leader(self) -> None:
        self.replicas.lose_quorum()

    def live(self) -> bool:
        stream = self.replicas.stream
        return self.js.streams.get(stream.name) is stream

    def subject(self) -> str:
        return f"{STREAM_QUORUM_LOST}.{self.replicas.stream.name}"

    def fields(self, now: int, replicas: list[dict[str, Any]]) -> dict[str, Any]:
        """``JSStreamQuorumLostAdvisory``."""
        name = self.replicas.stream.name
        return {
            "type": _STREAM_TYPE,
            "id": new_event_id(),
            "timestamp": format_ns(now),
            "stream": name,
            "replicas": replicas,
        }


class ConsumerQuorum(QuorumWatch):
    """A consumer's raft group (``ConsumerGroup``); its peers are servers of the stream's."""

    def __init__(self, group: ConsumerGroup) -> None:
        super().__init__(group.consumer.js, group.consumer.created_ns)
        self.group = group

    def peers(self) -> list[str]:
        return list(self.group.peers)

    def offline(self, name: str) -> bool:
        return self.group.consumer.stream.replicas.peer(name).offline

    def down_since_ns(self, name: str) -> int:
        return self.group.consumer.stream.replicas.peer(name).last_active_ns

    def leader(self) -> str:
        group = self.group
        if group.leaderless or self.offline(group.leader):
            return ""
        return group.leader

    def leader_since_ns(self) -> int:
        return self.group.leader_since_ns

    def lose_leader(self) -> None:
        self.group.leaderless = True

    def live(self) -> bool:
        consumer = self.group.consumer
        stream = consumer.stream
        if self.js.streams.get(stream.name) is not stream or stream.consumer_set is None:
            return False
        return stream.consumer_set.by_name.get(consumer.name) is consumer

    def subject(self) -> str:
        consumer = self.group.consumer
        return f"{CONSUMER_QUORUM_LOST}.{consumer.stream.name}.{consumer.name}"

    def fields(self, now: int, replicas: list[dict[str, Any]]) -> dict[str, Any]:
        """``JSConsumerQuorumLostAdvisory``."""
        consumer = self.group.consumer
        return {
            "type": _CONSUMER_TYPE,
            "id": new_event_id(),
            "timestamp": format_ns(now),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "replicas": replicas,
        }
