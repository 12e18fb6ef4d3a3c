"""JetStream stream storage: what callers hold (:class:`Store`, from :mod:`.interface`) and how
to get one (:func:`new_store`).

The stores keep messages in memory with nats-server's ``memStore``/``fileStore`` semantics and
no timers of their own (expiry runs on an injected :class:`Clock`); the mutation records
(:mod:`.records`) and the write-ahead log (:mod:`.wal`) are what a stream with a ``store_dir``
saves. No networking here.
"""

from __future__ import annotations

from .clock import Clock, ControlledClock, ManualClock, SystemClock
from .dedup import DedupWindow
from .errors import (
    MaxBytesExceeded,
    MaxMsgsExceeded,
    MaxMsgsPerSubjectExceeded,
    MsgTooLarge,
    SequenceMismatch,
    StoreEOF,
    StoreError,
    StoreMsgNotFound,
    TooManyResults,
)
from .file_store import FileStore
from .interface import Body, Store, StoredMsg, StoreReader, StoreState
from .limits import StoreLimits
from .stream_store import MemoryStore, StreamStore
from .subject_tree import SubjectTree

#: The store class of each ``StreamConfig.storage`` (the concrete classes, for code that
#: builds stores, such as the replicated flavours; everyone else holds a :class:`Store`).
FLAVOURS: dict[str, type[StreamStore]] = {"memory": MemoryStore, "file": FileStore}


def new_store(storage: str, limits: StoreLimits | None = None, clock: Clock | None = None, first_seq: int = 1) -> Store:
    """A store of the ``storage`` flavour (``"memory"`` or ``"file"``), seen through the interface."""
    flavour = FLAVOURS.get(storage)
    if flavour is None:
        raise ValueError(f"storage must be 'memory' or 'file', not {storage!r}")
    return flavour(limits, clock, first_seq)


__all__ = [
    "FLAVOURS",
    "Body",
    "Clock",
    "ControlledClock",
    "DedupWindow",
    "FileStore",
    "ManualClock",
    "MaxBytesExceeded",
    "MaxMsgsExceeded",
    "MaxMsgsPerSubjectExceeded",
    "MemoryStore",
    "MsgTooLarge",
    "SequenceMismatch",
    "Store",
    "StoreEOF",
    "StoreError",
    "StoreLimits",
    "StoreMsgNotFound",
    "StoreReader",
    "StoreState",
    "StoredMsg",
    "StreamStore",
    "SubjectTree",
    "SystemClock",
    "TooManyResults",
    "new_store",
]
