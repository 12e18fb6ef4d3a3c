"""Store errors whose ``str()`` is exactly nats-server's error text (server/store.go).

The JetStream layer puts these texts into API responses, so they must match byte for byte.
"""

from __future__ import annotations

__all__ = [
    "MaxBytesExceeded",
    "MaxMsgsExceeded",
    "MaxMsgsPerSubjectExceeded",
    "MsgTooLarge",
    "SequenceMismatch",
    "StoreEOF",
    "StoreError",
    "StoreMsgNotFound",
    "TooManyResults",
]


class StoreError(Exception):
    """Base class; the class attribute ``text`` is Go's message and the default ``str()``."""

    text = "store error"

    def __init__(self, *args: object) -> None:
        super().__init__(*(args or (self.text,)))


class MaxMsgsExceeded(StoreError):
    """Go ``ErrMaxMsgs``: discard-new stream is at ``max_msgs``."""

    text = "maximum messages exceeded"


class MaxBytesExceeded(StoreError):
    """Go ``ErrMaxBytes``: discard-new stream would go over ``max_bytes``."""

    text = "maximum bytes exceeded"


class MaxMsgsPerSubjectExceeded(StoreError):
    """Go ``ErrMaxMsgsPerSubject``: discard-new-per-subject and the subject is full."""

    text = "maximum messages per subject exceeded"


class MsgTooLarge(StoreError):
    """Go ``ErrMsgTooLarge``.

    ``reason`` tells the caller which check fired, because nats-server answers them differently:
    ``"max_msg_size"`` is the stream's ``max_msg_size`` (the server replies with
    ``JSStreamMessageExceedsMaximumErr``), ``"file_record"`` is a file-store record over 32 MiB
    (``JSStreamStoreFailedError`` wrapping this text).
    """

    text = "message too large"

    def __init__(self, reason: str = "max_msg_size") -> None:
        super().__init__(self.text)
        self.reason = reason


class TooManyResults(StoreError):
    """Go ``ErrTooManyResults``: ``multi_last_seqs`` matched more than ``max_allowed``."""

    text = "too many matching results for request"


class SequenceMismatch(StoreError):
    """Go ``ErrSequenceMismatch``: a skip asked for a sequence other than last_seq+1."""

    text = "expected sequence does not match store"


class StoreMsgNotFound(StoreError):
    """Go ``ErrStoreMsgNotFound``: the file store's ``removeMsg`` below its first sequence."""

    text = "no message found"


class StoreEOF(StoreError):
    """Go ``ErrStoreEOF``: the file store's ``removeMsg`` past its last sequence."""

    text = "stream store EOF"
