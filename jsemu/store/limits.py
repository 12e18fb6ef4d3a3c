"""Retention limits the store enforces itself (the subset of ``StreamConfig`` memstore reads)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["StoreLimits"]


@dataclass(slots=True)
class StoreLimits:
    """-1 (or 0 for ``max_age_ns``) means unlimited; any value <= 0 is treated as unlimited.

    ``discard_new_per_subject`` only has an effect together with ``discard_new``, as in Go.
    """

    max_msgs: int = -1
    max_bytes: int = -1
    max_age_ns: int = 0
    max_msgs_per_subject: int = -1
    max_msg_size: int = -1
    discard_new: bool = False
    discard_new_per_subject: bool = False
    #: ``allow_msg_ttl``: messages with a ``Nats-TTL`` header expire after it.
    allow_msg_ttl: bool = False
    #: ``subject_delete_marker_ttl`` is set: the stream, not the store, carries out expiry
    #: (it leaves a marker where the last message of a subject goes; see ``expiry_due``).
    stream_expires: bool = False
