"""Control-plane methods for consumers: stage faults on one consumer, deterministically, and
show and steer it. Mixed into :class:`~jsemu.control.plane.ControlPlane`, so each
``@remote`` method is also ``$JSEMU.API.<METHOD>``.

* ``lose_heartbeats``: the next N idle heartbeats are not sent; a client's ordered consumer
  (nats.py: two missed heartbeats) recreates itself from the last sequence it saw;
* ``skip_messages``: the next N messages are counted as delivered but not sent, a gap in the
  consumer sequence that ordered consumers notice (and recreate); with acks the skipped
  messages come back after ``ack_wait``;
* ``drop_acks`` / ``delay_acks``: the next N acks are lost (a redelivery after ``ack_wait``)
  or held on the server's clock for a while;
* ``expire_requests``: every waiting pull request ends now with its 408;
* ``consumer_state``: the info plus pending, redelivery counts and queue, waiting requests
  and staged faults;
* ``lag_consumer_replica`` (simulated cluster): a follower of the consumer's raft group
  applies no more of its records; after a step-down onto it the consumer restarts from its
  older state, and a client sees the redeliveries of a failover to a lagging follower;
  ``consumer_replicas`` shows each replica's state and lag.

A consumer on a lagging peer or on a paused mirror needs nothing new: ``pause`` /
``set_lag`` of a mirror hold back what its consumers can see (see the recipe in the faults and clock guide).

``consumer`` may be left out when the stream has one consumer (or one bound push consumer),
which is how a test finds the ephemeral consumer behind a client's ordered consumer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..jetstream.consumers.consumer_set import consumers_of
from ..jetstream.consumers.faults import consumer_state, expire_waiting, faults_of
from .remote import ControlError, remote

if TYPE_CHECKING:
    from ..jetstream.cluster.consumer_replication import ConsumerReplicas
    from ..jetstream.consumers.consumer import Consumer
    from ..jetstream.service import JetStream
    from ..jetstream.streams.stream import Stream

__all__ = ["ConsumerControls"]

_NS = 1_000_000_000


class ConsumerControls:
    """The consumer part of the control plane (a mixin of ``ControlPlane``)."""

    @property
    def js(self) -> JetStream:
        raise NotImplementedError

    def _stream(self, name: str) -> Stream:
        raise NotImplementedError

    def _consumer(self, stream: str, consumer: str | None) -> Consumer:
        s = self._stream(stream)
        cs = consumers_of(s)
        found = dict(cs.by_name) if cs is not None else {}
        if consumer is not None:
            c = found.get(consumer)
            if c is None:
                raise ControlError(f"stream {stream!r} has no consumer {consumer!r}")
            return c
        if len(found) == 1:
            return next(iter(found.values()))
        bound = [c for c in found.values() if c.push and c.active]
        if len(bound) == 1:
            return bound[0]
        raise ControlError(f"stream {stream!r} has consumers {sorted(found)}: name one")

    @staticmethod
    def _count(count: int) -> int:
        if not isinstance(count, int) or count < 1:
            raise ControlError("count must be a positive integer")
        return count

    @remote
    def consumer_state(self, stream: str, consumer: str | None = None) -> dict[str, Any]:
        """The consumer's info, pending messages, redelivery counts and queue, waiting pull
        requests and staged faults."""
        return consumer_state(self._consumer(stream, consumer))

    @remote
    def lose_heartbeats(self, stream: str, consumer: str | None = None, count: int = 1) -> dict[str, int]:
        """Do not send the consumer's next ``count`` idle heartbeats."""
        faults = faults_of(self._consumer(stream, consumer))
        faults.lose_heartbeats += self._count(count)
        return faults.as_dict()

    @remote
    def skip_messages(self, stream: str, consumer: str | None = None, count: int = 1) -> dict[str, int]:
        """Count the next ``count`` messages as delivered without sending them (a gap)."""
        faults = faults_of(self._consumer(stream, consumer))
        faults.skip_messages += self._count(count)
        return faults.as_dict()

    @remote
    def drop_acks(self, stream: str, consumer: str | None = None, count: int = 1) -> dict[str, int]:
        """Lose the consumer's next ``count`` acks (naks, progress, terms): those messages
        are redelivered after ``ack_wait``."""
        faults = faults_of(self._consumer(stream, consumer))
        faults.drop_acks += self._count(count)
        return faults.as_dict()

    @remote
    def delay_acks(self, stream: str, seconds: float, consumer: str | None = None, count: int = 1) -> dict[str, int]:
        """Hold the consumer's next ``count`` acks for ``seconds`` of the server's clock."""
        if not isinstance(seconds, (int, float)) or seconds < 0:
            raise ControlError("seconds can not be negative")
        faults = faults_of(self._consumer(stream, consumer))
        faults.delay_acks += self._count(count)
        faults.ack_delay_ns = int(seconds * _NS)
        return faults.as_dict()

    @remote
    def expire_requests(self, stream: str, consumer: str | None = None) -> int:
        """End the consumer's waiting pull requests now (each gets its 408); how many."""
        c = self._consumer(stream, consumer)
        n = expire_waiting(c)
        self.js.server.flush()
        return n

    def _consumer_replicas(self, stream: str, consumer: str | None) -> ConsumerReplicas:
        c = self._consumer(stream, consumer)
        if c.replicas is None:
            raise ControlError(f"consumer {c.name!r} has no replicas (an R1 consumer or no simulated cluster)")
        return c.replicas

    @remote
    def lag_consumer_replica(self, stream: str, consumer: str | None = None, peer: str | None = None) -> str:
        """Hold back the records of one follower of the consumer (the first by name unless
        ``peer``) until it leads; which peer."""
        replicas = self._consumer_replicas(stream, consumer)
        if peer is None:
            followers = sorted(n for n in replicas.states if n != replicas.leader and n not in replicas.held)
            if not followers:
                raise ControlError("the consumer has no follower left to hold back")
            peer = followers[0]
        try:
            replicas.hold(peer)
        except ValueError as err:
            raise ControlError(str(err)) from None
        return peer

    @remote
    def consumer_replicas(self, stream: str, consumer: str | None = None) -> list[dict[str, Any]]:
        """Each replica of the consumer: leader or not, held back, records behind, and its
        state (delivered and ack floor stream sequences, pending sequences)."""
        replicas = self._consumer_replicas(stream, consumer)
        out = []
        for name in sorted(replicas.states):
            state = replicas.states[name]
            out.append(
                {
                    "name": name,
                    "leader": name == replicas.leader,
                    "held": name in replicas.held,
                    "lag": replicas.lag(name),
                    "delivered": state.delivered[1],
                    "ack_floor": state.ack_floor[1],
                    "pending": sorted(state.pending),
                }
            )
        return out

    @remote
    def clear_consumer_faults(self, stream: str | None = None, consumer: str | None = None) -> None:
        """Drop the faults staged on one consumer, or on every consumer."""
        if stream is not None:
            self._consumer(stream, consumer).faults = None
            return
        js = self.js
        for s in js.streams.values():
            cs = consumers_of(s)
            if cs is not None:
                for c in cs.by_name.values():
                    c.faults = None
