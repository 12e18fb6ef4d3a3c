"""An account's JetStream limits (``accounts { A: { jetstream: { max_mem: 1G, ... } } }``).

Plain data, as nats-server's ``JetStreamAccountLimits``: -1 (or ``False``) means no limit,
which is also what ``jetstream: enabled`` gives. The config fills it in; the JetStream layer
enforces it (``jetstream/limits/storage.py`` for bytes, ``jetstream/limits/counts.py`` for
counts) and ``$JS.API.INFO`` shows it as :meth:`JetStreamLimits.to_json`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["UNLIMITED", "JetStreamLimits"]


@dataclass(frozen=True)
class JetStreamLimits:
    """Field names and order are those of the ``limits`` object of the account info."""

    max_memory: int = -1
    max_storage: int = -1
    max_streams: int = -1
    max_consumers: int = -1
    max_ack_pending: int = -1
    memory_max_stream_bytes: int = -1
    storage_max_stream_bytes: int = -1
    max_bytes_required: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def max_bytes(self, storage: str) -> int:
        """The account's bytes for ``storage`` ("memory" or "file"); -1: no limit."""
        return self.max_memory if storage == "memory" else self.max_storage

    def max_stream_bytes(self, storage: str) -> int:
        return self.memory_max_stream_bytes if storage == "memory" else self.storage_max_stream_bytes


UNLIMITED = JetStreamLimits()
