"""File streams on disk, when the server has a ``store_dir`` (memory streams are gone after a
restart, as with nats-server): one directory per stream under
``<store_dir>/jetstream/$G/streams/<name>/`` with

* ``meta.json``: the stream's config (every ``StreamConfig`` field) and creation time,
  replaced atomically (write a temporary file, fsync, rename) on create and update; a
  directory without one is not a stream;
* ``msgs.wal``: the write-ahead log of every mutation of the stream's store
  (:mod:`jsemu.store.wal`), appended before the publish is acknowledged, and compacted to
  the records of the live state when it outgrows them (:mod:`jsemu.store.compaction`).

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
from typing import TYPE_CHECKING, Any, cast

from ...store import StoreError
from ...store.compaction import CompactingLog
from ...store.records import AppendRun
from ...store.wal import read_log
from ..streams.config import StreamConfig

if TYPE_CHECKING:
    from ..streams.stream import Stream

__all__ = ["MetaError", "StreamFiles", "saved_streams"]

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


class StreamFiles:
    """The directory of one stream."""

    def __init__(self, root: Path, name: str) -> None:
        self.dir = root / name

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
        contents = read_log(self.dir / _WAL, runs=True)
        if contents.damage:
            log.warning("Stream '%s > %s': %s", stream.js.account.name, stream.name, contents.damage)
        count = 0
        for record in contents.records:
            run = isinstance(record, AppendRun)
            for peer in stream.replicas.peers:
                if run and peer.store.apply(record):  # the run in bulk
                    continue
                for one in cast(AppendRun, record).appends() if run else (record,):
                    try:
                        peer.store.apply(one)
                    except StoreError:
                        log.warning("stream %s: logged %s could not be applied again", stream.name, one)
            count += len(cast(AppendRun, record).subjects) if run else 1
        return count

    def open_wal(self, stream: Stream) -> CompactingLog:
        """The stream's log, compacting against the leader's store, with the store's limits
        as its first record when it is new."""
        self.dir.mkdir(parents=True, exist_ok=True)
        wal = CompactingLog(self.dir / _WAL, lambda: stream.store)
        wal.start()
        return wal

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def saved_streams(root: Path) -> list[StreamFiles]:
    """The stream directories with a config, in name order."""
    if not root.is_dir():
        return []
    return [StreamFiles(root, d.name) for d in sorted(root.iterdir()) if (d / _META).exists()]
