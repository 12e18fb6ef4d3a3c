"""What persistence needs of the service.

``persistence`` sits below the service that calls it: the consumer store is handed the
service typed as :class:`ConsumerFilesHost` (where streams are kept, which ones are, the
loop its flushes are timed on, and what the consumers it restores need), snapshots and
restores as :class:`TransferHost` (advisories, timers, the account's subscriptions, and
the service's one entry for a restored stream). ``JetStream`` satisfies both structurally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..consumers.host import ConsumerHost
from ..context import Advising, HasAccount, HasTimers

if TYPE_CHECKING:
    from pathlib import Path

    from ..streams.config import StreamConfig
    from ..streams.stream import Stream

__all__ = ["ConsumerFilesHost", "TransferHost"]


class ConsumerFilesHost(ConsumerHost, Protocol):
    """What the consumer store needs of the service (``JetStream``)."""

    streams_dir: Path | None

    def persists(self, cfg: StreamConfig) -> bool: ...


class TransferHost(Advising, HasTimers, HasAccount, Protocol):
    """What a snapshot or a restore needs of the service (``JetStream``)."""

    def restore_stream(self, cfg: StreamConfig, stream_dir: Path) -> Stream: ...
