"""In-memory JetStream stream storage with nats-server ``memStore`` semantics (no I/O, no timers)."""

from __future__ import annotations

from .clock import Clock, ControlledClock, ManualClock, SystemClock
from .dedup import DedupWindow
from .errors import (
    MaxBytesExceeded,
    MaxMsgsExceeded,
    MaxMsgsPerSubjectExceeded,
    MsgTooLarge,
    SequenceMismatch,
    StoreError,
    TooManyResults,
)
from .limits import StoreLimits
from .stream_store import StoredMsg, StoreState, StreamStore
from .subject_tree import SubjectTree

__all__ = [
    "Clock",
    "ControlledClock",
    "DedupWindow",
    "ManualClock",
    "MaxBytesExceeded",
    "MaxMsgsExceeded",
    "MaxMsgsPerSubjectExceeded",
    "MsgTooLarge",
    "SequenceMismatch",
    "StoreError",
    "StoreLimits",
    "StoreState",
    "StoredMsg",
    "StreamStore",
    "SubjectTree",
    "SystemClock",
    "TooManyResults",
]
