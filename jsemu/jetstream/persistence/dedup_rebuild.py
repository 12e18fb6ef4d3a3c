"""After a restart, a stream's duplicate window is rebuilt from its stored ``Nats-Msg-Id``s
(Go ``rebuildDedupe``), so a publisher retrying across the restart is told ``duplicate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..streams.stream import Stream

__all__ = ["rebuild_dedup"]


def rebuild_dedup(stream: Stream) -> None:
    """Fill ``stream.dedup`` (and the last message id) from the restored store."""
    last_id = stream.dedup.rebuild(stream.store)
    if last_id is not None:
        stream.last_msg_id = last_id
