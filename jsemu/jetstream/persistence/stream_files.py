"""File streams on disk, when the server has a ``store_dir`` (memory streams are gone after a
restart, as with nats-server): one directory per stream under
``<store_dir>/jetstream/$G/streams/<name>/`` with

* ``meta.json``: the stream's config (every ``StreamConfig`` field) and creation time,
  replaced atomically (write a temporary file, fsync, rename) on create and update; a
  directory without one is not a stream;
* ``msgs.wal``: the write-ahead log of every mutation of the stream's store
  (:mod:`jsemu.store.wal`), appended before the publish is acknowledged, and compacted to
  the records of the live state when it outgrows them (:mod:`jsemu.store.compaction`):
  the live messages as a few column records (:mod:`jsemu.store.column_snapshot`) that a
  restart loads in bulk, then the records logged since.

On start the server reads every stream directory back: the config, then the log replayed
into fresh stores (every peer's, for a replicated stream). A damaged log or config is
reported in one line; what came before the damage is kept. The files are jsemu's own
format, not nats-server's.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import asdict, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...store import Store, StoreError
from ...store.collector import paused_gc
from ...store.column_snapshot import Columns
from ...store.compaction import CompactingLog
from ...store.records import AppendRun, Record
from ...store.wal import read_log
from ..streams.config import StreamConfig

if TYPE_CHECKING:
    from ..streams.stream import Stream

__all__ = ["MetaError", "StreamFiles", "paused_gc", "saved_streams"]

log = logging.getLogger("jsemu.jetstream")

_META = "meta.json"
_WAL = "msgs.wal"
_CONFIG_FIELDS = frozenset(f.name for f in fields(StreamConfig))


class MetaError(ValueError):
    """A stream's saved config can not be read (its one-line reason)."""


def _config(values: Any) -> StreamConfig:
    if not isinstance(values, dict):
        raise MetaError("config is not an object")
    unknown = set(values) - _CONFIG_FIELDS
    if unknown:
        raise MetaError(f"unknown config fields {sorted(unknown)}")
    return StreamConfig(**values)


def _one_by_one(record: Record, store: Store) -> list[Record]:
    """A run the store did not take in bulk, as the records it stands for.

    Nothing else reads the store during a replay: a read expires by the store's clock under
    the limits replayed so far (a max_age lifted later in the log would empty the stream),
    where applied records expire at their own time. The columns of a compacted log come
    under no limits (``state_records``), so reading ``last_seq`` for them expires nothing.
    """
    if isinstance(record, AppendRun):
        return list(record.appends())
    if isinstance(record, Columns):
        return record.appends(store.last_seq)
    return [record]


class StreamFiles:
    """The directory of one stream."""

    def __init__(self, root: Path, name: str) -> None:
        self.dir = root / name
        #: Where the replayed log's last ``Columns`` record ended (its compacted part).
        self._compacted = 0

    def save_meta(self, config: StreamConfig, created_ns: int) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / (_META + ".tmp")
        text = json.dumps({"config": asdict(config), "created_ns": created_ns}, indent=1)
        with tmp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.dir / _META)

    def load_meta(self) -> tuple[StreamConfig, int]:
        """The saved config and creation time. :class:`MetaError` says in one line what is
        wrong with a damaged one."""
        path = self.dir / _META
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            return _config(meta["config"]), int(meta["created_ns"])
        except MetaError as exc:
            raise MetaError(f"{_META}: {exc}") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise MetaError(f"{_META}: {type(exc).__name__}: {exc}") from None

    def replay_into(self, stream: Stream) -> int:
        """Apply the logged mutations to every peer's store; returns how many. Damage in
        the log is reported (one line) and the records before it are kept."""
        with paused_gc():
            return self._replay(stream)

    def _replay(self, stream: Stream) -> int:
        contents = read_log(self.dir / _WAL, runs=True)
        self._compacted = contents.columns_end
        if contents.damage:
            log.warning("Stream '%s > %s': %s", stream.js.account.name, stream.name, contents.damage)
        count = 0
        for record in contents.records:
            for peer in stream.replicas.peers:
                if isinstance(record, (AppendRun, Columns)) and peer.store.apply(record):  # in bulk
                    continue
                for one in _one_by_one(record, peer.store):
                    try:
                        peer.store.apply(one)
                    except StoreError:
                        log.warning("stream %s: logged %s could not be applied again", stream.name, one)
            count += record.count if isinstance(record, (AppendRun, Columns)) else 1
        return count

    def open_wal(self, stream: Stream) -> CompactingLog:
        """The stream's log, compacting against the leader's store, with the store's limits
        as its first record when it is new."""
        self.dir.mkdir(parents=True, exist_ok=True)
        wal = CompactingLog(self.dir / _WAL, lambda: stream.store, self._compacted)
        wal.start()
        return wal

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def saved_streams(root: Path) -> list[StreamFiles]:
    """The stream directories with a config, in name order."""
    if not root.is_dir():
        return []
    return [StreamFiles(root, d.name) for d in sorted(root.iterdir()) if (d / _META).exists()]
