"""Fast batch publish (ADR-50, ``allow_batched``): nats-server 2.15.1's
``processJetStreamFastBatchMsg`` and the ``fastBatch`` state of ``jetstream_batching.go``
for a standalone (R1 or simulated-cluster) stream.

Unlike an atomic batch, nothing is staged: each message is checked on its own
(``checkMsgHeadersPreClusteredProposal`` with a fresh diff) and stored at once, so a batch
that stops half way keeps what it stored. The batch lives in the *reply subject*, not in
headers: ``<prefix>.<id>.<flow>.<gap mode>.<batch seq>.<op>.$FI`` (op 0 start, 1 append,
2 commit, 3 commit with an unstored end-of-batch message, 4 ping). Every answer goes to the
reply subject of the message that caused it:

* the first message gets ``{"type":"ack","seq":0,"msgs":N}`` (how often acks will come);
  later ``{"type":"ack","seq":S,"msgs":N}`` whenever ``N`` more messages are stored, ``N``
  ramping up by doubling (or down by halving) towards ``500 / open batches``, capped by the
  client's flow value;
* a sequence that is not the next one gets ``{"type":"gap","last_seq":E,"seq":S}`` (in
  2.15.1 a backward one too); with gap mode ``fail``, or for any backward gap, the batch then
  ends: the PubAck of what it stored;
* a message refused by a header rule gets ``{"type":"err","seq":S,"error":{...}}`` (and
  with ``fail`` ends the batch); a duplicate ``Nats-Msg-Id`` is skipped silently; the
  first message of a ``fail`` batch gets a plain publish answer instead;
* the commit gets ``{"stream":..,"seq":<last stored>,"batch":<id>,"count":<batch seq>}``.

The bookkeeping is Go's, field for field (``lseq`` highest batch sequence seen, ``pseq``
persisted, ``fseq`` last flow ack, ``pending`` proposed but not stored), because its odd
corners are observable: a message refused after its check (``Nats-Expected-Last-Msg-Id``)
stays *pending* for ever, which delays that batch's acks and commit exactly as on the
binary. Batches are dropped without an advisory after ``BatchLimits.timeout_ns`` of
inactivity on the server's clock, when the stream is deleted or stops allowing them
(``tests/jetstream/api/test_fast_batch.py`` compares every reply with nats-server).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...protocol.gojson import dumps
from ...protocol.gojson.runes import go_quote
from ...protocol.headers import api_level_too_high, remove_header, slice_header
from ..errors import ApiError, ApiErrors, api_error
from ..limits.storage import publish_error

if TYPE_CHECKING:
    from ..clock_timers import Timer
    from .stream import Stream

__all__ = ["FAST_SUFFIX", "FastBatchRequest", "FastBatches", "is_fast_reply", "parse_fast_reply"]

FAST_SUFFIX = b".$FI"
_API_LEVEL = b"Nats-Required-Api-Level"
_MSG_ID = b"Nats-Msg-Id"
_MAX_ID = 64
_OP_START, _OP_APPEND, _OP_COMMIT, _OP_EOB, _OP_PING = range(5)
_MAX_UINT64 = (1 << 64) - 1
_DUPLICATE = ApiErrors.JSAtomicPublishContainsDuplicateMessageErr.err_code


def is_fast_reply(reply: bytes | None) -> bool:
    """Whether a publish with this reply is a fast batch message (Go: longer than 4 bytes and
    ending ``.$FI``)."""
    return reply is not None and len(reply) > 4 and reply.endswith(FAST_SUFFIX)


@dataclass(frozen=True)
class FastBatchRequest:
    """What a fast batch reply subject says (Go's ``FastBatch``)."""

    id: bytes
    seq: int
    flow: int
    gap_ok: bool
    op: int

    @property
    def ping(self) -> bool:
        return self.op == _OP_PING

    @property
    def commit(self) -> bool:
        return self.op in (_OP_COMMIT, _OP_EOB)

    @property
    def eob(self) -> bool:
        return self.op == _OP_EOB


def _go_int64(token: bytes) -> int:
    """Go's ``parseInt64``: -1 unless all ASCII digits (wrapping like an int64)."""
    if not token or not token.isdigit() or not token.isascii():
        return -1
    n = int(token) & _MAX_UINT64
    return n - (1 << 64) if n >= 1 << 63 else n


def parse_fast_reply(reply: bytes) -> FastBatchRequest | None:
    """``getFastBatch`` on a reply :func:`is_fast_reply` accepted: the request, or ``None``
    when the pattern is invalid (answered with 10206)."""
    parts = reply[: -len(FAST_SUFFIX)].split(b".")
    if len(parts) < 6:  # the id needs a prefix before it
        return None
    batch_id, flow_token, gap, seq_token, op_token = parts[-5:]
    op = _go_int64(op_token)
    if not _OP_START <= op <= _OP_PING:
        return None
    if not seq_token.isdigit() or not seq_token.isascii():
        return None
    seq = int(seq_token)
    if seq == 0 or seq >= _MAX_UINT64:
        return None
    if (seq == 1 and op == _OP_EOB) or (op == _OP_START and seq != 1) or (op == _OP_APPEND and seq <= 1):
        return None
    if gap not in (b"fail", b"ok"):
        return None
    flow = _go_int64(flow_token)
    flow = 10 if flow <= 0 else min(flow, 0xFFFF)
    return FastBatchRequest(batch_id, seq, flow, gap == b"ok", op)


@dataclass
class _Batch:
    """Go's ``fastBatch``."""

    gap_ok: bool
    max_ack: int  # the client's flow value
    ack: int = 0  # acks every this many messages
    lseq: int = 0
    sseq: int = 0
    pseq: int = 0
    fseq: int = 0
    pending: int = 0
    commit: bool = False
    timer: Timer | None = None


class FastBatches:
    """The open fast batches of one stream, by batch id."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.open: dict[bytes, _Batch] = {}

    # --- answers ----------------------------------------------------------------------

    def _send(self, reply: bytes, payload: bytes) -> None:
        self.stream.js.send_reply(reply, payload)

    def _pub_ack(self, sseq: int, batch_id: bytes, count: int) -> bytes:
        quoted = go_quote(batch_id).encode()
        return b'%b%d,"batch":%b,"count":%d}' % (self.stream._ack_prefix, sseq, quoted, count)

    def _flow_ack(self, b: _Batch, seq: int, reply: bytes) -> None:
        self._send(reply, b'{"type":"ack","seq":%d,"msgs":%d}' % (seq, b.ack))

    def _gap(self, reply: bytes, expected: int, seq: int) -> None:
        self._send(reply, b'{"type":"gap","last_seq":%d,"seq":%d}' % (expected, seq))

    # --- one message ------------------------------------------------------------------

    def publish(self, subject: bytes, reply: bytes, hdr: bytes, payload: bytes) -> None:
        """A message whose reply ends ``.$FI``; every answer is sent from here."""
        stream = self.stream
        cfg = stream.config
        js = stream.js
        can_respond = not cfg.no_ack

        def refuse(err: ApiError) -> None:
            if can_respond:
                self._send(reply, stream.error_ack(err))

        csubject = subject
        if stream._transform is not None:
            csubject = stream._transform.match(subject) or subject
        if cfg.sealed:
            return refuse(api_error(ApiErrors.JSStreamSealedErr))
        full = publish_error(js, stream, csubject, hdr, payload)
        if full is not None:
            return refuse(full)
        max_size = cfg.max_msg_size
        if max_size >= 0 and (len(hdr) > max_size or len(payload) > max_size - len(hdr)):
            return refuse(api_error(ApiErrors.JSStreamMessageExceedsMaximumErr))
        if not cfg.allow_batched:
            return refuse(api_error(ApiErrors.JSBatchPublishDisabledErr))
        req = parse_fast_reply(reply)
        if req is None:
            return refuse(api_error(ApiErrors.JSBatchPublishInvalidPatternErr))
        if len(req.id) > _MAX_ID:
            return refuse(api_error(ApiErrors.JSBatchPublishInvalidBatchIDErr))
        b = self.open.get(req.id)
        if b is None:
            if req.seq != 1 or req.ping:  # (2.15.1: a ping never opens a batch)
                return refuse(api_error(ApiErrors.JSBatchPublishUnknownBatchIDErr))
            limits = js.batch_limits
            if (
                len(self.open) + 1 > limits.fast_inflight_per_stream
                or js.fast_inflight + 1 > limits.fast_inflight_total
            ):
                return refuse(api_error(ApiErrors.JSBatchPublishTooManyInflight))
            b = self._open(req)
        if hdr and slice_header(_API_LEVEL, hdr):
            if api_level_too_high(hdr, js.api_level):
                self.drop(req.id, b)
                return refuse(api_error(ApiErrors.JSRequiredApiLevelErr))
            hdr = remove_header(hdr, _API_LEVEL)
        if not b.commit:
            self._arm(req.id, b)  # each message restarts the batch's timeout
        if req.ping:
            return self._ping(req, b, reply)
        if b.commit:  # waiting for its last message to be stored: the client waits for the PubAck
            return None
        b.lseq += 1
        if b.lseq != req.seq:
            self._gap(reply, b.lseq, req.seq)
            if b.gap_ok and req.seq > b.lseq:
                b.lseq = req.seq
            else:
                b.lseq -= 1
                self._commit(req.id, b, reply)
                return None
        if req.commit:
            if req.eob:
                b.lseq -= 1
                if b.pending == 0:
                    b.pseq = b.lseq
            self._commit(req.id, b, reply)
            if req.eob:
                return None
        if req.seq == 1 and can_respond and not req.commit:
            self._flow_ack(b, 0, reply)
        checked = stream.batches.check_alone(csubject, hdr, payload)
        if isinstance(checked, ApiError):
            return self._refused(req, b, reply, hdr, checked)
        b.pending += 1
        if stream.store_checked(subject, reply, checked[1], checked[2]):
            self._stored(req, b, reply, stream.store.last_seq)
        return None

    def _ping(self, req: FastBatchRequest, b: _Batch, reply: bytes) -> None:
        """Op 4: resend the last flow ack, or report the gap it reveals."""
        if req.seq > b.lseq:
            self._gap(reply, b.lseq + 1, req.seq + 1)
            if not b.gap_ok:
                self._commit(req.id, b, reply)
                return
            b.lseq = req.seq
            if b.pending == 0:
                b.pseq = b.lseq
            if self._check_flow(b, reply):
                return
        self._flow_ack(b, b.fseq, reply)

    def _refused(self, req: FastBatchRequest, b: _Batch, reply: bytes, hdr: bytes, err: ApiError) -> None:
        """A message its header rules refuse (a duplicate id is skipped instead)."""
        duplicate = err.err_code == _DUPLICATE
        if duplicate:
            if b.pending == 0:
                b.pseq = req.seq
                self._check_flow(b, reply)
            if not req.commit:
                return
        # The message's own gap mode decides here, not the batch's (Go reads ``batch.gapOk``).
        if not req.gap_ok and b.lseq == 1:  # the batch's first message: a publish's answer
            dseq = self.stream.dedup.lookup(slice_header(_MSG_ID, hdr) or b"") if duplicate else None
            if dseq:
                quoted = go_quote(req.id).encode()
                answer = b'%b%d,"duplicate": true,"batch":%b,"count":%d}' % (
                    self.stream._ack_prefix,
                    dseq,
                    quoted,
                    req.seq,
                )
            else:
                answer = self.stream.error_ack(err)
            self.drop(req.id, b)
            self._send(reply, answer)
            return
        if not duplicate:
            error = dumps(err.as_dict()).encode()
            self._send(reply, b'{"type":"err","seq":%d,"error":%b}' % (req.seq, error))
        if req.gap_ok and not req.commit:
            return
        if not duplicate:
            b.lseq -= 1
            if b.pending == 0:
                b.pseq = b.lseq
        self._commit(req.id, b, reply)

    # --- Go's fastBatch helpers ---------------------------------------------------------

    def _open(self, req: FastBatchRequest) -> _Batch:
        b = _Batch(req.gap_ok, req.flow)
        self.open[req.id] = b
        self.stream.js.fast_inflight += 1
        # Alone, the client's pace (up to 500); else start at every message and ramp up.
        b.ack = 1 if len(self.open) > 1 else min(500, b.max_ack)
        return b

    def _arm(self, batch_id: bytes, b: _Batch) -> None:
        js = self.stream.js
        if b.timer is not None:
            b.timer.cancel()
        b.timer = js.timers.at(js.clock.now_ns() + js.batch_limits.timeout_ns, lambda: self.drop(batch_id, b))

    def _stored(self, req: FastBatchRequest, b: _Batch, reply: bytes, sseq: int) -> None:
        """``fastBatchRegisterSequences``: a message of the batch is stored at ``sseq``."""
        if b.pending > 0:
            b.pending -= 1
        b.sseq = sseq
        caught_up = b.pending == 0
        b.pseq = b.lseq if caught_up else req.seq
        if b.lseq == b.pseq and b.commit:
            self.drop(req.id, b)
            if caught_up:
                self._send(reply, self._pub_ack(sseq, req.id, b.lseq))
            elif not self.stream.config.no_ack:  # the stored message's own PubAck
                self._send(reply, self._pub_ack(sseq, req.id, req.seq))
            return
        self._check_flow(b, reply)

    def _check_flow(self, b: _Batch, reply: bytes) -> bool:
        """``checkFlowControl``: a flow ack once ``ack`` more messages are stored."""
        am = b.ack
        if b.pseq < b.fseq + am:
            return False
        b.fseq += (b.pseq - b.fseq) // am * am
        target = min(max(1, 500 // max(1, len(self.open))), b.max_ack)
        if b.ack < target:
            b.ack = min(b.ack * 2, target)
        elif b.ack > target:
            b.ack = max(b.ack // 2, target)
        self._flow_ack(b, b.fseq, reply)
        return True

    def _commit(self, batch_id: bytes, b: _Batch, reply: bytes) -> bool:
        """``fastBatchCommit``: the batch ends; its PubAck now if all it proposed is stored."""
        b.commit = True
        if b.timer is not None:
            b.timer.cancel()
        if b.lseq != b.pseq:
            return False
        self.drop(batch_id, b)
        self._send(reply, self._pub_ack(b.sseq, batch_id, b.lseq))
        return True

    def drop(self, batch_id: bytes, b: _Batch) -> None:
        if self.open.get(batch_id) is b:
            del self.open[batch_id]
            self.stream.js.fast_inflight -= 1
            if b.timer is not None:
                b.timer.cancel()

    def drop_all(self) -> None:
        """The stream is deleted or no longer allows fast batches."""
        for batch_id, b in list(self.open.items()):
            self.drop(batch_id, b)
