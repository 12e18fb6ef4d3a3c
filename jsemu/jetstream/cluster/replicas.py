"""Simulated stream peers: R copies of a stream's store in one process.

A real R3 stream is three servers, each applying the leader's raft log at its own pace.
Here every peer has its own :class:`StreamStore`; the leader's store logs each mutation
(``ReplicatedStore``), and followers apply the log as far as the control plane lets them:
paused (falls behind without bound), held at a fixed lag, or caught up. A follower that
lags answers Direct Get from its own, older store, which is exactly the read-after-write
incoherency ADR-31 accepts. The leader is always current, so publishes and
``STREAM.MSG.GET`` (served from ``Stream.store``, the leader's store) stay coherent.

A stream with R1 has one peer whose store is a plain ``StreamStore``: no logging cost,
unless the server persists streams (``store_dir``): then the same log feeds the
stream's write-ahead log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

# FLAVOURS and StreamStore are the concrete classes: the replicated flavours below subclass
# them (a logging method per mutator); everything else here holds a Store.
from ...store import FLAVOURS, Clock, Store, StoreError, StoreLimits, StreamStore
from ...store.column_snapshot import Columns
from ...store.records import Append, Record, batched
from ...store.wal import WriteAheadLog
from .leader import stream_leader_elected
from .quorum import StreamQuorum

if TYPE_CHECKING:
    from ..directget.responder import DirectGetResponder
    from .members import ReplicatedStream

__all__ = ["Peer", "ReplicaSet", "ReplicatedStore", "ReplicationError", "replicated_store"]

log = logging.getLogger("jsemu.jetstream")

#: Raft heartbeats keep an online follower's ``active`` below this (ns).
HEARTBEAT_NS = 1_000_000_000


class ReplicationError(ValueError):
    """A control-plane request that names no such peer or cannot be carried out."""


class ReplicatedStore(StreamStore):
    """A peer's store; while it is the leader's, each outermost mutation is logged as its record.

    Mixed into each flavour by :func:`replicated_store`; the logging methods are generated
    from the flavour's registered mutators (:mod:`jsemu.store.records`), so a new mutator
    is logged without a list to keep here.
    """

    __slots__ = ("_depth", "replicas")

    def __init__(self, limits: StoreLimits | None = None, clock: Clock | None = None, first_seq: int = 1) -> None:
        super().__init__(limits, clock, first_seq)
        self.replicas: ReplicaSet | None = None
        self._depth = 0

    @batched(Append)
    def append_plain(self, subject: bytes, data: bytes) -> int:
        """Through ``append``, so the message is logged."""
        return self.append(subject, b"", data)[0]

    @batched(Append)
    def append_columns(self, subjects: Sequence[bytes], datas: Sequence[bytes]) -> bool:
        """Nothing in bulk: each message goes through ``append`` to be logged."""
        return False

    @batched(Append)
    def append_run(self, subjects: list[bytes], hdrs: list[bytes], datas: list[bytes], tss: list[int]) -> bool:
        """In bulk only as a replay (under ``apply``: not logged again); a call of its own is
        refused, so each message goes through ``append`` and is logged."""
        if not self._depth:
            return False
        return super().append_run(subjects, hdrs, datas, tss)

    @batched(Columns)
    def load_columns(self, run: Columns) -> bool:
        """In bulk only as a replay (under ``apply``), like ``append_run``."""
        if not self._depth:
            return False
        return super().load_columns(run)

    def apply(self, record: Record) -> object:
        """A record from the log (a follower's copy, a replayed log): not logged again."""
        self._depth += 1
        try:
            return super().apply(record)
        finally:
            self._depth -= 1


def _logged(base: Callable[..., Any], record: type[Record]) -> Callable[..., Any]:
    def method(self: ReplicatedStore, *args: Any, **kwargs: Any) -> Any:
        replicas = self.replicas
        if replicas is None or self._depth or replicas.leader.store is not self:
            return base(self, *args, **kwargs)
        self._depth += 1  # calls the method makes on itself are part of this one record
        try:
            result = base(self, *args, **kwargs)
        finally:
            self._depth -= 1
        replicas.record(record.of_call(result, *args, **kwargs))
        return result

    method.__name__ = base.__name__
    method.__doc__ = base.__doc__
    method.__dict__.update(base.__dict__)  # still registered with its record
    return method


def _replicated_flavour(flavour: type[StreamStore]) -> type[ReplicatedStore]:
    cls = type(f"Replicated{flavour.__name__}", (ReplicatedStore, flavour), {"__slots__": ()})
    for name in dir(flavour):
        base = getattr(flavour, name)
        if getattr(base, "__mutation__", None) == "logged":
            setattr(cls, name, _logged(base, base.__record__))
    return cls


_REPLICATED = {storage: _replicated_flavour(flavour) for storage, flavour in FLAVOURS.items()}


def replicated_store(
    storage: str, limits: StoreLimits | None = None, clock: Clock | None = None, first_seq: int = 1
) -> Store:
    """A store of the ``storage`` flavour that logs its mutations while it is the leader's
    (a :class:`ReplicatedStore`, which :class:`ReplicaSet` attaches itself to)."""
    return _REPLICATED[storage](limits, clock, first_seq)


class Peer:
    """One replica of a stream: its store, how far it has applied the log, its state."""

    def __init__(self, name: str, store: Store, now_ns: int) -> None:
        self.name = name
        self.store = store
        self.applied = 0  # log index up to which this peer has applied
        self.paused = False
        self.hold: int | None = None  # keep exactly this many entries unapplied
        self.offline = False
        self.last_active_ns = now_ns
        self.responders: list[DirectGetResponder] = []

    def __repr__(self) -> str:
        return f"<Peer {self.name} applied={self.applied}{' paused' if self.paused else ''}>"


class ReplicaSet:
    """The peers of one stream, the leader, and the log the followers apply."""

    def __init__(self, stream: ReplicatedStream, peers: list[Peer]) -> None:
        self.stream = stream
        self.peers = peers
        self.leader: Peer = peers[0]
        self.leader_since_ns = stream.created_ns
        self.leaderless = False
        self._log: list[Record] = []
        self._base = 0  # log index of _log[0]
        #: Where the leader's mutations are also written when the server has a store_dir.
        self.wal: WriteAheadLog | None = None
        for peer in peers:
            if isinstance(peer.store, ReplicatedStore):
                peer.store.replicas = self
        #: The leader's lost-quorum clock and the QUORUM_LOST advisories.
        self.quorum = StreamQuorum(self)

    # --- the log ----------------------------------------------------------------------

    @property
    def end(self) -> int:
        return self._base + len(self._log)

    def record(self, record: Record) -> None:
        if self.wal is not None:
            self.wal.append(record)
        self._log.append(record)
        end = self.end
        self.leader.applied = end
        for peer in self.peers:
            if peer is not self.leader:
                self._advance(peer)
        self._trim()

    def _trim(self) -> None:
        low = min(p.applied for p in self.peers)
        if low > self._base:
            del self._log[: low - self._base]
            self._base = low

    def _advance(self, peer: Peer, force: bool = False) -> None:
        """Apply entries to ``peer`` as far as its state allows (all of them if ``force``)."""
        if not force and (peer.paused or peer.offline):
            return
        target = self.end
        if not force and peer.hold is not None:
            target = max(peer.applied, target - peer.hold)
        if peer.applied >= target:
            return
        store = peer.store
        for record in self._log[peer.applied - self._base : target - self._base]:
            try:
                store.apply(record)
            except StoreError:  # the leader's state allowed it, so this is a jsemu bug
                log.exception("peer %s of stream %s could not apply %s", peer.name, self.stream.name, record)
        peer.applied = target
        peer.last_active_ns = self.stream.js.clock.now_ns()

    def lag(self, peer: Peer) -> int:
        return self.end - peer.applied

    def active_ns(self, peer: Peer, now_ns: int) -> int:
        """Time since the leader last heard from ``peer`` (heartbeats while it is online)."""
        since = max(0, now_ns - peer.last_active_ns)
        return since if peer.offline else min(since, HEARTBEAT_NS)

    # --- control ----------------------------------------------------------------------

    def peer(self, name: str | None) -> Peer:
        if name is None:
            return self.leader
        for peer in self.peers:
            if peer.name == name:
                return peer
        raise ReplicationError(f"stream {self.stream.name!r} has no peer {name!r}")

    def follower(self, name: str) -> Peer:
        peer = self.peer(name)
        if peer is self.leader:
            raise ReplicationError(f"peer {name!r} is the leader of stream {self.stream.name!r}; it can not lag")
        return peer

    def pause(self, name: str) -> None:
        self.follower(name).paused = True

    def set_lag(self, name: str, entries: int) -> None:
        """Keep the follower exactly ``entries`` log entries (messages) behind from now on."""
        if entries < 0:
            raise ReplicationError("lag can not be negative")
        peer = self.follower(name)
        peer.paused = False
        peer.hold = entries
        self._advance(peer)

    def resume(self, name: str) -> None:
        """Unpause and catch up."""
        peer = self.peer(name)
        peer.paused = False
        peer.hold = None
        self._advance(peer)
        self._trim()

    def set_offline(self, name: str, offline: bool) -> None:
        peer = self.peer(name)
        if peer.offline == offline:
            return
        peer.offline = offline
        if offline:
            peer.last_active_ns = self.stream.js.clock.now_ns()  # heard from (heartbeats) until now
            if peer is self.leader:
                self._elect(exclude=peer)
        else:
            self._advance(peer)
            if self.leaderless:
                self._elect()
        self.stream.sync_responders()
        self.quorum.check()  # before the consumers': the stream's group is the older
        consumers = self.stream.consumer_set
        if consumers is not None:  # their groups elect now too (a new leader takes over its state)
            for c in list(consumers.by_name.values()):
                if c.group is not None:
                    c.group.current_leader()
                    if c.group.quorum is not None:
                        c.group.quorum.check()

    def step_down(self, to: str | None = None) -> Peer:
        """Hand leadership to ``to`` or to the best other online peer."""
        if to is not None:
            target = self.peer(to)
            if target.offline:
                raise ReplicationError(f"peer {to!r} is offline")
            self._make_leader(target)
        else:
            self._elect(exclude=self.leader)
            if self.leaderless:
                raise ReplicationError(f"stream {self.stream.name!r} has no other online peer")
        self.stream.sync_responders()
        return self.leader

    def _elect(self, exclude: Peer | None = None) -> None:
        """Raft elects a current peer; prefer one that is not paused, then the least behind."""
        candidates = [p for p in self.peers if p is not exclude and not p.offline]
        if not candidates or (self.quorum.stalled and not self.quorum.has_quorum()):
            self.leaderless = True
            return
        candidates.sort(key=lambda p: (p.paused, self.lag(p)))
        self._make_leader(candidates[0])

    def _make_leader(self, peer: Peer) -> None:
        self._advance(peer, force=True)  # a new leader has every committed entry
        peer.paused = False
        peer.hold = None
        elected = peer is not self.leader or self.leaderless
        if elected:
            self.leader_since_ns = self.stream.js.clock.now_ns()
        self.leader = peer
        self.leaderless = False
        self.stream.store = peer.store
        if elected:
            stream_leader_elected(self.stream, self)

    def lose_quorum(self) -> None:
        """The leader stepped down for want of a quorum: leaderless until one is back."""
        self.leaderless = True
        self.stream.sync_responders()

    def restart_on(self, new: Peer) -> None:
        """The only peer of an R1 group is replaced by ``new`` (an empty store on another
        server), which leads at once: the log so far no longer applies to anyone."""
        new.applied = self.end
        if isinstance(new.store, ReplicatedStore):
            new.store.replicas = self
        self.peers[0].offline = True  # its Direct Get responders leave with it
        self.stream.sync_responders()
        self.peers[0] = new
        self._make_leader(new)
        self._trim()
        self.stream.sync_responders()

    def forget(self, peer: Peer) -> None:
        """``peer`` left the group (a move): the log no longer waits for it."""
        self._trim()

    def catch_up_all(self) -> None:
        for peer in self.peers:
            peer.paused = False
            peer.hold = None
            self._advance(peer)
        self._trim()
