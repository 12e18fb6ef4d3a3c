"""One stream: its config, its store, and the publish path of ``processJetStreamMsg``.

Publish checks run in the server's order, so the first failing rule gives the same
PubAck error as the real server. Successful acks are hand-built bytes (as the server
does); error acks are JSON with ``error`` first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from json import loads
from typing import TYPE_CHECKING, Any

from ...ids import get_hash
from ...protocol.gojson import dumps
from ...protocol.headers import parse_uint_header, remove_header, remove_header_status, set_header, slice_header
from ...protocol.msg_ttl import InvalidTTL, header_ttl
from ...protocol.trace_headers import TRACE_DEST, TRACE_DISABLED
from ...store import DedupWindow, Store, StoreError, StoreLimits, new_store
from ...store.records import ROLLUP_ALL, ROLLUP_SUBJECT, SKIP_NO_INTEREST, BatchMessage
from ...subject_transform import SubjectTransform
from ...timefmt import format_ns
from ..cluster.replicas import Peer, ReplicaSet, replicated_store
from ..cluster.stream_move import PendingMove, desired_json
from ..context import JetStreamTrace, Watcher
from ..errors import ApiError, ApiErrors, api_error, wrap_error
from ..limits.storage import checks_publish, publish_error
from .atomic_batch import BATCH_ID, AtomicBatches
from .config import StreamConfig, config_json
from .counters import INCR, apply_increment, incr_header_error, parse_incr
from .delete_markers import MarkerExpiry
from .fast_batch import FAST_SUFFIX, FastBatches
from .republish import Republisher
from .retention import has_interest
from .schedules import MsgSchedules, purged_schedule, schedule_error, with_sub_rollup

if TYPE_CHECKING:
    from ...server.sublist import Subscription
    from ...server.subscriber import FastBatch, HeaderLens, Payloads, Replies, Subjects
    from ..links.mirror import MirrorLink
    from ..links.sources import SourceLink
    from .host import StreamConsumers, StreamHost

__all__ = ["Stream", "Watcher"]


log = logging.getLogger("jsemu.jetstream")

MAX_HEADER_SIZE = 0xFFFF
MAX_SUBJECT_DETAILS = 100_000  # JSMaxSubjectDetails

_REQUEST_INFO = b"Nats-Request-Info"
_MSG_ID = b"Nats-Msg-Id"
_EXPECTED_STREAM = b"Nats-Expected-Stream"
_EXPECTED_LAST_SEQ = b"Nats-Expected-Last-Sequence"
_EXPECTED_LAST_SUBJ_SEQ = b"Nats-Expected-Last-Subject-Sequence"
_EXPECTED_LAST_SUBJ_SEQ_SUBJ = b"Nats-Expected-Last-Subject-Sequence-Subject"
_EXPECTED_LAST_MSG_ID = b"Nats-Expected-Last-Msg-Id"
_ROLLUP = b"Nats-Rollup"
_TTL = b"Nats-TTL"
_INCR = b"Nats-Incr"
_SCHEDULE = b"Nats-Schedule"  # also the prefix of every other schedule header
_STREAM_SOURCE = b"Nats-Stream-Source"


def _trace_error(hdr: bytes, error: dict[str, Any], last_seq: int) -> str:
    """The ``js`` event's error: the Go error ``processJetStreamMsg`` returned, which is the
    API error's description except for a wrong last sequence."""
    if error.get("err_code") == ApiErrors.JSStreamWrongLastSequenceErrF.err_code:
        expected = slice_header(_EXPECTED_LAST_SEQ, hdr) or b"0"
        return f"last sequence mismatch: {parse_uint_header(expected)} vs {last_seq}"
    return str(error.get("description", ""))


def _limits(cfg: StreamConfig) -> StoreLimits:
    return StoreLimits(
        max_msgs=cfg.max_msgs,
        max_bytes=cfg.max_bytes,
        max_age_ns=cfg.max_age,
        max_msgs_per_subject=cfg.max_msgs_per_subject,
        discard_new=cfg.discard == "new",
        discard_new_per_subject=cfg.discard_new_per_subject,
        allow_msg_ttl=cfg.allow_msg_ttl,
        stream_expires=cfg.subject_delete_marker_ttl > 0,
    )


def _transform_for(cfg: StreamConfig) -> SubjectTransform | None:
    """The stream's input transform; raises TransformError for one we cannot apply."""
    if cfg.subject_transform is None:
        return None
    return SubjectTransform(cfg.subject_transform.get("src", ""), cfg.subject_transform.get("dest", ""))


def _republisher_for(cfg: StreamConfig) -> Republisher | None:
    return Republisher(cfg.name, cfg.republish) if cfg.republish is not None else None


class Stream:
    """A stream of one account: config, store, dedup window and last message id.

    ``store`` is the leader peer's store; ``replicas`` holds every peer (one for R1).
    """

    def __init__(self, js: StreamHost, config: StreamConfig, created_ns: int, peer_names: list[str]) -> None:
        self.js = js
        self.config = config
        self.created_ns = created_ns
        # R1 without a store_dir logs nothing, so it gets a plain store: no logging cost.
        make = new_store if len(peer_names) == 1 and not js.persists(config) else replicated_store
        storage = config.storage or "file"
        peers = [
            Peer(name, make(storage, _limits(config), js.clock, config.first_seq), created_ns) for name in peer_names
        ]
        self.replicas = ReplicaSet(self, peers)
        self.raft_group = ""
        #: A move to another server under way (``cluster/stream_move.py``); held moves stay.
        self.pending_move: PendingMove | None = None
        self.move_held = False
        self.store: Store = peers[0].store
        #: Mirrors and sources copying from this stream, and its consumers while pull
        #: requests wait, woken after each stored message.
        self.watchers: list[Watcher] = []
        #: This stream's consumers (``ConsumerSet``), once it has had any.
        self.consumer_set: StreamConsumers | None = None
        #: This stream's own consumer of its upstream, when it is a mirror.
        self.mirror_link: MirrorLink | None = None
        #: Its consumers of the streams it sources from, in config order.
        self.source_links: list[SourceLink] = []
        self.dedup = DedupWindow(config.duplicate_window, js.clock)
        self.last_msg_id = b""
        self._ack_prefix = self._build_ack_prefix()
        self._transform = _transform_for(config)
        #: Expiry with subject delete markers, while the config has them.
        self.markers: MarkerExpiry | None = MarkerExpiry(self) if config.subject_delete_marker_ttl > 0 else None
        #: Message schedules (``msg_schedules``), while the config allows them.
        self.schedules: MsgSchedules | None = MsgSchedules(self) if config.allow_msg_schedules else None
        self.republisher = _republisher_for(config)
        #: Open atomic batches (``allow_atomic``).
        self.batches = AtomicBatches(self)
        #: Open fast batches (``allow_batched``).
        self.fast_batches = FastBatches(self)
        self._plain, self._plain_max = self._plain_path()
        self._acks = not config.no_ack
        #: Acks remove messages (interest or work-queue retention: ``retention.ack_msg``).
        self.retains = config.retention != "limits"
        #: The stream's entry for a connection's fast lane: one stable object (runs are
        #: told apart by identity; see ``server/subscriber.py``).
        self.fast_batch: FastBatch = self.publish_batch

    def empty_store(self) -> Store:
        """A new, empty store of this stream's flavour (an R1 stream restarted elsewhere)."""
        config = self.config
        make = new_store if len(self.replicas.peers) == 1 and not self.js.persists(config) else replicated_store
        return make(config.storage or "file", _limits(config), self.js.clock, config.first_seq)

    def forget_messages(self) -> None:
        """Its messages are gone (an R1 stream restarted empty): the duplicate window too."""
        self.dedup = DedupWindow(self.config.duplicate_window, self.js.clock)
        self.last_msg_id = b""

    def _plain_path(self) -> tuple[bool, int]:
        """Whether a header-less message can skip the publish rules (and up to what size)."""
        cfg = self.config
        plain = (
            self._transform is None
            and not cfg.sealed
            and not cfg.allow_msg_counter
            and cfg.retention != "interest"
            and self.markers is None
            and self.schedules is None  # any stored message can cancel a schedule
            and self.republisher is None
            and not checks_publish(self.js, cfg.storage or "file")  # a storage limit is checked per message
        )
        return plain, cfg.max_msg_size if cfg.max_msg_size >= 0 else 1 << 62

    @property
    def name(self) -> str:
        return self.config.name

    def _build_ack_prefix(self) -> bytes:
        prefix = '{"stream":' + dumps(self.config.name)
        if self.js.domain:
            prefix += ',"domain":' + dumps(self.js.domain)
        return (prefix + ',"seq":').encode()

    def update_config(self, config: StreamConfig) -> None:
        """Apply an already validated config; limits take effect at once."""
        self.config = config
        self._transform = _transform_for(config)
        if self.markers is not None:
            self.markers.stop()
        self.markers = MarkerExpiry(self) if config.subject_delete_marker_ttl > 0 else None
        if config.allow_msg_schedules and self.schedules is None:  # (it cannot be turned off)
            self.schedules = MsgSchedules(self)
            self.schedules.rebuild()
        self.republisher = _republisher_for(config)
        if not config.allow_atomic:
            self.batches.drop_all()
        if not config.allow_batched:
            self.fast_batches.drop_all()
        self._plain, self._plain_max = self._plain_path()
        self._acks = not config.no_ack
        self.retains = config.retention != "limits"
        self.store.update_limits(_limits(config))
        self.dedup.set_window(config.duplicate_window)
        self.arm_expiry()

    def arm_expiry(self) -> None:
        """With subject delete markers, the stream expires its messages on a timer; with
        message schedules, it fires them on one."""
        if self.markers is not None:
            self.markers.arm()
        if self.schedules is not None:
            self.schedules.arm()

    def stop_expiry(self) -> None:
        if self.markers is not None:
            self.markers.stop()
        if self.schedules is not None:
            self.schedules.stop()

    def store_scheduled(self, subject: bytes, hdr: bytes, payload: bytes) -> None:
        """A scheduled message, stored like a sourced message (Go's ``pmsgcb``)."""
        self._store_and_ack(subject, hdr, payload, sourced=True)

    def store_marker(self, subject: bytes, hdr: bytes) -> None:
        """A subject delete marker, stored like a sourced message (Go's ``pmsgcb``)."""
        self._store_and_ack(subject, hdr, b"", sourced=True)

    # --- publishing -------------------------------------------------------------------

    echo = True  # as a subscriber: the stream receives its subjects like any client

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """A message on one of the stream's subjects, routed like to any subscriber."""
        self.publish(subject, reply, hdr, msg)
        return True

    def deliver_traced(
        self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, trace: JetStreamTrace
    ) -> bool:
        """A traced message (``server/msg_trace.py``): stored with ``Nats-Trace-Dest: trace
        disabled`` (a consumer's delivery is not traced again), or, trace-only, checked and
        not stored; its ``js`` event says the stored subject, ``nointerest`` or the error."""
        event = trace.jetstream(self.config.name)
        block = msg[:hdr] if hdr > 0 else b""
        if block and not trace.only:
            block = set_header(block, TRACE_DEST, TRACE_DISABLED)
        try:
            answer = self._store_and_ack(subject, block, msg[max(hdr, 0) :], traced=event, trace_only=trace.only)
        except Exception:  # a bug here must not cost the publisher its connection
            log.exception("stream %s failed to store a traced message on %r", self.config.name, subject)
            return True
        if answer is not None and answer[:9] == b'{"error":' and "error" not in event:
            event.pop("subject", None)
            event["error"] = _trace_error(block, loads(answer)["error"], self.store.last_seq)
        event["ts"] = format_ns(time.time_ns())
        if reply and answer is not None and self._acks:
            self.js.send_reply(reply, answer)
        return True

    def publish_batch(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> None:
        """Publishes straight from a connection's fast lane (``fast_batch``), in order, as
        columns. Header-less messages that no rule can refuse are stored all at once
        (``StreamStore.append_columns``; a replicated store refuses) while nothing watches
        this stream; else one by one."""
        n = len(subjects)
        if (
            self._plain
            and not self.watchers
            and (hdrs is None or hdrs.count(-1) == n)
            and max(map(len, msgs)) <= self._plain_max
            and (replies.count(None) == n or not any(r is not None and r.endswith(FAST_SUFFIX) for r in replies))
        ):
            store = self.store
            first = store.last_seq + 1
            if store.append_columns(subjects, msgs):
                self.last_msg_id = b""
                if self._acks and replies.count(None) != n:
                    self._ack_run(replies, first)
                return
        for k in range(n):
            self.publish(subjects[k], replies[k], hdrs[k] if hdrs is not None else -1, msgs[k])

    def _ack_run(self, replies: Sequence[bytes | None], first: int) -> None:
        """PubAcks for a run stored from sequence ``first`` on (where a reply was given)."""
        prefix = self._ack_prefix
        reply = replies[0]
        n = len(replies)
        out = self.js.out
        if reply is not None and replies.count(reply) == n:
            out.send_payloads(reply, [b"%b%d}" % (prefix, seq) for seq in range(first, first + n)])
            return
        # Runs of acks to one reply subject together, in order.
        k = 0
        while k < n:
            reply = replies[k]
            j = k + 1
            while j < n and replies[j] == reply:
                j += 1
            if reply is not None:
                out.send_payloads(reply, [b"%b%d}" % (prefix, seq) for seq in range(first + k, first + j)])
            k = j

    def publish(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        """One message on the stream's subjects: store it and answer the publisher."""
        try:
            if reply is not None and reply[-4:] == FAST_SUFFIX and len(reply) > 4:  # (``is_fast_reply``)
                split = max(hdr, 0)
                self.fast_batches.publish(subject, reply, msg[:split], msg[split:])
                return
            if hdr <= 0 and self._plain and len(msg) <= self._plain_max:
                # No headers and no rule that could refuse the message: store it directly.
                try:
                    seq = self.store.append_plain(subject, msg)
                except StoreError as exc:
                    ack = self.error_ack(wrap_error(ApiErrors.JSStreamStoreFailedF, exc))
                else:
                    self.last_msg_id = b""
                    if self.watchers:
                        self.wake_watchers()
                    if reply and self._acks:
                        self.js.out.send(reply, -1, self._ack_prefix + b"%d}" % seq)
                    return
                if reply and self._acks:
                    self.js.out.send(reply, -1, ack)
                return
            if hdr > 0:
                answer = self._store_and_ack(subject, msg[:hdr], msg[hdr:])
            else:
                answer = self._store_and_ack(subject, b"", msg)
            if reply and answer is not None and self._acks:
                self.js.send_reply(reply, answer)
        except Exception:  # a bug here must not cost the publisher its connection
            log.exception("stream %s failed to store a message on %r", self.config.name, subject)

    def error_ack(self, err: ApiError) -> bytes:
        body: dict[str, Any] = {"error": err.as_dict(), "stream": self.config.name, "seq": 0}
        return dumps(body).encode()

    def store_sourced(self, subject: bytes, hdr: bytes, payload: bytes) -> None:
        """A message from one of the streams this one sources (``processJetStreamMsg``
        with ``sourced``): the origin already validated it, so only the stream's own rules
        (sealed, size, dedup, limits) apply; a refused message is lost, as in Go."""
        self._store_and_ack(subject, hdr, payload, sourced=True)

    def store_checked(self, subject: bytes, reply: bytes, hdr: bytes, payload: bytes) -> bool:
        """A fast batch message its header rules already passed (``fast_batch``; Go's
        ``processJetStreamMsgWithBatch`` without consistency checks): whether it took a
        sequence (stored, or skipped for want of interest). A refusal left (an expected last
        msg id, a full store) is answered like a publish."""
        before = self.store.last_seq
        answer = self._store_and_ack(subject, hdr, payload, checked=True)
        if self.store.last_seq != before:
            return True
        if answer is not None and self._acks:
            self.js.send_reply(reply, answer)
        return False

    def _store_and_ack(
        self,
        subject: bytes,
        hdr: bytes,
        payload: bytes,
        sourced: bool = False,
        checked: bool = False,
        traced: dict[str, Any] | None = None,
        trace_only: bool = False,
    ) -> bytes | None:
        cfg = self.config
        store = self.store
        if self._transform is not None and not sourced:
            mapped = self._transform.match(subject)
            if mapped is not None:
                subject = mapped
        if hdr:
            hdr = remove_header_status(hdr)
        if cfg.sealed and not checked:
            return self.error_ack(api_error(ApiErrors.JSStreamSealedErr))
        # nats-server 2.15.1 checks the size before any header rule (observed; newer
        # sources check it later).
        max_size = cfg.max_msg_size
        if max_size >= 0 and not checked and (len(hdr) > max_size or len(payload) > max_size - len(hdr)):
            return self.error_ack(api_error(ApiErrors.JSStreamMessageExceedsMaximumErr))
        if hdr:
            # A batch message goes to its batch before any header rule (observed in 2.15.1).
            batch_id = None if sourced or checked else slice_header(BATCH_ID, hdr)
            if batch_id:
                if not cfg.allow_atomic:
                    return self.error_ack(api_error(ApiErrors.JSAtomicPublishDisabledErr))
                return self.batches.publish(batch_id, subject, hdr, payload)
            hdr = remove_header(hdr, _REQUEST_INFO)
        msg_id = b""
        rollup_sub = rollup_all = False
        if hdr:
            if sourced:
                error = incr_header_error(hdr, payload, cfg.allow_msg_counter, sourced=True)
            elif checked:
                error = None
            else:
                error = self._check_headers(subject, hdr, payload)
            if error is not None:
                return self.error_ack(error)
            if self.schedules is not None and not sourced and not checked and _SCHEDULE in hdr:
                hdr = with_sub_rollup(hdr, self.js.clock.now_ns())
            msg_id = slice_header(_MSG_ID, hdr) or b""
            if msg_id and cfg.mirror is None and not checked:
                seq = self.dedup.lookup(msg_id)
                if seq is not None:
                    if traced is not None:
                        traced["error"] = "msgid is duplicate"
                    return self._ack_prefix + str(seq).encode() + b',"duplicate": true}'
            expected_id = slice_header(_EXPECTED_LAST_MSG_ID, hdr)
            if expected_id and expected_id != self.last_msg_id:
                return self.error_ack(
                    api_error(ApiErrors.JSStreamWrongLastMsgIDErrF, id=self.last_msg_id.decode("utf-8", "replace"))
                )
            rollup = slice_header(_ROLLUP, hdr)
            if rollup and sourced and (not cfg.allow_rollup_hdrs or cfg.deny_purge):
                rollup = None  # stored as it is; the rollup only applies where it is allowed
            if rollup:
                if not cfg.allow_rollup_hdrs or cfg.deny_purge:
                    return self.error_ack(api_error(ApiErrors.JSStreamRollupFailedF, err="rollup not permitted"))
                value = rollup.lower()
                if value == b"sub":
                    rollup_sub = True
                elif value == b"all":
                    rollup_all = True
                else:
                    text = rollup.decode("utf-8", "replace").lower()
                    return self.error_ack(
                        api_error(ApiErrors.JSStreamRollupFailedF, err=f"rollup value invalid: {dumps(text)}")
                    )
        counter = b""
        if cfg.allow_msg_counter and not checked:
            incr = slice_header(INCR, hdr) if hdr else None
            if not incr:
                return self.error_ack(api_error(ApiErrors.JSMessageIncrMissingErr))
            last = store.load_last(subject)
            counted = apply_increment(
                None if last is None else (last.hdr, last.data), subject, hdr, payload, parse_incr(incr)
            )
            if isinstance(counted, ApiError):
                return self.error_ack(counted)
            hdr, payload, total = counted
            max_payload = self.js.server.options.max_payload
            if len(hdr) > max_payload or len(payload) > max_payload - len(hdr):
                return self.error_ack(api_error(ApiErrors.JSStreamMessageExceedsMaximumErr))
            counter = b',"val":%s' % dumps(total).encode()
        if len(hdr) > MAX_HEADER_SIZE:
            return self.error_ack(api_error(ApiErrors.JSStreamHeaderExceedsMaximumErr))
        if not self._plain:
            full = publish_error(self.js, self, subject, hdr, payload)
            if full is not None:
                return self.error_ack(full)
        # No consumer wants it: the sequence is used up, nothing stored (``SkipMsgNoInterest``).
        no_interest = cfg.retention == "interest" and not has_interest(self, subject)
        if traced is not None:  # ``updateJetStreamEvent``: where it would be stored
            traced["subject"] = subject.decode("utf-8", "replace")
            if no_interest:
                traced["nointerest"] = True
            if trace_only:
                return None
        republish = self.republisher
        target = None
        if republish is not None and not no_interest:
            target = republish.target(subject)
            if target is not None:
                last_seq = store.last_seq_for_subject(subject)
        if no_interest:
            seq = store.skip_msg(no_interest=True)
            ts = self.js.clock.now_ns()
        else:
            if hdr and _TTL in hdr:
                try:
                    ttl = header_ttl(hdr)
                except InvalidTTL:
                    return self.error_ack(api_error(ApiErrors.JSMessageTTLInvalidErr))
                if ttl > 0 and self.markers is not None and cfg.max_msgs_per_subject != 1:
                    # A TTL below the marker TTL is raised to it, so no marker is missed.
                    min_ttl = cfg.subject_delete_marker_ttl // 1_000_000_000
                    if ttl < min_ttl:
                        rest = remove_header(hdr, _TTL)  # then Go's genHeader
                        hdr = (rest[:-2] if len(rest) > 2 else b"NATS/1.0\r\n") + b"Nats-TTL: %d\r\n\r\n" % min_ttl
            try:
                seq, ts = store.append(subject, hdr, payload)
            except StoreError as exc:
                return self.error_ack(wrap_error(ApiErrors.JSStreamStoreFailedF, exc))
        self.last_msg_id = msg_id
        if msg_id:
            self.dedup.record(msg_id, seq, ts)
        if self.watchers:
            self.wake_watchers()  # mirrors see the message before a rollup purges older ones
        if rollup_sub:
            store.purge_ex(subject, 0, 1)
        elif rollup_all:
            store.purge_ex(None, 0, 1)
        if hdr and not no_interest:
            self._after_schedule_headers(seq, subject, hdr, ts)
        elif self.schedules is not None and not no_interest:
            self.schedules.stored(seq, subject, hdr, ts)
        if target is not None:
            assert republish is not None
            republish.send(self.js.out, target, subject, seq, ts, last_seq, hdr, payload)
        if self.markers is not None:
            self.markers.arm()
        return b"%b%d%b}" % (self._ack_prefix, seq, counter)

    def store_batch(self, batch_id: bytes, messages: list[BatchMessage]) -> bytes:
        """A checked atomic batch (``atomic_batch``), stored as one mutation; its PubAck."""
        store = self.store
        first = store.last_seq + 1
        if self.config.retention == "interest":  # nobody wants it: the sequence is used up only
            messages = [m if has_interest(self, m[0]) else (*m[:3], SKIP_NO_INTEREST) for m in messages]
        sends = self._batch_republish(messages, first)
        try:
            last, ts = store.append_batch(messages)
        except StoreError as exc:
            return self.error_ack(wrap_error(ApiErrors.JSStreamStoreFailedF, exc))
        msg_id = b""
        for k, (_, hdr, _, _) in enumerate(messages):
            msg_id = slice_header(_MSG_ID, hdr) or b""
            if msg_id:
                self.dedup.record(msg_id, first + k, ts)
        self.last_msg_id = msg_id
        for k, (subject, hdr, _, rollup) in enumerate(messages):  # (the store hook of each message)
            if rollup != SKIP_NO_INTEREST and (hdr or self.schedules is not None):
                self._after_schedule_headers(first + k, subject, hdr, ts)
        if self.watchers:
            self.wake_watchers()
        republish = self.republisher
        if republish is not None:
            for target, seq, last_seq, (subject, hdr, payload, _) in sends:
                republish.send(self.js.out, target, subject, seq, ts, last_seq, hdr, payload)
        if self.markers is not None:
            self.markers.arm()
        batch = dumps(batch_id.decode("utf-8", "replace")).encode()
        return b'%b%d,"batch":%b,"count":%d}' % (self._ack_prefix, last, batch, len(messages))

    def _batch_republish(self, messages: list[BatchMessage], first: int) -> list[tuple[bytes, int, int, BatchMessage]]:
        """What a batch republishes: (target, seq, the subject's previous seq, message)."""
        republish = self.republisher
        if republish is None:
            return []
        sends = []
        last: dict[bytes, int] = {}
        purged = False
        for k, message in enumerate(messages):
            subject, rollup = message[0], message[3]
            seq = first + k
            previous = last.get(subject)
            if previous is None:
                previous = 0 if purged else self.store.last_seq_for_subject(subject)
            target = None if rollup == SKIP_NO_INTEREST else republish.target(subject)
            if target is not None:
                sends.append((target, seq, previous, message))
            if rollup == ROLLUP_ALL:
                last.clear()
                purged = True
            elif rollup == ROLLUP_SUBJECT:
                pass
            last[subject] = seq
        return sends

    def _after_schedule_headers(self, seq: int, subject: bytes, hdr: bytes, ts: int) -> None:
        """A stored message's effect on the schedules: ``Nats-Schedule-Next: purge`` removes
        the schedule message (where purges are allowed), then the table follows."""
        cfg = self.config
        scheduler = purged_schedule(hdr) if hdr and _SCHEDULE in hdr else None
        if scheduler is not None and cfg.allow_rollup_hdrs and not cfg.deny_purge:
            self.store.purge_ex(scheduler, 0, 0)
            if self.schedules is not None:
                self.schedules.forget(scheduler)
        if self.schedules is not None:
            self.schedules.stored(seq, subject, hdr, ts)

    def sync_responders(self) -> None:
        """Make this stream's Direct Get members match its state (``JetStream.sync_responders``):
        the links and peers that change it ask the stream, not the service."""
        self.js.sync_responders(self)

    def wake_watchers(self) -> None:
        """Let the mirrors of this stream copy what is new."""
        for link in list(self.watchers):
            link.pump()

    def _check_headers(self, subject: bytes, hdr: bytes, payload: bytes) -> ApiError | None:
        """The header rules that come before dedup, in the server's order."""
        cfg = self.config
        if _INCR in hdr:  # (a substring test first: most headers have neither)
            error = incr_header_error(hdr, payload, cfg.allow_msg_counter, sourced=False)
            if error is not None:
                return error
        expected_stream = slice_header(_EXPECTED_STREAM, hdr)
        if expected_stream and expected_stream.decode("utf-8", "replace") != cfg.name:
            return api_error(ApiErrors.JSStreamNotMatchErr)
        if not cfg.allow_msg_ttl and _TTL in hdr:
            try:
                ttl = header_ttl(hdr)
            except InvalidTTL:  # refused later, after the other rules (Go ignores the error here)
                ttl = 0
            if ttl:
                return api_error(ApiErrors.JSMessageTTLDisabledErr)
        last_subj_seq = slice_header(_EXPECTED_LAST_SUBJ_SEQ, hdr)
        if last_subj_seq:
            wanted = parse_uint_header(last_subj_seq)
            seq_subject = slice_header(_EXPECTED_LAST_SUBJ_SEQ_SUBJ, hdr) or subject
            last = self.store.load_last(seq_subject)
            actual = last.seq if last is not None else 0
            if actual != wanted:
                return api_error(ApiErrors.JSStreamWrongLastSequenceErrF, seq=actual)
        elif slice_header(_EXPECTED_LAST_SUBJ_SEQ_SUBJ, hdr):
            return api_error(ApiErrors.JSStreamExpectedLastSeqPerSubjectInvalid)
        last_seq = slice_header(_EXPECTED_LAST_SEQ, hdr)
        if last_seq and parse_uint_header(last_seq) != self.store.last_seq:
            return api_error(ApiErrors.JSStreamWrongLastSequenceErrF, seq=self.store.last_seq)
        if _SCHEDULE in hdr:
            error = schedule_error(self, subject, hdr, self.js.clock.now_ns())
            if error is not None:
                return error
        if slice_header(_STREAM_SOURCE, hdr):
            return api_error(ApiErrors.JSMessageSourceHdrNotAllowedErr)
        return None

    # --- JSON views -------------------------------------------------------------------

    def state_json(self, details: bool = False, subjects: dict[str, int] | None = None) -> dict[str, Any]:
        st = self.store.state()
        out: dict[str, Any] = {
            "messages": st.msgs,
            "bytes": st.bytes,
            "first_seq": st.first_seq,
            "first_ts": format_ns(st.first_ts),
            "last_seq": st.last_seq,
            "last_ts": format_ns(st.last_ts),
        }
        if st.num_subjects:
            out["num_subjects"] = st.num_subjects
        if subjects:
            out["subjects"] = subjects
        if details:
            deleted = self.store.detailed_deleted()
            if deleted:
                out["num_deleted"] = len(deleted)
                out["deleted"] = deleted
        elif st.num_deleted:
            out["num_deleted"] = st.num_deleted
        cs = self.consumer_set
        out["consumer_count"] = len(cs.by_name) if cs is not None else 0
        return out

    def info_json(
        self,
        *,
        dynamic_metadata: bool = True,
        details: bool = False,
        subjects: dict[str, int] | None = None,
        domain: bool = True,
        cluster: bool = True,
    ) -> dict[str, Any]:
        """``StreamInfo`` fields: config, created, state, [domain], [cluster], ts."""
        out: dict[str, Any] = {
            "config": config_json(self.config, dynamic_metadata),
            "created": format_ns(self.created_ns),
            "state": self.state_json(details, subjects),
        }
        if domain and self.js.domain:
            out["domain"] = self.js.domain
        if cluster or self.js.clustered or self.js.process_cluster:
            out["cluster"] = self.cluster_json()
        if self.mirror_link is not None:
            out["mirror"] = self.mirror_link.info_json()
        if self.source_links:
            out["sources"] = [link.info_json() for link in self.source_links]
        if cluster and self.js.clustered and self.config.allow_direct:
            alternates = self.js.alternates(self)
            if alternates:
                out["alternates"] = alternates
        out["ts"] = format_ns(self.js.clock.now_ns())
        return out

    def cluster_json(self) -> dict[str, Any]:
        """``ClusterInfo``: the leader alone standalone or for R1; the followers for R>1."""
        js = self.js
        replicas = self.replicas
        if js.process_cluster:  # the metadata leader's R1 stream, as a real cluster's
            return js.route_cluster()
        if not js.clustered:
            return {"leader": js.server_name}
        out: dict[str, Any] = {"name": js.cluster_name}
        if len(replicas.peers) == 1:
            if not replicas.leaderless:
                out["leader"] = replicas.leader.name
            return out
        out["raft_group"] = self.raft_group
        if not replicas.leaderless:
            out["leader"] = replicas.leader.name
            out["leader_since"] = format_ns(replicas.leader_since_ns)
        out["system_account"] = True
        out["traffic_account"] = "$SYS"
        now = js.clock.now_ns()
        followers = []
        for peer in sorted(replicas.peers, key=lambda p: p.name):
            if peer is replicas.leader and not replicas.leaderless:
                continue
            lag = replicas.lag(peer)
            info: dict[str, Any] = {"name": peer.name, "current": lag == 0}
            if peer.offline:
                info["offline"] = True
            info["active"] = replicas.active_ns(peer, now)
            if lag:
                info["lag"] = lag
            info["peer"] = get_hash(peer.name)
            followers.append(info)
        out["replicas"] = followers
        move = self.pending_move
        if move is not None:
            out["desired"] = desired_json(js.cluster_name, move, move.desired)
        return out
