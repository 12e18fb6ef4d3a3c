"""What the simulated cluster reads of the streams and consumers whose raft groups it models.

The cluster sits below ``streams`` and ``consumers``: a ``Stream`` owns its ``ReplicaSet``
and a ``Consumer`` its ``ConsumerGroup``, and the groups read back only the members listed
here (names, creation times, the config fields that choose replicas and storage, the
consumers of a stream). ``Stream`` and ``Consumer`` satisfy these protocols structurally.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from ..context import Advising, HasCluster, HasServer, HasTimers

if TYPE_CHECKING:
    from ...store import Store
    from .consumer_peers import ConsumerGroup
    from .consumer_replication import ReplicaState
    from .replicas import ReplicaSet

__all__ = [
    "ClusterServices",
    "GroupedConsumer",
    "GroupedConsumerConfig",
    "ReplicatedStream",
    "ReplicatedStreamConfig",
    "StreamConsumers",
]


class ClusterServices(Advising, HasTimers, HasServer, HasCluster, Protocol):
    """What a group needs of the service (``JetStream``): advisories, election timers, the
    server's random source, the cluster's name, and which streams still exist."""

    @property
    def streams(self) -> Mapping[str, object]: ...


class ReplicatedStreamConfig(Protocol):
    """The stream config fields a group reads (``StreamConfig``)."""

    num_replicas: int

    retention: str

    storage: str


class GroupedConsumerConfig(Protocol):
    """The consumer config fields a group reads (``ConsumerConfig``)."""

    num_replicas: int

    durable_name: str

    mem_storage: bool

    ack_policy: str


class StreamConsumers(Protocol):
    """A stream's consumers (``ConsumerSet``), by name, as their groups see them."""

    @property
    def by_name(self) -> Mapping[str, GroupedConsumer]: ...


class ReplicatedStream(Protocol):
    """A stream as its ``ReplicaSet`` and its consumers' groups see it (``Stream``). A new
    leader's store becomes the stream's (``store`` is written)."""

    store: Store

    @property
    def name(self) -> str: ...

    created_ns: int

    @property
    def js(self) -> ClusterServices: ...

    @property
    def config(self) -> ReplicatedStreamConfig: ...

    replicas: ReplicaSet

    @property
    def consumer_set(self) -> StreamConsumers | None: ...

    def sync_responders(self) -> None: ...


class GroupedConsumer(Protocol):
    """A consumer as its ``ConsumerGroup`` sees it (``Consumer``); a new leader's engine
    takes over from its replica's state."""

    @property
    def name(self) -> str: ...

    created_ns: int

    @property
    def js(self) -> ClusterServices: ...

    @property
    def stream(self) -> ReplicatedStream: ...

    @property
    def config(self) -> GroupedConsumerConfig: ...

    group: ConsumerGroup | None

    def take_over(self, state: ReplicaState) -> None: ...
