"""An account's JetStream limits (``accounts { A: { jetstream: { max_mem: 1G, ... } } }``).

Plain data, as nats-server's ``JetStreamAccountLimits``: -1 (or ``False``) means no limit,
which is also what ``jetstream: enabled`` gives. The config fills it in; the JetStream layer
enforces it (``jetstream/limits/storage.py`` for bytes, ``jetstream/limits/counts.py`` for
counts) and ``$JS.API.INFO`` shows it as :meth:`JetStreamLimits.to_json`.

An account JWT may give its limits per tier instead (``limits.tiered_limits``: ``{"R1": {...},
"R3": {...}}``, what ``nsc edit account --js-tier`` writes): nats-server (``selectLimits``) then
holds a stream of ``n`` replicas to tier ``R<n>`` and refuses one whose tier is not there. Such
limits keep the tiers in :attr:`JetStreamLimits.tiers`, and their own fields are the R1 tier's,
which is what a standalone server enforces (its streams are all R1); ``$JS.API.INFO`` shows
zeros for the account and the tiers under ``tiers``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["UNLIMITED", "ZERO_LIMITS", "JetStreamLimits"]


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
    #: The JWT's ``tiered_limits`` by name, sorted ("R1", "R3"); empty: one set of limits for all.
    tiers: tuple[tuple[str, JetStreamLimits], ...] = field(default=(), repr=False)

    def to_json(self) -> dict[str, Any]:
        if self.tiers:  # nats-server shows no account-wide limits beside tiers: Go's zero values
            return ZERO_LIMITS.to_json()
        out = asdict(self)
        del out["tiers"]
        return out

    def tier(self, replicas: int) -> JetStreamLimits | None:
        """The limits a stream of ``replicas`` is held to; None: no tier for it (Go's
        ``selectLimits``: 10120 "no JetStream default or applicable tiered limit present")."""
        if not self.tiers:
            return self
        name = f"R{max(1, replicas)}"
        return next((limits for tier, limits in self.tiers if tier == name), None)

    @classmethod
    def tiered(cls, tiers: dict[str, JetStreamLimits]) -> JetStreamLimits:
        """Limits given per tier: the R1 tier's fields (none there: nothing allowed), and the tiers."""
        r1 = tiers.get("R1", ZERO_LIMITS)
        return cls(**{**asdict(r1), "tiers": tuple(sorted(tiers.items()))})

    def max_bytes(self, storage: str) -> int:
        """The account's bytes for ``storage`` ("memory" or "file"); -1: no limit."""
        return self.max_memory if storage == "memory" else self.max_storage

    def max_stream_bytes(self, storage: str) -> int:
        return self.memory_max_stream_bytes if storage == "memory" else self.storage_max_stream_bytes


UNLIMITED = JetStreamLimits()
#: Go's zero value: nothing allowed (and what the info shows for a tier without limits).
ZERO_LIMITS = JetStreamLimits(0, 0, 0, 0, 0, 0, 0)
