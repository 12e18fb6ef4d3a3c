"""Mirrors: a stream that copies its upstream's messages with their sequences and times.

nats-server runs a mirror as an internal push consumer on the upstream
(``setupMirrorConsumer``, ``processInboundMirrorMsg``). Here the consumer is a position
over the upstream's store that is pumped synchronously whenever the upstream stores a
message, which is one valid schedule of the real, asynchronous one; the control plane
can pause the pump or hold it a fixed number of messages behind.

What is copied follows the server:

* the start: ``opt_start_seq`` / ``opt_start_time`` on a fresh mirror, else everything
  from the upstream's first message, else after the mirror's last sequence;
* sequence gaps (filtered out, or deleted upstream before they were copied) become
  deleted sequences in the mirror, so sequences stay the upstream's;
* ``Nats-Expected-*`` and ``Nats-Batch-*`` headers are stripped; the first matching
  subject transform renames the subject; upstream deletes and purges are not copied;
* with ``mirror_direct`` the mirror joins the upstream's Direct Get queue group once a
  copied message leaves fewer than 10 pending (``dgetCaughtUpThresh``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..protocol.headers import remove_header_prefix, slice_header
from ..store import StoredMsg, StoreError
from ..subject_transform import SubjectTransform, TransformError
from .timefmt import go_unix_nano

if TYPE_CHECKING:
    from .service import JetStream
    from .stream import Stream

__all__ = ["MirrorLink"]

log = logging.getLogger("jsemu.jetstream")

CAUGHT_UP_THRESHOLD = 10  # dgetCaughtUpThresh
#: How often a real mirror consumer sends an idle heartbeat (sourceHealthHB); ``active``
#: of a running mirror never reads more than this.
HEARTBEAT_NS = 1_000_000_000


class MirrorLink:
    """The mirror's consumer of its upstream."""

    def __init__(self, js: JetStream, mirror: Stream) -> None:
        self.js = js
        self.mirror = mirror
        spec: dict[str, Any] = mirror.config.mirror or {}
        self.upstream_name: str = spec.get("name", "")
        self.spec = spec
        self.filters: list[tuple[bytes, SubjectTransform | None]] = []
        if spec.get("filter_subject"):
            self.filters.append((spec["filter_subject"].encode(), None))
        for tr in spec.get("subject_transforms") or []:
            src, dest = (tr or {}).get("src") or ">", (tr or {}).get("dest") or ""
            try:
                transform = SubjectTransform(src, dest) if dest else None
            except TransformError:
                transform = None
            self.filters.append((src.encode(), transform))
        self.upstream: Stream | None = None
        self.sseq = 0  # the last upstream sequence copied or skipped
        self.paused = False
        self.hold: int | None = None  # keep this many messages pending
        self.last_contact_ns = 0  # 0: never heard from the upstream
        self.joined = False  # member of the upstream's Direct Get group
        self.started = False  # the mirror has tried to create its consumer
        self.consumer_created = False  # it has (its filter shows in the info from then on)

    # --- attaching --------------------------------------------------------------------

    def attach(self, upstream: Stream) -> None:
        """Create the consumer: pick the start as the server does, then catch up."""
        self.upstream = upstream
        self.started = self.consumer_created = True
        upstream.watchers.append(self)
        ustore, mstore = upstream.store, self.mirror.store
        mstate = mstore.state()
        start_time = self.spec.get("opt_start_time")
        opt_seq = 0
        if mstate.msgs == 0 and mstate.first_seq == 0:
            opt_seq = self.spec.get("opt_start_seq") or 0
        else:
            opt_seq = mstate.last_seq + 1
            start_time = None
        ust = ustore.state()
        if opt_seq:
            sseq = opt_seq
        elif start_time is not None:
            sseq = ustore.seq_from_time(go_unix_nano(start_time))
        else:
            sseq = ust.first_seq
        # selectStartingSeqNo's clamps
        if ust.first_seq == 0 and not opt_seq:
            sseq = 1
        elif sseq > ust.last_seq and not opt_seq:
            sseq = ust.last_seq + 1
        elif sseq < ust.first_seq:
            sseq = ust.first_seq
        delivered = sseq - 1
        if delivered > mstate.last_seq:
            if mstate.msgs == 0:
                mstore.purge_ex(None, delivered + 1, 0)
            else:
                mstore.skip_msgs(mstate.last_seq + 1, delivered - mstate.last_seq)
        self.sseq = max(delivered, mstate.last_seq)
        self.last_contact_ns = self.js.clock.now_ns()
        self.pump()

    def detach(self) -> None:
        """The upstream went away; the mirror keeps what it has."""
        if self.upstream is not None and self in self.upstream.watchers:
            self.upstream.watchers.remove(self)
        self.upstream = None

    # --- copying ----------------------------------------------------------------------

    def _next(self, start: int) -> StoredMsg | None:
        store = self.upstream.store if self.upstream is not None else None
        if store is None:
            return None
        if not self.filters:
            return store.load_next(b">", start)
        best: StoredMsg | None = None
        for filt, _ in self.filters:
            sm = store.load_next(filt, start)
            if sm is not None and (best is None or sm.seq < best.seq):
                best = sm
        return best

    def pending(self) -> int:
        """Upstream messages after the last copied one that the mirror still has to copy."""
        if self.upstream is None:
            return 0
        store = self.upstream.store
        if not self.filters:
            return store.num_pending(self.sseq + 1, b">")
        return sum(store.num_pending(self.sseq + 1, filt) for filt, _ in self.filters)

    def pump(self, force: bool = False) -> None:
        """Copy what the consumer would deliver now (all of it when ``force``)."""
        if self.upstream is None or (self.paused and not force):
            return
        hold = 0 if force or self.hold is None else self.hold
        copied = False
        while True:
            if hold and self.pending() <= hold:
                break
            sm = self._next(self.sseq + 1)
            if sm is None:
                break
            self._copy(sm)
            copied = True
        if copied:
            self.last_contact_ns = self.js.clock.now_ns()
            self.mirror.wake_watchers()

    def _copy(self, sm: StoredMsg) -> None:
        store = self.mirror.store
        if store.last_seq < sm.seq - 1:
            # Deleted or filtered out upstream: the mirror keeps the numbering.
            store.skip_msgs(store.last_seq + 1, sm.seq - 1 - store.last_seq)
        self.sseq = sm.seq
        if self.mirror.config.mirror_direct and not self.joined and self.pending() < CAUGHT_UP_THRESHOLD:
            self.joined = True
            self.js.sync_responders(self.mirror)
        subject = sm.subject
        for _, transform in self.filters:
            if transform is not None:
                mapped = transform.match(subject)
                if mapped is not None:
                    subject = mapped
                    break
        hdr = sm.hdr
        if hdr:
            hdr = remove_header_prefix(remove_header_prefix(hdr, b"Nats-Expected-"), b"Nats-Batch-")
        try:
            store.append(subject, hdr, sm.data, ts=sm.ts)
            if hdr:
                self._rollup(subject, hdr)
        except StoreError as exc:
            # Go logs and loses the message (for example discard new on a full mirror).
            log.warning("mirror %s could not store upstream seq %d: %s", self.mirror.name, sm.seq, exc)
            if store.last_seq < sm.seq:
                store.skip_msgs(store.last_seq + 1, sm.seq - store.last_seq)

    def _rollup(self, subject: bytes, hdr: bytes) -> None:
        """A copied ``Nats-Rollup`` purges in the mirror only if the mirror allows rollups."""
        rollup = slice_header(b"Nats-Rollup", hdr)
        cfg = self.mirror.config
        if not rollup or not cfg.allow_rollup_hdrs or cfg.deny_purge:
            return
        value = rollup.lower()
        if value == b"sub":
            self.mirror.store.purge_ex(subject, 0, 1)
        elif value == b"all":
            self.mirror.store.purge_ex(None, 0, 1)

    # --- control and info -------------------------------------------------------------

    def pause(self) -> None:
        self.paused = True

    def set_lag(self, messages: int) -> None:
        if messages < 0:
            raise ValueError("lag can not be negative")
        self.paused = False
        self.hold = messages
        self.pump()

    def resume(self) -> None:
        self.paused = False
        self.hold = None
        self.pump()

    def info_json(self) -> dict[str, Any]:
        """``StreamSourceInfo`` of the mirror (``sourceInfo``)."""
        out: dict[str, Any] = {"name": self.upstream_name}
        external = self.spec.get("external")
        if external is not None:
            out["external"] = {"api": external.get("api", ""), "deliver": external.get("deliver", "")}
        out["lag"] = self.pending()
        if self.last_contact_ns == 0:
            out["active"] = -1
        else:
            since = max(1, self.js.clock.now_ns() - self.last_contact_ns)
            if self.upstream is not None and not self.paused:
                since = min(since, HEARTBEAT_NS)  # idle heartbeats keep a running mirror fresh
            out["active"] = since
        if self.started and not self.consumer_created:
            out["error"] = {"code": 404, "err_code": 10059, "description": "stream not found"}
        if self.spec.get("filter_subject") and self.consumer_created:
            out["filter_subject"] = self.spec["filter_subject"]
        if self.spec.get("subject_transforms"):
            out["subject_transforms"] = [
                {"src": (t or {}).get("src", ""), "dest": (t or {}).get("dest", "")}
                for t in self.spec["subject_transforms"]
            ]
        return out
