"""File streams on disk, when the server has a ``store_dir`` (memory streams are gone after a
restart, as with nats-server): one directory per stream under
``<store_dir>/jetstream/$G/streams/<name>/`` with

* ``meta.pickle``: the stream's config and creation time, replaced atomically (write a
  temporary file, fsync, rename) on create and update;
* ``msgs.wal``: the write-ahead log of every mutation of the stream's store
  (:mod:`jsemu.store.wal`), appended before the publish is acknowledged.

On start the server reads every stream directory back: the config, then the log replayed
into fresh stores (every peer's, for a replicated stream). The files are jsemu's own
format, not nats-server's.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store import StoreError
from ..store.wal import WriteAheadLog, replay
from .stream_config import StreamConfig

if TYPE_CHECKING:
    from .stream import Stream

__all__ = ["StreamFiles", "saved_streams"]

log = logging.getLogger("jsemu.jetstream")

_META = "meta.pickle"
_WAL = "msgs.wal"


class StreamFiles:
    """The directory of one stream."""

    def __init__(self, root: Path, name: str) -> None:
        self.dir = root / name

    def save_meta(self, config: StreamConfig, created_ns: int) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / (_META + ".tmp")
        with tmp.open("wb") as f:
            pickle.dump({"config": config, "created_ns": created_ns}, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.dir / _META)

    def load_meta(self) -> tuple[StreamConfig, int]:
        with (self.dir / _META).open("rb") as f:
            meta: dict[str, Any] = pickle.load(f)
        return meta["config"], int(meta["created_ns"])

    def replay_into(self, stream: Stream) -> int:
        """Apply the logged mutations to every peer's store; returns how many."""
        count = 0
        for record in replay(self.dir / _WAL):
            for peer in stream.replicas.peers:
                try:
                    peer.store.apply(record)
                except StoreError:
                    log.warning("stream %s: logged %s could not be applied again", stream.name, record)
            count += 1
        return count

    def open_wal(self) -> WriteAheadLog:
        self.dir.mkdir(parents=True, exist_ok=True)
        return WriteAheadLog(self.dir / _WAL)

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def saved_streams(root: Path) -> list[StreamFiles]:
    """The stream directories with a config, in name order."""
    if not root.is_dir():
        return []
    return [StreamFiles(root, d.name) for d in sorted(root.iterdir()) if (d / _META).exists()]
