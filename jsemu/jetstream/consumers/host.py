"""What a consumer needs of the service.

``Consumer`` sits below ``persistence`` and the service: it is handed the service typed as
:class:`ConsumerHost`, the services of :mod:`..context` it uses (the clock, timers, the way
out, the server it flushes and draws random numbers from), what its raft group reads through
it (``cluster.members.ClusterServices``), and the one service call it makes, its own
deletion. ``JetStream`` satisfies it structurally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..cluster.members import ClusterServices

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["ConsumerHost"]


class ConsumerHost(ClusterServices, Protocol):
    """What a consumer needs of the service (``JetStream``)."""

    def delete_consumer(self, consumer: Consumer) -> None: ...
