"""Consumers of file streams outlive a restart, as nats-server's do (with a ``store_dir``).

Each consumer has a directory beside its stream's log, like nats-server's
``obs/<name>/{meta.inf,o.dat}``: ``<stream dir>/obs/<name>/`` holds

* ``meta.json``: name, creation time and the config (the dataclass fields as JSON), written
  on create and update;
* ``o.json``: the consumer-store state, a snapshot as nats-server's ``o.dat`` is: delivered
  and ack floor, the pending map (stream seq -> delivery seq, time), the redelivery counts,
  and the delivery position.

Why a snapshot rather than records in a log: the state is small (bounded by
``max_ack_pending``) while the changes are many (every delivery and ack), so a log would grow
without bound and replaying it would have to re-run the delivery engine. A snapshot is
written atomically (temporary file, rename) for the consumers that changed (``mark``), at
most every 100 ms (nats-server's consumer flusher waits as long between writes) and on a
clean stop; like nats-server's it is not fsynced, and a process killed within those 100 ms
loses the latest changes, as nats-server does.

As with nats-server: every consumer of a file stream comes back (ephemerals too, with a fresh
inactivity timer); ``last_active`` times are not kept; pending messages keep their delivery
times, so they are redelivered ``ack_wait`` after their delivery. Consumers of memory
streams and consumers with ``mem_storage`` are not saved.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..consumers.config import ConsumerConfig
from ..consumers.consumer import Consumer

if TYPE_CHECKING:
    from ..streams.stream import Stream
    from .host import ConsumerFilesHost

__all__ = ["ConsumerFiles", "ConsumerStore", "meta_doc", "saved_consumers", "state_doc"]

log = logging.getLogger("jsemu.jetstream")

_OBS = "obs"
_META = "meta.json"
_STATE = "o.json"
_FORMAT = 1
_SECOND = 1_000_000_000
#: The least time between two snapshot writes (``consumerFileStore.flushLoop``'s ``minTime``).
MIN_FLUSH_INTERVAL = 0.1
_CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(ConsumerConfig) if f.name != "extra")


def _write_atomic(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(json.dumps(doc, separators=(",", ":")).encode())
    os.replace(tmp, path)


def config_doc(cfg: ConsumerConfig) -> dict[str, Any]:
    return {name: getattr(cfg, name) for name in _CONFIG_FIELDS}


def config_from_doc(doc: dict[str, Any]) -> ConsumerConfig:
    cfg = ConsumerConfig()
    for name in _CONFIG_FIELDS:
        if name in doc:
            setattr(cfg, name, doc[name])
    return cfg


def meta_doc(c: Consumer) -> dict[str, Any]:
    return {"format": _FORMAT, "name": c.name, "created_ns": c.created_ns, "config": config_doc(c.config)}


def state_doc(c: Consumer) -> dict[str, Any]:
    """What ``o.dat`` keeps, plus where delivery resumes."""
    return {
        "format": _FORMAT,
        "sseq": c.next_stream_seq,
        "dseq": c.next_consumer_seq,
        "has_state": c.has_state,
        "delivered": list(c.delivered),
        "ack_floor": list(c.ack_floor),
        "pending": [[seq, p[0], p[1]] for seq, p in c.pending.items()],
        "redelivered": [[seq, n] for seq, n in c.redelivery_counts.items()],
        "lss": c.last_per_subject,
        "lss_resume": c.last_per_subject_resume,
    }


def apply_state(c: Consumer, doc: dict[str, Any]) -> None:
    """Put a saved state back into a freshly made consumer."""
    c.next_stream_seq = int(doc["sseq"])
    c.next_consumer_seq = int(doc["dseq"])
    c.has_state = bool(doc["has_state"])
    c.delivered = (int(doc["delivered"][0]), int(doc["delivered"][1]))
    c.ack_floor = (int(doc["ack_floor"][0]), int(doc["ack_floor"][1]))
    c.own_ack_floor = c.ack_floor  # a restarted consumer starts from its store's floor (``readStoredState``)
    # ``o.dat`` keeps delivery times in whole seconds: after a restart messages delivered
    # within the same second are due together (and redelivered in stream order).
    c.pending = {int(seq): [int(dseq), int(ts) // _SECOND * _SECOND] for seq, dseq, ts in doc["pending"]}
    c.redelivery_counts = {int(seq): int(n) for seq, n in doc["redelivered"]}
    lss = doc.get("lss")
    c.last_per_subject = [int(s) for s in lss] if lss is not None else None
    c.last_per_subject_resume = int(doc.get("lss_resume", 0))


class ConsumerFiles:
    """The directory of one consumer."""

    def __init__(self, stream_dir: Path, name: str) -> None:
        self.dir = stream_dir / _OBS / name

    def save_meta(self, c: Consumer) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.dir / _META, meta_doc(c))

    def save_state(self, c: Consumer) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.dir / _STATE, state_doc(c))

    def load(self) -> tuple[str, int, ConsumerConfig, dict[str, Any] | None]:
        meta = json.loads((self.dir / _META).read_bytes())
        state_path = self.dir / _STATE
        state = json.loads(state_path.read_bytes()) if state_path.exists() else None
        return str(meta["name"]), int(meta["created_ns"]), config_from_doc(meta["config"]), state

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def saved_consumers(stream_dir: Path) -> list[ConsumerFiles]:
    """The consumer directories of a stream with a config, in name order."""
    root = stream_dir / _OBS
    if not root.is_dir():
        return []
    return [ConsumerFiles(stream_dir, d.name) for d in sorted(root.iterdir()) if (d / _META).exists()]


class ConsumerStore:
    """Saves the consumers of persisted streams: meta on create/update, state snapshots of
    the consumers marked changed, at most every :data:`MIN_FLUSH_INTERVAL` seconds."""

    def __init__(self, js: ConsumerFilesHost) -> None:
        self.js = js
        self._dirty: dict[int, Consumer] = {}
        self._scheduled = False
        self._last_flush = -MIN_FLUSH_INTERVAL

    def stream_dir(self, stream: Stream) -> Path | None:
        """Where ``stream``'s consumers are saved; None when the stream does not outlive a restart."""
        js = self.js
        if js.streams_dir is None or not js.persists(stream.config):
            return None
        return js.streams_dir / stream.name

    def created(self, c: Consumer) -> None:
        """A new or updated consumer: its meta now, its state at the end of this turn."""
        d = self.stream_dir(c.stream)
        if d is None or c.config.mem_storage:
            return
        ConsumerFiles(d, c.name).save_meta(c)
        c.on_change = lambda: self.mark(c)
        self.mark(c)

    def mark(self, c: Consumer) -> None:
        """``c`` changed; its snapshot is written after this turn of the loop, or
        :data:`MIN_FLUSH_INTERVAL` after the last write."""
        self._dirty[id(c)] = c
        if not self._scheduled:
            self._scheduled = True
            loop = self.js.server.loop
            wait = self._last_flush + MIN_FLUSH_INTERVAL - loop.time()
            if wait > 0:
                loop.call_later(wait, self.flush)
            else:
                loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write the snapshots of the consumers marked since the last flush and still open."""
        self._scheduled = False
        if not self._dirty:
            return
        self._last_flush = self.js.server.loop.time()
        dirty, self._dirty = self._dirty, {}
        for c in dirty.values():
            if c.closed:
                continue
            d = self.stream_dir(c.stream)
            if d is None:
                continue
            try:
                ConsumerFiles(d, c.name).save_state(c)
            except OSError:
                log.exception("could not save the state of consumer %s > %s", c.stream.name, c.name)

    def deleted(self, c: Consumer) -> None:
        """A deleted consumer: no pending snapshot, no directory."""
        self._dirty.pop(id(c), None)
        d = self.stream_dir(c.stream)
        if d is not None:
            ConsumerFiles(d, c.name).remove()

    def restore(self, stream: Stream) -> list[Consumer]:
        """Make the saved consumers of ``stream`` again, with their state."""
        d = self.stream_dir(stream)
        return [] if d is None else self.load(stream, d)

    def load(self, stream: Stream, stream_dir: Path, created_ns: int | None = None) -> list[Consumer]:
        """The consumers saved under ``stream_dir``, made again with their state (created at
        ``created_ns`` when given: a restored snapshot's consumers are new)."""
        out = []
        for files in saved_consumers(stream_dir):
            try:
                name, saved_ns, cfg, state = files.load()
                c = Consumer(self.js, stream, cfg, name, saved_ns if created_ns is None else created_ns)
                if state is not None:
                    apply_state(c, state)
            except Exception:
                log.exception("could not restore the consumer in %s", files.dir)
                continue
            c.restored()
            c.on_change = lambda c=c: self.mark(c)  # type: ignore[misc]
            out.append(c)
        return out
