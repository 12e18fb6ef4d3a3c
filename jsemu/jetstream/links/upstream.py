"""A stream's internal consumer of another stream, the machinery mirrors and sources share.

nats-server runs mirrors and sources as internal push consumers on the upstream
(``setupMirrorConsumer``, ``setupSourceConsumer``). Here the consumer is a position over
the upstream's store that is pumped synchronously whenever the upstream stores a
message, which is one valid schedule of the real, asynchronous one; the control plane
can pause the pump or hold it a fixed number of messages behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ...store import StoredMsg
from ...subject_transform import SubjectTransform, TransformError
from ...timefmt import go_unix_nano
from ..context import HasClock, HasSender
from .external_route import RETRY_NS

if TYPE_CHECKING:
    from ...server.outbound import Sender
    from ...store import Store
    from ..context import Watcher

__all__ = ["HEARTBEAT_NS", "LinkServices", "LinkedConfig", "LinkedStream", "Republishing", "UpstreamLink"]


class LinkServices(HasClock, HasSender, Protocol):
    """What a link needs of the service (``JetStream``): the time of contact, the way out
    for the messages a mirror republishes."""


class LinkedConfig(Protocol):
    """What a link reads of a stream's config (``StreamConfig``)."""

    mirror: dict[str, Any] | None

    mirror_direct: bool

    allow_rollup_hdrs: bool

    deny_purge: bool


class Republishing(Protocol):
    """A stream's republish rule (``streams.republish.Republisher``), which a mirror follows."""

    def target(self, subject: bytes) -> bytes | None: ...

    def send(
        self, out: Sender, target: bytes, subject: bytes, seq: int, ts: int, last_seq: int, hdr: bytes, data: bytes
    ) -> None: ...


class LinkedStream(Protocol):
    """What a link reads and does of the streams at either end (``Stream``): the upstream's
    store and watchers, the target's store and the publish path of sourced messages."""

    @property
    def name(self) -> str: ...

    created_ns: int

    @property
    def config(self) -> LinkedConfig: ...

    store: Store

    @property
    def republisher(self) -> Republishing | None: ...

    watchers: list[Watcher]

    def wake_watchers(self) -> None: ...

    def store_sourced(self, subject: bytes, hdr: bytes, payload: bytes) -> None: ...

    def sync_responders(self) -> None: ...


#: How often a real sourcing consumer sends an idle heartbeat (sourceHealthHB); ``active``
#: of a running link never reads more than this.
HEARTBEAT_NS = 1_000_000_000


class UpstreamLink:
    """Position, filters, pausing and info of one consumer of an upstream stream."""

    #: Whether setting up the consumer counts as contact (mirrors); a source hears from
    #: its upstream with the first message or heartbeat.
    contact_on_setup = True
    #: Whether ``filter_subject`` shows in the info before the consumer exists (sources:
    #: yes; mirrors only once it is set up).
    filter_before_setup = False

    def __init__(self, js: LinkServices, target: LinkedStream, spec: dict[str, Any]) -> None:
        self.js = js
        self.target = target
        self.spec = spec
        self.upstream_name: str = spec.get("name", "")
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
        self.upstream: LinkedStream | None = None
        self.sseq = 0  # the last upstream sequence copied or skipped
        self.paused = False
        self.hold: int | None = None  # keep this many messages pending
        self.last_contact_ns = 0  # 0: never heard from the upstream
        self.attached_ns = 0
        self.started = False  # the consumer has been asked for
        self.consumer_created = False  # and made (the filter shows in the info from then on)
        #: External upstreams (``external_route``): the API request reaches no JetStream, or
        #: the consumer is made but its deliveries do not come back to this account.
        self.unreachable = False
        self.deaf = False

    # --- attaching --------------------------------------------------------------------

    def attach(self, upstream: LinkedStream) -> None:
        """Create the consumer on ``upstream`` and catch up."""
        self.upstream = upstream
        self.started = self.consumer_created = True
        upstream.watchers.append(self)
        self._start(upstream)
        self.attached_ns = self.js.clock.now_ns()
        if self.contact_on_setup or self.deaf:
            self.last_contact_ns = self.attached_ns
        self.pump()

    def _start(self, upstream: LinkedStream) -> None:
        """Set ``sseq`` to the sequence before the first one to deliver."""
        raise NotImplementedError

    def first_to_deliver(self, upstream: LinkedStream, opt_seq: int, start_time: int | None) -> int:
        """``selectStartingSeqNo`` of a consumer by start sequence, start time, or all."""
        ustore = upstream.store
        ust = ustore.state()
        if opt_seq:
            sseq = opt_seq
        elif start_time is not None:
            sseq = ustore.seq_from_time(go_unix_nano(start_time))
        else:
            sseq = ust.first_seq
        if ust.first_seq == 0 and not opt_seq:
            sseq = 1
        elif sseq > ust.last_seq and not opt_seq:
            sseq = ust.last_seq + 1
        elif sseq < ust.first_seq:
            sseq = ust.first_seq
        return sseq

    def detach(self) -> None:
        """The upstream went away (or the link was removed); what was copied stays."""
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
        """Upstream messages after the last copied one that are still to be copied."""
        if self.upstream is None or self.deaf:
            return 0
        store = self.upstream.store
        if not self.filters:
            return store.num_pending(self.sseq + 1, b">")
        return sum(store.num_pending(self.sseq + 1, filt) for filt, _ in self.filters)

    def transform(self, subject: bytes) -> bytes:
        """The first matching subject transform renames the subject."""
        for _, transform in self.filters:
            if transform is not None:
                mapped = transform.match(subject)
                if mapped is not None:
                    return mapped
        return subject

    def pump(self) -> None:
        """Copy what the consumer would deliver now."""
        if self.upstream is None or self.deaf or self.paused:
            return
        hold = 0 if self.hold is None else self.hold
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
            self.target.wake_watchers()

    def _copy(self, sm: StoredMsg) -> None:
        raise NotImplementedError

    def _info_seq(self, out: dict[str, Any]) -> None:
        """Sources add the upstream sequence of the last stored message (``seq``)."""

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
        """``StreamSourceInfo`` (``sourceInfo``)."""
        out: dict[str, Any] = {"name": self.upstream_name}
        external = self.spec.get("external")
        if external is not None:
            out["external"] = {"api": external.get("api", ""), "deliver": external.get("deliver", "")}
        out["lag"] = self.pending()
        self._info_seq(out)
        last = self.last_contact_ns
        if not last and self.upstream is not None and self.attached_ns:
            now = self.js.clock.now_ns()
            if now - self.attached_ns >= HEARTBEAT_NS:
                last = self.attached_ns + HEARTBEAT_NS  # the first idle heartbeat
        if last == 0:
            out["active"] = -1
        else:
            since = max(1, self.js.clock.now_ns() - last)
            if self.deaf:
                since = since % RETRY_NS or 1  # set up again each time nothing came for 10 s
            elif self.upstream is not None and not self.paused:
                since = min(since, HEARTBEAT_NS)  # idle heartbeats keep a running link fresh
            out["active"] = since
        if self.started and not self.consumer_created and not self.unreachable:
            out["error"] = {"code": 404, "err_code": 10059, "description": "stream not found"}
        if self.spec.get("filter_subject") and (self.consumer_created or self.filter_before_setup):
            out["filter_subject"] = self.spec["filter_subject"]
        if self.spec.get("subject_transforms"):
            out["subject_transforms"] = [
                {"src": (t or {}).get("src", ""), "dest": (t or {}).get("dest", "")}
                for t in self.spec["subject_transforms"]
            ]
        return out
