"""Hypothesis state machine for simulated peers: a follower that has applied N log entries
holds exactly the leader's state after N entries, whatever mix of writes, deletes,
purges, limit changes, pauses, held lags, outages and leader changes came before.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from jsemu.jetstream.clock_timers import ClockTimers
from jsemu.jetstream.cluster.replicas import Peer, ReplicaSet, replicated_store
from jsemu.store import ManualClock, StoreError, StoreLimits

PEERS = ["n1", "n2", "n3"]
SUBJECTS = st.sampled_from([b"a", b"b", b"c.x", b"c.y"])


def snapshot(store: Any) -> tuple[Any, ...]:
    state = store.state()
    msgs = []
    seq = state.first_seq
    while True:
        sm = store.load_next(b">", seq)
        if sm is None:
            break
        msgs.append((sm.seq, sm.subject, sm.hdr, sm.data, sm.ts))
        seq = sm.seq + 1
    return (state.msgs, state.bytes, state.first_seq, state.last_seq, state.num_deleted, tuple(msgs))


class ReplicaMachine(RuleBasedStateMachine):
    @initialize(max_per_subject=st.sampled_from([-1, 2]), max_msgs=st.sampled_from([-1, 6]))
    def setup(self, max_per_subject: int, max_msgs: int) -> None:
        self.clock = ManualClock()
        limits = StoreLimits(max_msgs=max_msgs, max_msgs_per_subject=max_per_subject)
        stream = SimpleNamespace(
            name="S", created_ns=self.clock.now_ns(), consumer_set=None, sync_responders=lambda: None
        )
        out = SimpleNamespace(has_interest=lambda subject: False)  # nobody listens to advisories
        timers = ClockTimers(self.clock, lambda: None)  # the quorum watch's deadlines (never run here)
        stream.js = SimpleNamespace(clock=self.clock, out=out, streams={"S": stream}, timers=timers)
        peers = [Peer(n, replicated_store("memory", limits, self.clock), 0) for n in PEERS]
        self.replicas = ReplicaSet(stream, peers)  # type: ignore[arg-type]
        stream.store = peers[0].store
        self.stream = stream
        # The leader's state after each number of log entries.
        self.history = [snapshot(peers[0].store)]
        # A plain model of each follower: paused, held lag, offline, entries applied.
        self.model = {n: {"paused": False, "hold": None, "offline": False, "applied": 0} for n in PEERS}

    def _advance_model(self, name: str) -> None:
        m = self.model[name]
        end = self.replicas.end
        if m["paused"] or m["offline"]:
            return
        m["applied"] = end if m["hold"] is None else max(m["applied"], end - m["hold"])

    def _sync_leader_model(self) -> None:
        """A new leader has every entry and runs freely (it is not paused or held)."""
        if not self.replicas.leaderless:
            m = self.model[self.replicas.leader.name]
            m.update(paused=False, hold=None, applied=self.replicas.end)

    def _leader_store(self) -> Any:
        return self.stream.store

    def _logged(self) -> None:
        """Record the leader's state for every entry the last call added."""
        while len(self.history) <= self.replicas.end:
            self.history.append(snapshot(self._leader_store()))
        for name in PEERS:
            self._advance_model(name)
        self._sync_leader_model()

    # --- writes on the leader -------------------------------------------------------------

    @precondition(lambda self: not self.replicas.leaderless)
    @rule(subject=SUBJECTS, data=st.binary(max_size=3), with_hdr=st.booleans())
    def append(self, subject: bytes, data: bytes, with_hdr: bool) -> None:
        self.clock.advance(1)
        hdr = b"NATS/1.0\r\nX: 1\r\n\r\n" if with_hdr else b""
        try:
            self._leader_store().append(subject, hdr, data)
        except StoreError:
            pass
        self._logged()

    @precondition(lambda self: not self.replicas.leaderless)
    @rule(offset=st.integers(0, 8))
    def remove(self, offset: int) -> None:
        store = self._leader_store()
        store.remove(store.first_seq + offset)
        self._logged()

    @precondition(lambda self: not self.replicas.leaderless)
    @rule(subject=st.sampled_from([None, b"a", b"c.*"]), keep=st.integers(0, 2))
    def purge_ex(self, subject: bytes | None, keep: int) -> None:
        self._leader_store().purge_ex(subject, 0, keep)
        self._logged()

    @precondition(lambda self: not self.replicas.leaderless)
    @rule()
    def skip(self) -> None:
        self._leader_store().skip_msg()
        self._logged()

    @precondition(lambda self: not self.replicas.leaderless)
    @rule(max_msgs=st.sampled_from([-1, 3, 5]))
    def limits(self, max_msgs: int) -> None:
        self._leader_store().update_limits(StoreLimits(max_msgs=max_msgs))
        self._logged()

    # --- the control plane ----------------------------------------------------------------

    @rule(peer=st.sampled_from(PEERS))
    def pause(self, peer: str) -> None:
        if self.replicas.leader.name != peer:
            self.replicas.pause(peer)
            self.model[peer]["paused"] = True

    @rule(peer=st.sampled_from(PEERS), lag=st.integers(0, 3))
    def hold(self, peer: str, lag: int) -> None:
        if self.replicas.leader.name != peer:
            self.replicas.set_lag(peer, lag)
            self.model[peer].update(paused=False, hold=lag)
            self._advance_model(peer)

    @rule(peer=st.sampled_from(PEERS))
    def resume(self, peer: str) -> None:
        self.replicas.resume(peer)
        self.model[peer].update(paused=False, hold=None)
        self._advance_model(peer)

    @rule(peer=st.sampled_from(PEERS), offline=st.booleans())
    def outage(self, peer: str, offline: bool) -> None:
        self.replicas.set_offline(peer, offline)
        self.model[peer]["offline"] = offline
        self._advance_model(peer)
        self._sync_leader_model()

    @precondition(lambda self: not self.replicas.leaderless)
    @rule(to=st.sampled_from([None, *PEERS]))
    def step_down(self, to: str | None) -> None:
        try:
            self.replicas.step_down(to)
        except ValueError:
            pass  # the target is offline or no other peer is online
        self._sync_leader_model()

    # --- what must hold ---------------------------------------------------------------

    @invariant()
    def each_peer_is_the_leader_at_its_position(self) -> None:
        replicas = self.replicas
        for peer in replicas.peers:
            assert peer.applied == self.model[peer.name]["applied"], (peer, self.model)
            assert snapshot(peer.store) == self.history[peer.applied], peer
        if not replicas.leaderless:
            assert replicas.leader.applied == replicas.end
            assert self.stream.store is replicas.leader.store

    def teardown(self) -> None:
        if not hasattr(self, "replicas"):
            return
        for peer in PEERS:
            self.replicas.set_offline(peer, False)
        self.replicas.catch_up_all()
        leader = snapshot(self.stream.store)
        assert all(snapshot(p.store) == leader for p in self.replicas.peers)


TestReplicaMachine = ReplicaMachine.TestCase
TestReplicaMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
