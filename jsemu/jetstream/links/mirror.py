"""Mirrors: a stream that copies its upstream's messages with their sequences and times.

Follows ``setupMirrorConsumer`` and ``processInboundMirrorMsg``:

* the start: ``opt_start_seq`` / ``opt_start_time`` on a fresh mirror, else everything
  from the upstream's first message, else after the mirror's last sequence;
* sequence gaps (filtered out, or deleted upstream before they were copied) become
  deleted sequences in the mirror, so sequences stay the upstream's;
* ``Nats-Expected-*`` and ``Nats-Batch-*`` headers are stripped; the first matching
  subject transform renames the subject; upstream deletes and purges are not copied;
  a copied rollup purges only if the mirror itself allows rollups;
* with ``mirror_direct`` the mirror joins the upstream's Direct Get queue group once a
  copied message leaves fewer than 10 pending (``dgetCaughtUpThresh``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ...protocol.headers import remove_header_prefix, slice_header
from ...store import StoredMsg, StoreError
from .upstream import UpstreamLink

if TYPE_CHECKING:
    from .upstream import LinkedStream, LinkServices

__all__ = ["MirrorLink"]

log = logging.getLogger("jsemu.jetstream")

CAUGHT_UP_THRESHOLD = 10  # dgetCaughtUpThresh


class MirrorLink(UpstreamLink):
    """The mirror's consumer of its upstream."""

    def __init__(self, js: LinkServices, mirror: LinkedStream) -> None:
        super().__init__(js, mirror, mirror.config.mirror or {})
        self.joined = False  # member of the upstream's Direct Get group

    @property
    def mirror(self) -> LinkedStream:
        return self.target

    def _start(self, upstream: LinkedStream) -> None:
        mstore = self.mirror.store
        mstate = mstore.state()
        start_time = self.spec.get("opt_start_time")
        if mstate.msgs == 0 and mstate.first_seq == 0:  # start options only the first time
            opt_seq = self.spec.get("opt_start_seq") or 0
        else:
            opt_seq = mstate.last_seq + 1
            start_time = None
        delivered = self.first_to_deliver(upstream, opt_seq, start_time) - 1
        if delivered > mstate.last_seq:
            if mstate.msgs == 0:
                mstore.purge_ex(None, delivered + 1, 0)
            else:
                mstore.skip_msgs(mstate.last_seq + 1, delivered - mstate.last_seq)
        self.sseq = max(delivered, mstate.last_seq)

    def _copy(self, sm: StoredMsg) -> None:
        store = self.mirror.store
        if store.last_seq < sm.seq - 1:
            # Deleted or filtered out upstream: the mirror keeps the numbering.
            store.skip_msgs(store.last_seq + 1, sm.seq - 1 - store.last_seq)
        self.sseq = sm.seq
        if self.mirror.config.mirror_direct and not self.joined and self.pending() < CAUGHT_UP_THRESHOLD:
            self.joined = True
            self.mirror.sync_responders()
        subject = self.transform(sm.subject)
        hdr = sm.hdr
        if hdr:
            hdr = remove_header_prefix(remove_header_prefix(hdr, b"Nats-Expected-"), b"Nats-Batch-")
        republish = self.mirror.republisher
        target = republish.target(subject) if republish is not None else None
        last_seq = store.last_seq_for_subject(subject) if target is not None else 0
        try:
            seq, ts = store.append(subject, hdr, sm.data, ts=sm.ts)
            if hdr:
                self._rollup(subject, hdr)
            if target is not None:
                assert republish is not None
                republish.send(self.js.out, target, subject, seq, ts, last_seq, hdr, sm.data)
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
