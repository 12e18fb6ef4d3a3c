"""Atomic batch publish (ADR-50, ``allow_atomic``): nats-server 2.15.1's
``processJetStreamAtomicBatchMsg`` for a standalone (R1 or simulated-cluster) stream.

A message with ``Nats-Batch-Id`` is staged, not stored: it is answered with an empty
reply, and only the message with ``Nats-Batch-Commit: 1`` (or ``eob``, which is itself not
stored) runs the consistency checks over the whole batch (``checkMsgHeadersPreClusteredProposal``,
with a staged diff: message ids, counter totals, subjects already written, expected
sequences) and stores it with one :meth:`~jsemu.store.interface.Store.append_batch`, so a
failed batch stores nothing and a log replays a committed one whole. Every error answer
and its order is the binary's (``tests/jetstream/api/test_atomic_batch.py``).

Batches are dropped on a timer on the server's clock (inactivity since their last
message), when the stream is deleted or stops allowing them, and on any error; a timeout, a
gap, too many messages or a required API level also send ``BATCH_ABANDONED`` (as 2.15.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...ids import new_event_id
from ...protocol.gojson import dumps
from ...protocol.headers import api_level_too_high, parse_uint_header, remove_header, slice_header
from ...protocol.msg_ttl import InvalidTTL, header_ttl
from ...store import MaxBytesExceeded, MaxMsgsExceeded, MaxMsgsPerSubjectExceeded, StoreError
from ...store.records import ROLLUP_ALL, ROLLUP_NONE, ROLLUP_SUBJECT, BatchMessage
from ...timefmt import format_ns
from ..errors import ApiError, ApiErrors, api_error, wrap_error
from .counters import INCR, apply_increment, incr_header_error, parse_incr
from .schedules import schedule_error, with_sub_rollup

if TYPE_CHECKING:
    from ..clock_timers import Timer
    from .stream import Stream

__all__ = ["BATCH_ID", "AtomicBatches", "BatchLimits"]

BATCH_ID = b"Nats-Batch-Id"
_BATCH_SEQ = b"Nats-Batch-Sequence"
_BATCH_COMMIT = b"Nats-Batch-Commit"
_API_LEVEL = b"Nats-Required-Api-Level"
_MSG_ID = b"Nats-Msg-Id"
_EXPECTED_STREAM = b"Nats-Expected-Stream"
_EXPECTED_LAST_SEQ = b"Nats-Expected-Last-Sequence"
_EXPECTED_LAST_SUBJ_SEQ = b"Nats-Expected-Last-Subject-Sequence"
_EXPECTED_LAST_SUBJ_SEQ_SUBJ = b"Nats-Expected-Last-Subject-Sequence-Subject"
_EXPECTED_LAST_MSG_ID = b"Nats-Expected-Last-Msg-Id"
_ROLLUP = b"Nats-Rollup"
_TTL = b"Nats-TTL"
_SCHEDULE = b"Nats-Schedule"
_STREAM_SOURCE = b"Nats-Stream-Source"
_MAX_HEADER = 0xFFFF
_MAX_ID = 64  # a longer batch id is invalid
_ABANDONED = "$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED"
_ABANDONED_TYPE = "io.nats.jetstream.advisory.v1.stream_batch_abandoned"


@dataclass
class BatchLimits:
    """The server's batch limits (nats-server's ``streamDefaultMax*Batch*`` defaults)."""

    max_msgs: int = 1000
    inflight_per_stream: int = 50
    inflight_total: int = 1000
    timeout_ns: int = 10_000_000_000
    #: Fast batches (``allow_batched``): ``streamDefaultMaxFastBatchInflight*``.
    fast_inflight_per_stream: int = 1000
    fast_inflight_total: int = 50_000


@dataclass
class _Batch:
    staged: list[tuple[bytes, bytes, bytes]] = field(default_factory=list)
    timer: Timer | None = None


@dataclass
class _Diff:
    """``batchStagedDiff``: what the messages checked so far would change."""

    msg_ids: set[bytes] = field(default_factory=set)
    counters: dict[bytes, tuple[bytes, bytes]] = field(default_factory=dict)
    #: subject -> (messages, bytes) written by the batch so far.
    inflight: dict[bytes, list[int]] = field(default_factory=dict)
    expected: dict[bytes, int] = field(default_factory=dict)


def _batch_seq(hdr: bytes) -> int | None:
    """``getBatchSequence``: ASCII digits, else missing."""
    value = slice_header(_BATCH_SEQ, hdr)
    if not value or not value.isdigit() or len(value) > 20 or int(value) >= 1 << 64:
        return None
    return int(value)


class AtomicBatches:
    """The open atomic batches of one stream, by batch id."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.open: dict[bytes, _Batch] = {}

    # --- staging ----------------------------------------------------------------------

    def publish(self, batch_id: bytes, subject: bytes, hdr: bytes, payload: bytes) -> bytes:
        """One message of batch ``batch_id``: the reply payload (empty while staged, the
        commit's PubAck, or an error ack)."""
        js = self.stream.js
        limits = js.batch_limits
        if len(batch_id) > _MAX_ID:
            return self._error(api_error(ApiErrors.JSAtomicPublishInvalidBatchIDErr))
        seq = _batch_seq(hdr)
        if seq is None:
            return self._error(api_error(ApiErrors.JSAtomicPublishMissingSeqErr))
        commit_value = slice_header(_BATCH_COMMIT, hdr)
        commit = commit_value is not None
        eob = commit_value == b"eob"
        batch = self.open.get(batch_id)
        if batch is None:
            if seq != 1:
                if seq - eob > limits.max_msgs:
                    return self._too_large()
                return self._incomplete()
            if len(self.open) + 1 > limits.inflight_per_stream or js.atomic_inflight + 1 > limits.inflight_total:
                return self._error(api_error(ApiErrors.JSAtomicPublishTooManyInflight))
            batch = _Batch()
            self.open[batch_id] = batch
            js.atomic_inflight += 1
        if commit and not eob and commit_value != b"1":
            self.drop(batch_id)
            return self._error(api_error(ApiErrors.JSAtomicPublishInvalidBatchCommitErr))
        if slice_header(_API_LEVEL, hdr):
            if api_level_too_high(hdr, js.api_level):
                self.abandon(batch_id, "unsupported")
                return self._error(api_error(ApiErrors.JSRequiredApiLevelErr))
            hdr = remove_header(hdr, _API_LEVEL)
        if seq != len(batch.staged) + 1 or (seq == 1 and eob):
            self.abandon(batch_id, "incomplete")
            return self._incomplete()
        if seq - eob > limits.max_msgs:
            self.abandon(batch_id, "large")
            return self._too_large()
        if not eob:
            batch.staged.append((subject, hdr, payload))
        if not commit:
            if batch.timer is not None:
                batch.timer.cancel()  # each message restarts the batch's timeout
            batch.timer = js.timers.at(js.clock.now_ns() + limits.timeout_ns, lambda: self._expire(batch_id, batch))
            return b""
        self.drop(batch_id)
        return self._commit(batch_id, batch.staged, eob)

    def _expire(self, batch_id: bytes, batch: _Batch) -> None:
        if self.open.get(batch_id) is batch:
            self.abandon(batch_id, "timeout")

    def abandon(self, batch_id: bytes, reason: str) -> None:
        """Drop an open batch and say why (``sendStreamBatchAbandonedAdvisory``: a timeout, a
        gap, too many messages, a required API level; not the errors of a commit)."""
        self.drop(batch_id)
        stream = self.stream
        subject = f"{_ABANDONED}.{stream.name}".encode()
        out = stream.js.out
        if out.has_interest(subject):
            event = {"type": _ABANDONED_TYPE, "id": new_event_id(), "timestamp": format_ns(stream.js.clock.now_ns())}
            event["stream"] = stream.name
            if stream.js.domain:
                event["domain"] = stream.js.domain
            event["batch"] = batch_id.decode("utf-8", "replace")
            event["reason"] = reason
            # after the error ack the publish gets (the server answers first)
            stream.js.server.loop.call_soon(out.send_via_sendq, subject, -1, dumps(event).encode())

    def drop(self, batch_id: bytes) -> None:
        batch = self.open.pop(batch_id, None)
        if batch is not None:
            self.stream.js.atomic_inflight -= 1
            if batch.timer is not None:
                batch.timer.cancel()

    def drop_all(self) -> None:
        """The stream is deleted or no longer allows atomic batches."""
        for batch_id in list(self.open):
            self.drop(batch_id)

    def _error(self, err: ApiError) -> bytes:
        return self.stream.error_ack(err)

    def _incomplete(self) -> bytes:
        return self._error(api_error(ApiErrors.JSAtomicPublishIncompleteBatchErr))

    def _too_large(self) -> bytes:
        limit = self.stream.js.batch_limits.max_msgs
        return self._error(api_error(ApiErrors.JSAtomicPublishTooLargeBatchErrF, size=limit))

    # --- the commit -------------------------------------------------------------------

    def _commit(self, batch_id: bytes, staged: list[tuple[bytes, bytes, bytes]], eob: bool) -> bytes:
        stream = self.stream
        store = stream.store
        diff = _Diff()
        checked: list[BatchMessage] = []
        last_seq = store.last_seq
        for k, (subject, hdr, payload) in enumerate(staged):
            if slice_header(_EXPECTED_LAST_MSG_ID, hdr):
                return self._error(
                    api_error(ApiErrors.JSAtomicPublishUnsupportedHeaderBatchErr, header=_EXPECTED_LAST_MSG_ID.decode())
                )
            result = self._check(diff, subject, hdr, payload, last_seq + k)
            if isinstance(result, ApiError):
                return self._error(result)
            checked.append(result)
        if eob:
            subject, hdr, payload, rollup = checked[-1]
            checked[-1] = (subject, hdr[:-2] + b"Nats-Batch-Commit: 1\r\n\r\n", payload, rollup)
        return stream.store_batch(batch_id, checked)

    def check_alone(self, subject: bytes, hdr: bytes, payload: bytes) -> BatchMessage | ApiError:
        """One message's rules on their own (a fast batch's message: a fresh staged diff)."""
        return self._check(_Diff(), subject, hdr, payload, self.stream.store.last_seq)

    def _check(self, diff: _Diff, subject: bytes, hdr: bytes, payload: bytes, clseq: int) -> BatchMessage | ApiError:
        """One message's rules, in ``checkMsgHeadersPreClusteredProposal``'s order; the
        stored form of the message (counter bodies written) or the error."""
        stream = self.stream
        cfg = stream.config
        store = stream.store
        if len(hdr) > _MAX_HEADER:
            return api_error(ApiErrors.JSStreamHeaderExceedsMaximumErr)
        error = incr_header_error(hdr, payload, cfg.allow_msg_counter, sourced=False)
        if error is not None:
            return error
        expected_stream = slice_header(_EXPECTED_STREAM, hdr)
        if expected_stream and expected_stream.decode("utf-8", "replace") != cfg.name:
            return api_error(ApiErrors.JSStreamNotMatchErr)
        try:
            ttl = header_ttl(hdr)
            ttl_error = False
        except InvalidTTL:
            ttl, ttl_error = 0, True
        if ttl or ttl_error:
            if not cfg.allow_msg_ttl:
                return api_error(ApiErrors.JSMessageTTLDisabledErr)
            if ttl_error:
                return api_error(ApiErrors.JSMessageTTLInvalidErr)
        msg_id = slice_header(_MSG_ID, hdr)
        if msg_id:
            if msg_id in diff.msg_ids or stream.dedup.lookup(msg_id) is not None:
                return api_error(ApiErrors.JSAtomicPublishContainsDuplicateMessageErr)
            diff.msg_ids.add(msg_id)
        if slice_header(_STREAM_SOURCE, hdr):
            return api_error(ApiErrors.JSMessageSourceHdrNotAllowedErr)
        if cfg.allow_msg_counter:
            incr = slice_header(INCR, hdr)
            if not incr:
                return api_error(ApiErrors.JSMessageIncrMissingErr)
            last = diff.counters.get(subject)
            if last is None:
                stored = store.load_last(subject)
                last = None if stored is None else (stored.hdr, stored.data)
            counted = apply_increment(last, subject, hdr, payload, parse_incr(incr))
            if isinstance(counted, ApiError):
                return counted
            hdr, payload, _ = counted
            max_size = stream.js.server.options.max_payload
            if 0 <= cfg.max_msg_size < max_size:
                max_size = cfg.max_msg_size
            if len(hdr) > max_size or len(payload) > max_size - len(hdr):
                return api_error(ApiErrors.JSStreamMessageExceedsMaximumErr)
            diff.counters[subject] = (hdr, payload)
        rollup = ROLLUP_NONE
        error = self._expectations(diff, subject, hdr, clseq)
        if error is not None:
            return error
        if _SCHEDULE in hdr:  # (the prefix of every schedule header)
            now = stream.js.clock.now_ns()
            error = schedule_error(stream, subject, hdr, now)
            if error is not None:
                return error
            if cfg.allow_msg_schedules:
                hdr = with_sub_rollup(hdr, now)
        value = slice_header(_ROLLUP, hdr)
        if value:
            if not cfg.allow_rollup_hdrs or cfg.deny_purge:
                return api_error(ApiErrors.JSStreamRollupFailedF, err="rollup not permitted")
            lowered = value.lower()
            if lowered == b"sub":
                if subject in diff.inflight:
                    return api_error(ApiErrors.JSStreamRollupFailedF, err="batch rollup sub invalid")
                rollup = ROLLUP_SUBJECT
            elif lowered == b"all":
                if diff.inflight:
                    return api_error(ApiErrors.JSStreamRollupFailedF, err="batch rollup all invalid")
                rollup = ROLLUP_ALL
            else:
                text = lowered.decode("utf-8", "replace")
                return api_error(ApiErrors.JSStreamRollupFailedF, err=f"rollup value invalid: {dumps(text)}")
        written = diff.inflight.setdefault(subject, [0, 0])
        written[0] += 1
        written[1] += store.msg_size(subject, hdr, payload)
        error = self._discard_new(diff, subject, hdr)
        if error is not None:
            return error
        return subject, hdr, payload, rollup

    def _expectations(self, diff: _Diff, subject: bytes, hdr: bytes, clseq: int) -> ApiError | None:
        """``Nats-Expected-Last-Sequence`` (the first message only) and
        ``Nats-Expected-Last-Subject-Sequence`` (a subject the batch has not written)."""
        store = self.stream.store
        last_seq = slice_header(_EXPECTED_LAST_SEQ, hdr)
        if last_seq:
            if parse_uint_header(last_seq) != clseq:
                return api_error(ApiErrors.JSStreamWrongLastSequenceErrF, seq=clseq)
            if diff.inflight:
                return api_error(ApiErrors.JSStreamWrongLastSequenceConstantErr)
        subj_seq = slice_header(_EXPECTED_LAST_SUBJ_SEQ, hdr)
        if subj_seq:
            wanted = parse_uint_header(subj_seq)
            seq_subject = slice_header(_EXPECTED_LAST_SUBJ_SEQ_SUBJ, hdr) or subject
            if seq_subject in diff.inflight:
                return api_error(ApiErrors.JSStreamWrongLastSequenceConstantErr)
            actual = diff.expected.get(seq_subject)
            if actual is None:
                last = store.load_last(seq_subject)
                actual = last.seq if last is not None else 0
                if actual != wanted:
                    return api_error(ApiErrors.JSStreamWrongLastSequenceErrF, seq=actual)
                diff.expected[seq_subject] = actual
            elif actual != wanted:
                return api_error(ApiErrors.JSStreamWrongLastSequenceErrF, seq=actual)
        elif slice_header(_EXPECTED_LAST_SUBJ_SEQ_SUBJ, hdr):
            return api_error(ApiErrors.JSStreamExpectedLastSeqPerSubjectInvalid)
        return None

    def _discard_new(self, diff: _Diff, subject: bytes, hdr: bytes) -> ApiError | None:
        """With discard new, the whole batch must fit (so no message of it can fail to store)."""
        cfg = self.stream.config
        if cfg.discard != "new":
            return None
        store = self.stream.store
        error: StoreError | None = None
        if cfg.max_msgs > 0 or cfg.max_bytes > 0:
            state = store.state()
            msgs = state.msgs + sum(w[0] for w in diff.inflight.values())
            size = state.bytes + sum(w[1] for w in diff.inflight.values())
            if cfg.max_msgs > 0 and msgs > cfg.max_msgs:
                error = MaxMsgsExceeded()
            elif cfg.max_bytes > 0 and size > cfg.max_bytes:
                error = MaxBytesExceeded()
        per_subject = cfg.discard_new_per_subject and cfg.max_msgs_per_subject > 0
        if error is None and per_subject and not slice_header(_ROLLUP, hdr):
            total = store.subjects_totals(subject).get(subject, 0) + diff.inflight[subject][0]
            if total > cfg.max_msgs_per_subject:
                error = MaxMsgsPerSubjectExceeded()
        return None if error is None else wrap_error(ApiErrors.JSStreamStoreFailedF, error)
