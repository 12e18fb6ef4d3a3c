"""The control plane: what a test can do to a running jsemu server that a real one can't.

Modelled on moto's ``/moto-api``: plain methods on ``server.control`` for tests in the
same process, and the same methods over NATS requests on ``$JSEMU.API.<METHOD>`` (see
:mod:`jsemu.control.nats_api`) for a server running as a separate process.

* replication: pause / resume a stream peer, a mirror or a source, hold it N messages
  behind, catch it up;
* faults: take a peer down or up, leader step-down, and drop / delay / answer with a
  status the next N client messages matching a subject filter;
* nodes: take a server of the simulated cluster down or up: its client port and clients,
  its peers in every stream;
* responders: who in the Direct Get queue group answers (random with a seed, round
  robin, or prefer a peer or a mirror);
* clock: freeze, advance, set, resume (max_age, ``start_time`` and ``up_to_time``
  follow it);
* inspect: which responder answered each Direct Get; the peers of a stream; reset.

Call the methods from the server's event loop thread (or over ``$JSEMU.API``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..jetstream.api.peers import settle_move
from ..jetstream.cluster.replicas import ReplicationError
from ..server.queue_policy import Prefer, RoundRobin
from ..store import ControlledClock, ManualClock
from .consumer_faults import ConsumerControls
from .remote import ControlError, remote, remote_methods

if TYPE_CHECKING:
    import random

    from ..jetstream.clock_timers import ClockTimers
    from ..jetstream.cluster.replicas import ReplicaSet
    from ..jetstream.links.mirror import MirrorLink
    from ..jetstream.links.upstream import UpstreamLink
    from ..jetstream.service import JetStream
    from ..jetstream.streams.stream import Stream
    from ..server.faults import FaultInjector
    from ..server.node import Node
    from ..server.queue_policy import QueuePolicies
    from ..store import Clock

__all__ = ["ControlError", "ControlPlane", "ControlledServer", "DirectGetAnswer", "remote_methods"]

DIRECT_GET_FILTER = "$JS.API.DIRECT.GET.>"


@dataclass(frozen=True)
class DirectGetAnswer:
    """One Direct Get request and the member of the queue group that answered it."""

    subject: str  # the request subject
    stream: str  # the stream that answered (a mirror's own name)
    peer: str  # the peer (server) of that stream
    answers_for: str  # the stream named in the request subject

    def as_dict(self) -> dict[str, str]:
        return {"subject": self.subject, "stream": self.stream, "peer": self.peer, "answers_for": self.answers_for}


class ControlledServer(Protocol):
    """What the control plane reads of the server it controls (``jsemu.app.Server``, which
    composes it and so stays above it): its JetStream (every account's), fault rules, queue
    policies, random source, its nodes and flush."""

    @property
    def jetstream(self) -> JetStream | None: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def timers(self) -> ClockTimers: ...

    @property
    def account_jetstreams(self) -> dict[str, JetStream]: ...

    @property
    def nodes(self) -> list[Node]: ...

    def node_down(self, name: str) -> Node: ...

    def node_up(self, name: str) -> Node: ...

    @property
    def faults(self) -> FaultInjector: ...

    @property
    def queue_policies(self) -> QueuePolicies: ...

    @property
    def rng(self) -> random.Random: ...

    def flush(self) -> None: ...

    def enter_lame_duck(self) -> bool: ...


class ControlPlane(ConsumerControls):
    def __init__(self, server: ControlledServer) -> None:
        self.server = server

    # --- lookups ----------------------------------------------------------------------

    @property
    def js(self) -> JetStream:
        js = self.server.jetstream
        if js is None:
            raise ControlError("JetStream is not enabled")
        return js

    def _stream(self, name: str) -> Stream:
        stream = self.js.streams.get(name)
        if stream is None:
            raise ControlError(f"no stream {name!r}")
        return stream

    def _replicas(self, stream: str) -> ReplicaSet:
        return self._stream(stream).replicas

    def _mirror(self, stream: str) -> MirrorLink:
        link = self._stream(stream).mirror_link
        if link is None:
            raise ControlError(f"stream {stream!r} is not a mirror; name a peer to pause a replica")
        return link

    def _link(self, stream: str, source: str | None) -> UpstreamLink:
        """The mirror of ``stream``, or its consumer of the source stream ``source``."""
        if source is None:
            return self._mirror(stream)
        for link in self._stream(stream).source_links:
            if link.upstream_name == source:
                return link
        raise ControlError(f"stream {stream!r} has no source {source!r}")

    # --- replication ------------------------------------------------------------------

    @remote
    def pause(self, stream: str, peer: str | None = None, source: str | None = None) -> None:
        """Stop a follower (``peer``), a mirror (neither) or the copying from one of the
        stream's sources (``source``) from applying anything new."""
        if peer is None:
            self._link(stream, source).pause()
        else:
            _wrap(self._replicas(stream).pause, peer)

    @remote
    def resume(self, stream: str, peer: str | None = None, source: str | None = None) -> None:
        """Let a paused or held follower, mirror or source run again; it catches up at once."""
        if peer is None:
            self._link(stream, source).resume()
        else:
            _wrap(self._replicas(stream).resume, peer)

    catch_up = resume

    @remote
    def set_lag(self, stream: str, messages: int, peer: str | None = None, source: str | None = None) -> None:
        """Keep a follower, mirror or source exactly ``messages`` behind from now on."""
        if messages < 0:
            raise ControlError("lag can not be negative")
        if peer is None:
            self._link(stream, source).set_lag(messages)
        else:
            _wrap(self._replicas(stream).set_lag, peer, messages)

    @remote
    def peers(self, stream: str) -> list[dict[str, Any]]:
        """Each peer of the stream: name, leader, applied, lag, paused, held lag, offline."""
        replicas = self._replicas(stream)
        return [
            {
                "name": p.name,
                "leader": p is replicas.leader and not replicas.leaderless,
                "lag": replicas.lag(p),
                "paused": p.paused,
                "hold": p.hold,
                "offline": p.offline,
                "last_seq": p.store.last_seq,
            }
            for p in replicas.peers
        ]

    def _account_stream(self, stream: str, account: str | None) -> tuple[JetStream, Stream]:
        js = self.js if account is None else self.server.account_jetstreams.get(account)
        if js is None or stream not in js.streams:
            raise ControlError(f"no stream {stream!r}" + (f" in account {account!r}" if account else ""))
        return js, js.streams[stream]

    @remote
    def hold_moves(self, stream: str, account: str | None = None, hold: bool = True) -> None:
        """Keep a move of the stream (``ACCOUNT.STREAM.MOVE``) in progress, its ``desired``
        block showing, until ``finish_move`` or a ``CANCEL_MOVE``; ``hold=False`` stops holding."""
        self._account_stream(stream, account)[1].move_held = hold

    @remote
    def finish_move(self, stream: str, account: str | None = None) -> None:
        """Settle the stream's move under way (the new peer caught up, the old one gone)."""
        js, target = self._account_stream(stream, account)
        if target.pending_move is None:
            raise ControlError(f"stream {stream!r} has no move in progress")
        settle_move(js, target)
        self.server.flush()

    @remote
    def mirror_state(self, stream: str) -> dict[str, Any]:
        """A mirror's link: its upstream, whether attached, last copied sequence, lag, paused,
        held lag, and whether it answers in the upstream's Direct Get group."""
        link = self._mirror(stream)
        return {
            "upstream": link.upstream_name,
            "attached": link.upstream is not None,
            "last_seq": link.sseq,
            "lag": link.pending(),
            "paused": link.paused,
            "hold": link.hold,
            "direct": link.joined and self._stream(stream).config.mirror_direct,
        }

    # --- faults -----------------------------------------------------------------------

    @remote
    def peer_down(self, stream: str, peer: str) -> None:
        """Take a peer offline: its Direct Get responders leave; a leader is replaced."""
        replicas = self._replicas(stream)
        _wrap(replicas.set_offline, peer, True)

    @remote
    def peer_up(self, stream: str, peer: str) -> None:
        """Bring a peer taken down by ``peer_down`` back; it catches up with the log."""
        replicas = self._replicas(stream)
        _wrap(replicas.set_offline, peer, False)

    @remote
    def step_down(self, stream: str, to: str | None = None) -> str:
        """Move the stream's leadership (to ``to`` if given); returns the new leader."""
        leader: str = _wrap(self._replicas(stream).step_down, to).name
        return leader

    def _node(self, name: str) -> Node:
        nodes = self.server.nodes
        if len(nodes) < 2:
            raise ControlError("nodes go down and up in a simulated cluster only (cluster_size > 1)")
        for node in nodes:
            if node.name == name:
                return node
        raise ControlError(f"no node {name!r}: the nodes are {', '.join(n.name for n in nodes)}")

    def _node_peers(self, name: str, offline: bool) -> None:
        """The node's peer in every stream of every account goes offline or comes back."""
        for js in self.server.account_jetstreams.values():
            for stream in list(js.streams.values()):
                replicas = stream.replicas
                if any(p.name == name for p in replicas.peers):
                    replicas.set_offline(name, offline)
        self.server.flush()

    @remote
    def node_down(self, name: str) -> None:
        """Take a server of the simulated cluster down: its client port refuses connections,
        its clients are closed, the other nodes' clients get an INFO without its URL, and its
        peer in every stream goes offline as with ``peer_down``."""
        self._node(name)
        self.server.node_down(name)
        self._node_peers(name, True)

    @remote
    def node_up(self, name: str) -> None:
        """Bring a node taken down by ``node_down`` back on the same port: its URL is
        advertised again and its peers come back and catch up."""
        self._node(name)
        self.server.node_up(name)
        self._node_peers(name, False)

    @remote
    def nodes(self) -> list[dict[str, Any]]:
        """Each node (server) of the cluster: name, server id, port, up."""
        return [{"name": n.name, "server_id": n.server_id, "port": n.port, "up": n.up} for n in self.server.nodes]

    @remote
    def fault(
        self,
        filter: str,
        action: str,
        count: int = 1,
        delay: float = 0.0,
        status: int = 503,
        description: str = "",
    ) -> int:
        """Apply ``action`` (drop, delay, status) to the next ``count`` client messages
        matching ``filter`` (0: until cleared); returns the rule's id."""
        try:
            rule = self.server.faults.add(filter, action, count, delay=delay, status=status, description=description)
        except ValueError as exc:
            raise ControlError(str(exc)) from None
        return rule.id

    @remote
    def drop(self, filter: str, count: int = 1) -> int:
        """Drop the next ``count`` client messages matching ``filter``; returns the rule's id."""
        return self.fault(filter, "drop", count)

    @remote
    def delay(self, filter: str, seconds: float, count: int = 1) -> int:
        """Hold the next ``count`` client messages matching ``filter`` for ``seconds``; returns
        the rule's id."""
        return self.fault(filter, "delay", count, delay=seconds)

    @remote
    def answer_status(self, filter: str, status: int, description: str = "", count: int = 1) -> int:
        """Answer the next ``count`` requests matching ``filter`` with a ``status`` reply (and
        ``description``) instead of delivering them; returns the rule's id."""
        return self.fault(filter, "status", count, status=status, description=description)

    @remote
    def faults(self) -> list[dict[str, object]]:
        """The fault rules in force: id, filter, action, messages left (0: until cleared), hits."""
        return [f.as_dict() for f in self.server.faults.rules]

    @remote
    def clear_fault(self, id: int) -> bool:
        """Remove one fault rule; whether it existed."""
        return self.server.faults.remove(id)

    @remote
    def clear_faults(self) -> None:
        """Remove every fault rule."""
        self.server.faults.clear()

    # --- responders -------------------------------------------------------------------

    @remote
    def responder_policy(
        self, policy: str, prefer: list[str] | str | None = None, filter: str = DIRECT_GET_FILTER
    ) -> None:
        """How queue group members are picked for subjects matching ``filter``:
        ``random`` (the server's way), ``round_robin`` or ``prefer`` (``prefer`` lists
        stream names, peer names or ``stream/peer`` labels, best first)."""
        rng = self.server.rng
        policies = self.server.queue_policies
        if policy == "random":
            policies.set(filter, None)  # no rule: the server's own random choice
        elif policy == "round_robin":
            policies.set(filter, RoundRobin())
        elif policy == "prefer":
            targets = [prefer] if isinstance(prefer, str) else list(prefer or [])
            if not targets:
                raise ControlError("policy prefer needs at least one stream or peer to prefer")
            policies.set(filter, Prefer(targets, rng))
        else:
            raise ControlError(f"unknown policy {policy!r}: use random, round_robin or prefer")

    @remote
    def seed(self, seed: int) -> None:
        """Seed the random choices (queue group members, raft group names)."""
        self.server.rng.seed(seed)

    # --- clock ------------------------------------------------------------------------

    def _clock(self) -> ControlledClock | ManualClock:
        clock = self.server.clock
        if not isinstance(clock, ControlledClock | ManualClock):
            raise ControlError(f"the server's clock ({type(clock).__name__}) can not be controlled")
        return clock

    @remote
    def now(self) -> int:
        """The server's clock, in Unix nanoseconds."""
        return self.server.clock.now_ns()

    @remote
    def lame_duck(self) -> bool:
        """Enter lame duck mode, as SIGUSR2 does to nats-server: no new clients, JetStream
        shut down, the clients told (``ldm``) and closed one by one over
        ``lame_duck_duration`` after ``lame_duck_grace_period`` (on the server's clock), then
        the server stops. False if it already is in lame duck mode."""
        return self.server.enter_lame_duck()

    @remote
    def freeze_clock(self, at_ns: int | None = None) -> int:
        """Stop the server's clock (at ``at_ns`` if given); returns its reading."""
        clock = self._clock()
        if isinstance(clock, ManualClock):
            if at_ns is not None:
                clock.set(at_ns)
            return clock.now_ns()
        return clock.freeze(at_ns)

    @remote
    def advance_clock(self, ns: int = 0, seconds: float = 0.0) -> int:
        """Move the clock forward by ``ns`` plus ``seconds`` and run every timer now due (expiry,
        ack wait, heartbeats, ...); returns its reading."""
        clock = self._clock()
        clock.advance(ns + round(seconds * 1_000_000_000))
        self._clock_moved()
        return clock.now_ns()

    @remote
    def set_clock(self, ns: int) -> int:
        """Set the clock to ``ns`` (Unix nanoseconds) and run every timer now due; returns its
        reading."""
        clock = self._clock()
        clock.set(ns)
        self._clock_moved()
        return clock.now_ns()

    def _clock_moved(self) -> None:
        """Run the consumer timers that are due now (ack wait, request expiry, inactivity)
        and send what they produce, so a test sees the effect of a clock step at once."""
        self.server.timers.run_due()
        self.server.flush()

    @remote
    def resume_clock(self) -> int:
        """Let a frozen clock run again from its current reading; returns it."""
        clock = self._clock()
        if isinstance(clock, ControlledClock):
            clock.resume()
        return clock.now_ns()

    # --- inspect ----------------------------------------------------------------------

    @remote
    def answers(self, clear: bool = False) -> list[DirectGetAnswer]:
        """Who answered each Direct Get request, oldest first."""
        log = self.js.answers
        out = [
            DirectGetAnswer(subject.decode("utf-8", "replace"), r.stream.name, r.peer, r.answers_for)
            for subject, r in log
        ]
        if clear:
            log.clear()
        return out

    @remote
    def clear_answers(self) -> None:
        """Forget the Direct Get answers logged so far."""
        self.js.answers.clear()

    @remote
    def reset(self, streams: bool = False) -> None:
        """Undo every control: faults, policies, answers, paused / held / offline peers and
        mirrors, the clock; with ``streams`` also delete every stream."""
        server = self.server
        server.faults.clear()
        server.queue_policies.clear()
        for node in server.nodes:
            if not node.up:
                server.node_up(node.name)
        js = server.jetstream
        if js is None:
            return
        js.answers.clear()
        self.clear_consumer_faults()
        for stream in list(js.streams.values()):
            replicas = stream.replicas
            for peer in replicas.peers:
                if peer.offline:
                    replicas.set_offline(peer.name, False)
            replicas.catch_up_all()
            for link in [stream.mirror_link, *stream.source_links]:
                if link is not None:
                    link.resume()
        if isinstance(js.clock, ControlledClock):
            js.clock.reset()
        if streams:
            for stream in list(js.streams.values()):
                js.delete_stream(stream)


def _wrap(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except ReplicationError as exc:
        raise ControlError(str(exc)) from None
