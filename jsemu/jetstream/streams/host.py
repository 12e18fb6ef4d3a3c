"""What a stream needs of the service, and what it reads of its consumers.

``Stream`` sits below ``consumers``, ``persistence`` and the service: it is handed the
service typed as :class:`StreamHost` (the services of :mod:`..context` a stream uses, what
the limits and the cluster read through it, and the few service calls a stream makes), and
it keeps its consumers typed as :class:`StreamConsumers`: only what retention and the
stream's cluster read of them. ``JetStream`` and ``ConsumerSet`` satisfy both structurally.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from ..cluster.members import ClusterServices, GroupedConsumer, GroupedConsumerConfig
from ..context import HasAccount, HasServerName
from ..limits.storage import AccountStreams
from .retention import InterestConsumer

if TYPE_CHECKING:
    from .atomic_batch import BatchLimits
    from .config import StreamConfig
    from .stream import Stream

__all__ = ["StreamConsumer", "StreamConsumers", "StreamHost"]


class StreamHost(AccountStreams, ClusterServices, HasServerName, HasAccount, Protocol):
    """What a stream needs of the service (``JetStream``): the clock, timers and way out,
    the names infos show, the account's streams (limits, alternates), the atomic batch
    limits shared by all its streams, and the replies and Direct Get members it owns."""

    #: Atomic batches open in all the account's streams (``atomic_batch``).
    atomic_inflight: int
    #: Fast batches open in all the account's streams (``fast_batch``).
    fast_inflight: int

    @property
    def streams(self) -> Mapping[str, Stream]: ...

    api_level: int

    batch_limits: BatchLimits

    def send_reply(self, reply: bytes, payload: bytes, hdr: bytes = b"") -> None: ...

    def alternates(self, stream: Stream) -> list[dict[str, str]]: ...

    def persists(self, cfg: StreamConfig) -> bool: ...

    def sync_responders(self, stream: Stream) -> None: ...


class StreamConsumer(InterestConsumer, GroupedConsumer, Protocol):
    """A consumer as its stream sees it (``Consumer``): what retention reads, and what the
    stream's cluster reads of its consumers' groups."""

    @property
    def config(self) -> GroupedConsumerConfig: ...


class StreamConsumers(Protocol):
    """A stream's consumers (``ConsumerSet``), by name, in creation order."""

    @property
    def by_name(self) -> Mapping[str, StreamConsumer]: ...
