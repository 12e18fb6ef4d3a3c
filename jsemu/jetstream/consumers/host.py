"""What a consumer needs of the service.

``Consumer`` sits below ``persistence`` and the service: it is handed the service typed as
:class:`ConsumerHost`, the services of :mod:`..context` it uses (the clock, timers, the way
out, the server it flushes and draws random numbers from), what its raft group reads through
it (``cluster.members.ClusterServices``), and the one service call it makes, its own
deletion; a stream's consumers (``ConsumerSet``) are handed it as :class:`ConsumerSetHost`.
``JetStream`` satisfies both structurally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..cluster.members import ClusterServices
from ..context import HasAccount
from ..limits.storage import HasLimits

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["ConsumerHost", "ConsumerSetHost", "SavesConsumers"]


class ConsumerHost(ClusterServices, HasAccount, Protocol):
    """What a consumer needs of the service (``JetStream``); the account's subscriptions
    for a push consumer's interest (:mod:`.push_interest`)."""

    def delete_consumer(self, consumer: Consumer) -> None: ...


class SavesConsumers(Protocol):
    """The consumer store (``persistence.ConsumerStore``), as the consumers' lifetimes use it."""

    def created(self, consumer: Consumer, /) -> None: ...


class ConsumerSetHost(ConsumerHost, HasAccount, HasLimits, Protocol):
    """What a stream's consumers (``ConsumerSet``) need of the service (``JetStream``): what
    each consumer needs, the account's subscriptions and ack lane, its limits, and the store
    that saves a new consumer."""

    @property
    def consumer_store(self) -> SavesConsumers: ...
