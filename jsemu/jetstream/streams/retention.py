"""Interest and work-queue retention: when a stored message goes because of its consumers.

It follows nats-server's ``stream.go`` and ``consumer.go`` for a standalone server:

* publishing to an interest stream stores a message only when some consumer's filter
  matches its subject (``csl.HasInterest``), else the sequence is skipped;
* an ack (``processAckMsg``; for ack none the delivery itself) calls :func:`ack_msg`
  (``stream.ackMsg``): a work-queue message goes at once, an interest one when no other
  consumer still needs it (``noInterest`` / ``needAck``);
* deleting a consumer of an interest stream removes what nobody else needs
  (``cleanupNoInterestMessages``), and the store is purged when it was the last one;
* work-queue streams refuse a second unfiltered consumer and overlapping filters
  (``partitionUnique``).

Removals go through ``Store.remove`` / ``Store.purge``, so they are the store's own
``Remove`` / ``Purge`` records that a write-ahead log or a follower replays.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import TYPE_CHECKING, Protocol

from ...subjects import subject_matches, subjects_collide
from ..errors import ApiErrors, api_error

if TYPE_CHECKING:
    from .stream import Stream

__all__ = [
    "InterestConsumer",
    "WorkQueueConfig",
    "ack_below_floor",
    "ack_msg",
    "check_interest_state",
    "check_work_queue",
    "consumer_deleted",
    "has_interest",
    "need_ack",
]


class AckPolicyConfig(Protocol):
    """The consumer config field retention reads (``ConsumerConfig``)."""

    ack_policy: str


class WorkQueueConfig(AckPolicyConfig, Protocol):
    """The consumer config fields the work-queue rules read (``ConsumerConfig``)."""

    deliver_policy: str


class InterestConsumer(Protocol):
    """What retention reads of a consumer (``Consumer``): its filters and how far it has
    acknowledged (floors, next sequence, pending and redelivered sequences)."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> AckPolicyConfig: ...

    filters: list[bytes]

    ack_floor: tuple[int, int]

    own_ack_floor: tuple[int, int]

    next_stream_seq: int

    @property
    def pending(self) -> Container[int]: ...

    @property
    def redelivery_counts(self) -> Container[int]: ...


def _consumers(stream: Stream) -> Iterable[InterestConsumer]:
    cs = stream.consumer_set
    return cs.by_name.values() if cs is not None else ()


def _matches(consumer: InterestConsumer, subject: bytes) -> bool:
    if not consumer.filters:
        return True
    subj = subject.decode("utf-8", "replace")
    return any(subject_matches(subj, f.decode()) for f in consumer.filters)


def has_interest(stream: Stream, subject: bytes) -> bool:
    """``csl.HasInterest``: some consumer of an interest stream wants ``subject``."""
    return any(_matches(c, subject) for c in _consumers(stream))


def need_ack(consumer: InterestConsumer, seq: int, subject: bytes) -> bool:
    """``consumer.needAck``: ``consumer`` has not yet acknowledged ``seq``."""
    if consumer.filters and not _matches(consumer, subject):
        return False
    asflr = consumer.own_ack_floor[1]
    if consumer.config.ack_policy != "explicit":
        need = seq > asflr
    else:
        need = seq > asflr and (seq >= consumer.next_stream_seq or seq in consumer.pending)
    # A message that stopped at max_deliver is kept while its redelivery count is tracked.
    return need or seq in consumer.redelivery_counts


def _interest(stream: Stream, seq: int, subject: bytes) -> bool:
    """``checkForInterestWithSubject``: some consumer still needs ``seq``."""
    return any(need_ack(c, seq, subject) for c in _consumers(stream))


def ack_msg(stream: Stream, seq: int) -> bool:
    """``stream.ackMsg``: a consumer acknowledged ``seq`` (or delivered it, for ack none);
    remove it when the retention policy says so. True when it was removed."""
    retention = stream.config.retention
    if retention == "limits":
        return False
    store = stream.store
    if seq < store.first_seq:
        return False
    sm = store.load(seq)
    if sm is None:
        return False
    # 2.15 asks every consumer, the acking one included, for both policies.
    if _interest(stream, seq, sm.subject):
        return False
    return store.remove(seq)


def consumer_deleted(stream: Stream, consumer: InterestConsumer) -> None:
    """``cleanupNoInterestMessages(mset, true)`` after ``consumer`` left an interest stream
    (it is already out of the stream's consumers)."""
    if stream.config.retention != "interest":
        return
    store = stream.store
    if not any(True for _ in _consumers(stream)):
        if store.msgs:
            store.purge()
        return
    start = max(consumer.own_ack_floor[1], store.first_seq)
    for seq in range(start, store.last_seq + 1):
        sm = store.load(seq)
        if sm is not None and not _interest(stream, seq, sm.subject):
            store.remove(seq)


def check_interest_state(stream: Stream) -> None:
    """``checkInterestState`` after an update to interest retention: with no consumers
    nothing is kept; else each consumer acks again what lies below its ack floor
    (``checkStateForInterestStream``, from its store's state), which removes what nobody
    else needs."""
    store = stream.store
    consumers = list(_consumers(stream))
    if not consumers:
        if store.msgs:
            store.purge()
        return
    for consumer in consumers:
        ack_below_floor(stream, consumer)


def ack_below_floor(stream: Stream, consumer: InterestConsumer) -> None:
    """``checkStateForInterestStream``: ``consumer`` acks again what lies below its ack floor
    (after an update to interest retention, or a reset), which removes what nobody else needs."""
    store = stream.store
    for seq in range(store.first_seq, min(consumer.ack_floor[1], store.last_seq) + 1):
        sm = store.load(seq)
        if sm is not None and _matches(consumer, sm.subject):
            ack_msg(stream, seq)


def check_work_queue(stream: Stream, cfg: WorkQueueConfig, name: str, filters: list[str]) -> None:
    """The work-queue rules of ``addConsumerWithAssignment`` for a new consumer, in order."""
    if cfg.ack_policy not in ("explicit", "flow_control"):
        raise api_error(ApiErrors.JSConsumerWQRequiresExplicitAckErr)
    if cfg.deliver_policy != "all":
        raise api_error(ApiErrors.JSConsumerWQConsumerNotDeliverAllErr)
    others = [c for c in _consumers(stream) if c.name != name]
    if others:
        if not filters:
            raise api_error(ApiErrors.JSConsumerWQMultipleUnfilteredErr)
        if not _partition_unique(others, filters):
            raise api_error(ApiErrors.JSConsumerWQConsumerNotUniqueErr)


def _partition_unique(others: list[InterestConsumer], filters: list[str]) -> bool:
    """``partitionUnique``: no filter collides with another consumer's (2.15 refuses any
    overlap, not only a subset either way)."""
    for partition in filters:
        for other in others:
            if not other.filters:
                return False
            for f in other.filters:
                if subjects_collide(partition, f.decode()):
                    return False
    return True
