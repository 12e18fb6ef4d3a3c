"""Consumer state replicated by records in the simulated cluster.

nats-server replicates a clustered consumer's store through its raft group: the leader
proposes ``updateDeliveredOp`` / ``updateAcksOp`` entries and every replica applies them to
its own consumer store (``UpdateDelivered`` / ``UpdateAcks``); a new leader starts from that
store (``readStoredState``): delivery resumes after ``delivered``, pending messages are
redelivered ``ack_wait`` after their delivery, acked ones never come back.

Here the leader's engine (:class:`~jsemu.jetstream.consumers.consumer.Consumer`) emits one typed record per change of
its store view (``delivered``, ``ack_floor``, pending, redelivery counts) and each replica
applies it to a :class:`ReplicaState` of its own. A step-down hands the engine the new
leader's state (``Consumer.take_over``), so what it knows came only from records. Only
consumers with a raft group of more than one peer have this; R1 and standalone consumers pay
nothing.

A replica can be held back (:meth:`ConsumerReplicas.hold`, the control plane's
``lag_consumer_replica``): it applies no records until it leads; then the records it
missed are lost, like proposals a failed leader never got committed, and the other replicas
restart from its state (raft truncates their logs to the new leader's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "Acked",
    "ConsumerRecord",
    "ConsumerReplicas",
    "Delivered",
    "Dropped",
    "ReplicaState",
    "Snapshot",
    "Terminated",
    "Touched",
]


@dataclass(frozen=True, slots=True)
class Delivered:
    """``updateDeliveredOp``: stream message ``sseq`` went out as ``dseq``, its ``dc``-th delivery."""

    dseq: int
    sseq: int
    dc: int
    ts: int


@dataclass(frozen=True, slots=True)
class Acked:
    """``updateAcksOp``: an ack (explicit: of ``sseq``; all: of everything up to it)."""

    dseq: int
    sseq: int


@dataclass(frozen=True, slots=True)
class Terminated:
    """``+TERM``: the server acks the message (``processTerm``)."""

    dseq: int
    sseq: int


@dataclass(frozen=True, slots=True)
class Touched:
    """A pending message's ack-wait clock restarts at ``ts`` (``+WPI``, ``-NAK`` with a delay)."""

    sseq: int
    ts: int


@dataclass(frozen=True, slots=True)
class Dropped:
    """Out of pending without an ack: ``max_deliver`` reached (``dc`` kept) or gone from the stream."""

    sseq: int
    dc: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The whole store state, as a purge rewrites it (``writeStoreState``)."""

    delivered: tuple[int, int]
    ack_floor: tuple[int, int]
    pending: tuple[tuple[int, int, int], ...]
    redelivered: tuple[tuple[int, int], ...]


ConsumerRecord = Delivered | Acked | Terminated | Touched | Dropped | Snapshot


class ReplicaState:
    """One replica's consumer store (Go's ``consumerMemStore`` state)."""

    __slots__ = ("ack_all", "ack_floor", "ack_none", "delivered", "pending", "rdc")

    def __init__(self, ack_policy: str) -> None:
        self.ack_none = ack_policy == "none"
        self.ack_all = ack_policy == "all"
        self.delivered = (0, 0)
        self.ack_floor = (0, 0)
        #: Stream seq -> [delivery seq, delivery time].
        self.pending: dict[int, list[int]] = {}
        #: Stream seq -> times redelivered.
        self.rdc: dict[int, int] = {}

    def copy(self) -> ReplicaState:
        out = ReplicaState("none" if self.ack_none else "all" if self.ack_all else "explicit")
        out.delivered, out.ack_floor = self.delivered, self.ack_floor
        out.pending = {s: list(p) for s, p in self.pending.items()}
        out.rdc = dict(self.rdc)
        return out

    def view(self) -> tuple[tuple[int, int], tuple[int, int], dict[int, int], dict[int, int]]:
        """What a comparison needs: delivered, ack floor, pending (seq -> dseq), redelivery counts."""
        return self.delivered, self.ack_floor, {s: p[0] for s, p in self.pending.items()}, dict(self.rdc)

    def apply(self, rec: ConsumerRecord) -> None:
        if isinstance(rec, Delivered):
            self._delivered(rec)
        elif isinstance(rec, Acked | Terminated):
            self._acked(rec.dseq, rec.sseq)
        elif isinstance(rec, Touched):
            p = self.pending.get(rec.sseq)
            if p is not None:
                p[1] = rec.ts
        elif isinstance(rec, Dropped):
            self.pending.pop(rec.sseq, None)
            if rec.dc:
                self.rdc[rec.sseq] = rec.dc
            else:
                self.rdc.pop(rec.sseq, None)
        else:
            self.delivered, self.ack_floor = rec.delivered, rec.ack_floor
            self.pending = {s: [d, ts] for s, d, ts in rec.pending}
            self.rdc = dict(rec.redelivered)

    def _delivered(self, rec: Delivered) -> None:
        """``UpdateDelivered``."""
        dseq, sseq = rec.dseq, rec.sseq
        if self.ack_none:
            if dseq > self.delivered[0]:
                self.delivered = (dseq, max(sseq, self.delivered[1]))
                self.ack_floor = self.delivered
            return
        p = self.pending.get(sseq)
        if p is not None:
            p[1] = rec.ts
        else:
            self.pending[sseq] = [dseq, rec.ts]
        self.delivered = (max(dseq, self.delivered[0]), max(sseq, self.delivered[1]))
        if rec.dc > 1:
            self.rdc[sseq] = rec.dc - 1

    def _acked(self, dseq: int, sseq: int) -> None:
        """``UpdateAcks``."""
        if self.ack_all:
            if dseq > self.ack_floor[0]:
                self.ack_floor = (dseq, sseq)
            for seq in [s for s in self.pending if s <= sseq]:
                del self.pending[seq]
                self.rdc.pop(seq, None)
            return
        p = self.pending.pop(sseq, None)
        self.rdc.pop(sseq, None)
        if p is None:
            return
        if p[0] > 0 and dseq > p[0]:
            dseq = p[0]
        if not self.pending:
            self.ack_floor = self.delivered
        elif dseq == self.ack_floor[0] + 1:
            self.ack_floor = (dseq, sseq)
            if self.delivered[0] > dseq:
                for ss in range(sseq + 1, self.delivered[1] + 1):
                    q = self.pending.get(ss)
                    if q is not None:
                        if q[0] > 0:
                            self.ack_floor = (q[0] - 1, ss - 1)
                        break


class ConsumerReplicas:
    """The replicas of one consumer's raft group: a state each, the log they apply, and
    which of them are held back."""

    def __init__(self, peers: list[str], leader: str, ack_policy: str, offline: Callable[[str], bool]) -> None:
        self.states = {name: ReplicaState(ack_policy) for name in peers}
        self.applied = dict.fromkeys(peers, 0)
        self.leader = leader
        self.held: set[str] = set()
        self._offline = offline
        self._log: list[ConsumerRecord] = []
        self._base = 0

    @property
    def end(self) -> int:
        return self._base + len(self._log)

    def record(self, rec: ConsumerRecord) -> None:
        """The leader's change: its own state applies it, then every follower that can."""
        self._log.append(rec)
        self.states[self.leader].apply(rec)
        self.applied[self.leader] = self.end
        for name in self.states:
            if name != self.leader and name not in self.held and not self._offline(name):
                self._advance(name)
        low = min(self.applied.values())
        if low > self._base:
            del self._log[: low - self._base]
            self._base = low

    def _advance(self, name: str) -> None:
        state = self.states[name]
        for rec in self._log[self.applied[name] - self._base :]:
            state.apply(rec)
        self.applied[name] = self.end

    def hold(self, name: str) -> None:
        """``name`` applies nothing more until it leads: a lagging follower."""
        if name == self.leader:
            raise ValueError(f"peer {name!r} leads the consumer; it can not lag")
        if name not in self.states:
            raise ValueError(f"the consumer has no peer {name!r}")
        self.held.add(name)

    def lag(self, name: str) -> int:
        return self.end - self.applied[name]

    def replace(self, removed: str, spare: str) -> None:
        """``spare`` joins in ``removed``'s place, caught up with the leader's state."""
        self.states[spare] = self.states[self.leader].copy()
        self.applied[spare] = self.end
        del self.states[removed], self.applied[removed]
        self.held.discard(removed)

    def elect(self, name: str) -> ReplicaState:
        """``name`` leads: it catches up unless held; a held one's missing records are lost
        and the others restart from its state. Returns the state the engine takes over."""
        if name in self.held:
            self.held.discard(name)
            state = self.states[name]
            for other in self.states:
                if other != name:
                    self.states[other] = state.copy()
            self._log.clear()
            self._base = 0
            self.applied = dict.fromkeys(self.states, 0)
        else:
            self._advance(name)
        self.leader = name
        return self.states[name]
