"""Direct Get (ADR-31): ``$JS.API.DIRECT.GET.<stream>`` and ``...<stream>.<subject>``.

A stream with ``allow_direct`` answers both subjects as a member of queue group ``_sys_``;
requests are answered inline, the way nats-server answers client requests
(``processDirectGetRequest``, ``processDirectGetLastBySubjectRequest``,
``getDirectRequest`` and ``getDirectMulti`` in ``stream.go``). Replies are header-only
status messages or data messages whose header block is the stored header followed by the
server's ``Nats-*`` lines.

The request JSON is decoded leniently, like Go's ``json.Unmarshal``. The common shapes
(``{"seq":5}``, ``{"last_by_subj":"a"}``) go through Python's C JSON parser; anything that
parser would read differently from Go (case-folded keys, floats, odd strings) takes the
exact Go decoder.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from itertools import repeat
from operator import add
from typing import TYPE_CHECKING, Any, Protocol, cast

from ...protocol.encoder import HMSG_TAIL_SPLIT, hmsg_tail
from ...protocol.gojson import GoJSONError, decode_request, scan_values
from ...protocol.headers import api_level_too_high
from ...protocol.texts import (
    STATUS_BAD_REQUEST,
    STATUS_EMPTY_REQUEST,
    STATUS_EOB,
    STATUS_EOB_UP_TO,
    STATUS_MALFORMED_REQUEST,
    STATUS_NO_RESULTS,
    STATUS_NOT_FOUND,
    STATUS_REQUIRED_API_LEVEL,
    STATUS_TOO_MANY_RESULTS,
)
from ...server.sublist import Subscription
from ...store import Store, StoredMsg, TooManyResults
from ...timefmt import go_unix_nano, stamp
from ...version import API_LEVEL
from ..context import HasAccount, HasSender, HasServer
from ..internal import InternalSubscriber
from ..requests import MSG_GET_REQUEST

if TYPE_CHECKING:
    from ...server.outbound import Sender
    from ...server.subscriber import HeaderLens, Payloads, Replies, Subjects

__all__ = ["DirectGetHost", "DirectGetResponder", "NamedStream", "decode_direct_request"]

SYS_GROUP = b"_sys_"
MAX_MULTI_RESULTS = 1024  # maxAllowedResponses

_PENDING = b"Nats-Num-Pending: %d\r\nNats-Last-Sequence: %d\r\n\r\n"
#: A batch message's header block without stored headers, up to its pending lines (``_plain_run``).
_PLAIN_PREFIX = b"%b%b\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %b\r\n"
_NOT_FOUND_TAIL = hmsg_tail(STATUS_NOT_FOUND, b"")

_UINT64_MAX = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_HEADER_CACHE_MAX = 4096
# Pre-encoded single-message replies kept per responder, and decoded request payloads.
_TAIL_CACHE_MAX = 1 << 16
_PLAN_CACHE_MAX = 1 << 16
_SEQ, _LAST = 0, 1  # fast request plans: (_SEQ, seq) or (_LAST, subject)

# Keys the fast path understands, with the Python type json.loads gives for a valid value.
_FAST_UINT = frozenset(("seq", "up_to_seq"))
_FAST_INT = frozenset(("batch", "max_bytes"))
_FAST_STR = frozenset(("last_by_subj", "next_by_subj"))


def _fast_decode(data: bytes) -> dict[str, Any] | None:
    """Decode with the C parser when the result is certainly what Go would decode; None
    when the request needs the exact decoder."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for key, item in value.items():
        if item is None:
            return None  # null handling differs per field kind; let the Go decoder decide
        if key in _FAST_UINT:
            # Go refuses "-0" for an unsigned field; Python reads it as 0.
            if type(item) is not int or not 0 <= item <= _UINT64_MAX or (item == 0 and b"-" in data):
                return None
        elif key in _FAST_INT:
            if type(item) is not int or not -_INT64_MAX - 1 <= item <= _INT64_MAX:
                return None
        elif key in _FAST_STR:
            if type(item) is not str or not item.isascii():
                return None
        elif key == "no_hdr":
            if type(item) is not bool:
                return None
        else:
            return None  # times, lists, unknown or differently-cased keys
    return value


def decode_direct_request(data: bytes) -> dict[str, Any]:
    """``json.Unmarshal`` into ``JSApiMsgGetRequest``: one JSON value, unknown keys ignored.
    Raises GoJSONError on anything Go rejects."""
    fast = _fast_decode(data)
    if fast is not None:
        return fast
    spans = list(scan_values(data))
    if len(spans) != 1:
        raise GoJSONError("unexpected end of JSON input" if not spans else "invalid character after top-level value")
    return decode_request(data, MSG_GET_REQUEST, strict=False)


def _gen_lines(hdr: bytes, lines: bytes) -> bytes:
    """``genHeader`` applied line by line: the stored block minus its final CRLF, the new
    lines, then CRLF."""
    if len(hdr) > 2:
        return hdr[:-2] + lines + b"\r\n"
    return b"NATS/1.0\r\n" + lines + b"\r\n"


class NamedStream(Protocol):
    """What a responder reads of its stream (``Stream``): the name its replies carry."""

    @property
    def name(self) -> str: ...


class DirectGetHost(HasSender, HasAccount, HasServer, Protocol):
    """What a responder needs of the service (``JetStream``): the way out, the account's
    subscriptions, the server's options, and the log of who answered which request."""

    answers: deque[tuple[bytes, DirectGetResponder]]


class DirectGetResponder:
    """The two ``_sys_`` queue subscriptions of one stream peer and the request handling.

    ``store`` is the store this member reads: the stream's own for an R1 stream, a
    peer's copy for a replica. ``answer_as`` is the stream whose subjects it answers:
    the upstream's name for a mirror with ``mirror_direct``.
    """

    def __init__(
        self,
        js: DirectGetHost,
        stream: NamedStream,
        store: Store,
        peer: str,
        answer_as: str | None = None,
    ) -> None:
        self.js = js
        self.stream = stream
        self.store = store
        self.peer = peer
        name = stream.name.encode()
        #: The stream whose Direct Get subjects this member answers.
        self.answers_for = answer_as or stream.name
        target = self.answers_for.encode()
        #: Which member this is, for the answers log and responder policies.
        self.label = f"{stream.name}/{peer}"
        self._answers = js.answers
        self._stream_line = b"Nats-Stream: " + name + b"\r\nNats-Subject: "
        self._cache: dict[int, bytes] = {}
        #: seq -> (subject, body, ts, reply tail, size): a single-message reply, encoded
        #: once and reused while the sequence holds the very same stored message.
        self._tails: dict[int, tuple[bytes, bytes | tuple[bytes, bytes], int, bytes, int]] = {}
        #: seq -> (subject, stored body or None, ts, header block up to the pending lines, data,
        #: size counted against max_bytes) for batch replies.
        self._prefixes: dict[int, tuple[bytes, object, int, bytes, bytes, int]] = {}
        #: request payload -> its decoded form, for requests the general path serves.
        self._decoded: dict[bytes, dict[str, Any]] = {}
        #: request payload -> fast plan, or None for requests the general path serves.
        self._plans: dict[bytes, tuple[int, Any] | None] = {}
        self._key_at = len(b"$JS.API.DIRECT.GET." + target + b".")
        self._out: Sender = js.out
        self.subs = [
            Subscription(
                InternalSubscriber(self._on_payload, self, fast_batch=self._payload_batch),
                b"$JS.API.DIRECT.GET." + target,
                SYS_GROUP,
                b"$JS.DG",
            ),
            Subscription(
                InternalSubscriber(self._on_subject, self, fast_batch=self._subject_batch),
                b"$JS.API.DIRECT.GET." + target + b".>",
                SYS_GROUP,
                b"$JS.DGS",
            ),
        ]

    def subscribe(self) -> None:
        for sub in self.subs:
            sub.closed = False
            self.js.account.sublist.insert(sub)

    def unsubscribe(self) -> None:
        for sub in self.subs:
            sub.closed = True
            self.js.account.sublist.remove(sub)

    # --- replies ----------------------------------------------------------------------

    def _status(self, reply: bytes, block: bytes) -> None:
        self._out.send(reply, len(block), block)

    # --- runs of requests from a connection's fast lane ----------------------------------

    def _each(self, fn: Any, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> None:
        for subject, reply, hdr, msg in zip(subjects, replies, hdrs or repeat(-1), msgs):
            fn(subject, reply, hdr, msg)

    def _subject_batch(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> None:
        """KV gets in bulk: header-less, empty requests for literal subjects."""
        n = len(subjects)
        if hdrs is None and msgs.count(b"") == n and None not in replies:
            key_at = self._key_at
            keys = [subject[key_at:] for subject in subjects]
            joined = b" ".join(keys)
            if 42 not in joined and 62 not in joined:  # no ``*`` or ``>`` anywhere
                self._answers.extend(zip(subjects, repeat(self)))
                self._reply_seqs(replies, self.store.last_seqs(keys))  # type: ignore[arg-type]
                return
        self._each(self._on_subject, subjects, replies, hdrs, msgs)

    def _payload_batch(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> None:
        """Gets by sequence or last subject in bulk: header-less requests with known plans."""
        if hdrs is None and None not in replies:
            plans = list(map(self._plans.get, msgs, repeat(False)))
            if False in plans:
                plans = [p if p is not False else self._learn_plan(m) for p, m in zip(plans, msgs)]
            if None not in plans:
                self._answers.extend(zip(subjects, repeat(self)))
                last = self.store.last_seq_for_subject
                seqs = [arg if kind == _SEQ else last(arg) for kind, arg in plans]  # type: ignore[misc]
                self._reply_seqs(replies, seqs)  # type: ignore[arg-type]
                return
        self._each(self._on_payload, subjects, replies, hdrs, msgs)

    def _reply_seqs(self, replies: Sequence[bytes], seqs: list[int]) -> None:
        """Answer each request with its message (0 or gone: 404), in order."""
        tails: list[bytes] = []
        sizes: list[int] = []
        get = self._tails.get
        for seq, entry in zip(seqs, self.store.entries(seqs)):
            if entry is None:
                tails.append(_NOT_FOUND_TAIL)
                sizes.append(len(STATUS_NOT_FOUND))
                continue
            cached = get(seq)
            if cached is None or cached[1] is not entry[1] or cached[0] is not entry[0] or cached[2] != entry[2]:
                cached = self._tail(seq, entry)
            tails.append(cached[3])
            sizes.append(cached[4])
        reply = replies[0]
        send_tails = self._out.send_tails
        if replies.count(reply) == len(replies):
            send_tails(reply, tails, sum(sizes))
            return
        for reply, tail, size in zip(replies, tails, sizes):
            send_tails(reply, [tail], size)

    def _tail(
        self, seq: int, entry: tuple[bytes, bytes | tuple[bytes, bytes], int]
    ) -> tuple[bytes, bytes | tuple[bytes, bytes], int, bytes, int]:
        """Encode (and cache) the reply to a single get of message ``seq``."""
        subject, body, ts = entry
        if type(body) is bytes:
            hdr, data = b"", body
        else:
            hdr, data = cast(tuple[bytes, bytes], body)
        block = _gen_lines(
            hdr, b"%b%b\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %b\r\n" % (self._stream_line, subject, seq, stamp(ts))
        )
        cached = (subject, body, ts, hmsg_tail(block, data), len(block) + len(data))
        tails = self._tails
        if len(tails) >= _TAIL_CACHE_MAX:
            tails.clear()
        tails[seq] = cached
        return cached

    def _send_seq(self, reply: bytes, seq: int) -> None:
        """Answer with message ``seq`` and its ``dg`` header, or 404 if it is gone."""
        entry = self.store.entry(seq)
        if entry is None:
            self._status(reply, STATUS_NOT_FOUND)
            return
        cached = self._tails.get(seq)
        if cached is None or cached[1] is not entry[1] or cached[0] is not entry[0] or cached[2] != entry[2]:
            cached = self._tail(seq, entry)
        self._out.send_tails(reply, [cached[3]], cached[4])

    def _single_header(self, sm: StoredMsg) -> bytes:
        """The ``dg`` header of a stored message; built once per sequence and reused."""
        cached = self._cache.get(sm.seq)
        if cached is not None:
            return cached
        lines = self._base_lines(sm)
        block = _gen_lines(sm.hdr, lines)
        cache = self._cache
        if len(cache) >= _HEADER_CACHE_MAX:
            cache.clear()
        cache[sm.seq] = block
        return block

    def _base_lines(self, sm: StoredMsg) -> bytes:
        return b"%b%b\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %b\r\n" % (
            self._stream_line,
            sm.subject,
            sm.seq,
            stamp(sm.ts),
        )

    def _send_msg(self, reply: bytes, sm: StoredMsg, block: bytes | None) -> None:
        if block is None:
            self._out.send(reply, -1, sm.data)
        else:
            self._out.send(reply, len(block), block + sm.data)

    def _batch_prefix(self, seq: int, subject: bytes, hdr: bytes, data: bytes, ts: int) -> bytes:
        """The header block of a batch or multi-last message up to the request's pending
        lines: the stored header and the ``dg`` lines, kept per sequence like single replies."""
        cached = self._prefixes.get(seq)
        if cached is None or cached[4] is not data or cached[0] is not subject or cached[2] != ts:
            cached = self._new_prefix(seq, subject, None, hdr, data, ts)
        return cached[3]

    def _prefix_of(
        self, seq: int, entry: tuple[bytes, bytes | tuple[bytes, bytes], int]
    ) -> tuple[bytes, object, int, bytes, bytes, int]:
        """``_batch_prefix`` for a store entry: (subject, body, ts, prefix, data, size)."""
        cached = self._prefixes.get(seq)
        if cached is None or cached[1] is not entry[1] or cached[0] is not entry[0] or cached[2] != entry[2]:
            subject, body, ts = entry
            hdr, data = (b"", body) if type(body) is bytes else cast(tuple[bytes, bytes], body)
            cached = self._new_prefix(seq, subject, body, hdr, data, ts)
        return cached

    def _new_prefix(
        self, seq: int, subject: bytes, body: object, hdr: bytes, data: bytes, ts: int
    ) -> tuple[bytes, object, int, bytes, bytes, int]:
        lines = b"%b%b\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %b\r\n" % (self._stream_line, subject, seq, stamp(ts))
        prefix = (hdr[:-2] if len(hdr) > 2 else b"NATS/1.0\r\n") + lines
        cached = (subject, body, ts, prefix, data, len(subject) + len(hdr) + len(data))
        prefixes = self._prefixes
        if len(prefixes) >= _TAIL_CACHE_MAX:
            prefixes.clear()
        prefixes[seq] = cached
        return cached

    # --- endpoints --------------------------------------------------------------------

    def _on_payload(self, subject: bytes, reply: bytes | None, hdr_len: int, msg: bytes) -> None:
        if not reply:
            return
        self._answers.append((subject, self))
        if hdr_len < 0:
            # The hot path: a header-less request whose payload was seen before.
            plan = self._plans.get(msg, False)
            if plan is False:
                plan = self._learn_plan(msg)
            if plan is not None:
                kind, arg = plan  # type: ignore[misc]
                seq = arg if kind == _SEQ else self.store.last_seq_for_subject(arg)
                if seq:
                    self._send_seq(reply, seq)
                else:
                    self._status(reply, STATUS_NOT_FOUND)
                return
        self._on_payload_general(reply, hdr_len, msg)

    def _learn_plan(self, data: bytes) -> tuple[int, Any] | None:
        """Decode a header-less request once; requests for one message by sequence or by
        literal subject get a plan the hot path can replay, anything else None."""
        plans = self._plans
        if len(plans) >= _PLAN_CACHE_MAX:
            plans.clear()
        plan: tuple[int, Any] | None = None
        if data:
            try:
                req = decode_direct_request(data)
            except GoJSONError:
                req = {}
            if len(req) == 1:
                seq = req.get("seq")
                last = req.get("last_by_subj")
                if type(seq) is int and seq > 0:
                    plan = (_SEQ, seq)
                elif type(last) is str and last:
                    key = last.encode()
                    if 42 not in key and 62 not in key:  # no ``*`` or ``>``: a literal subject
                        plan = (_LAST, key)
            if plan is None and req:
                self._remember_decoded(data, req)  # for the general path: decoded once, not twice
        plans[data] = plan
        return plan

    def _remember_decoded(self, data: bytes, req: dict[str, Any]) -> None:
        decoded = self._decoded
        if len(decoded) >= _PLAN_CACHE_MAX:
            decoded.clear()
        decoded[data] = req  # read-only from here on

    def _on_payload_general(self, reply: bytes, hdr_len: int, msg: bytes) -> None:
        hdr, data = (msg[:hdr_len], msg[hdr_len:]) if hdr_len > 0 else (b"", msg)
        if hdr and api_level_too_high(hdr, API_LEVEL):
            self._status(reply, STATUS_REQUIRED_API_LEVEL)
            return
        if not data:
            self._status(reply, STATUS_EMPTY_REQUEST)
            return
        req = self._decoded.get(data)
        if req is None:
            try:
                req = decode_direct_request(data)
            except GoJSONError:
                self._status(reply, STATUS_MALFORMED_REQUEST)
                return
            self._remember_decoded(data, req)
        seq = req.get("seq") or 0
        last_for = req.get("last_by_subj") or ""
        next_for = req.get("next_by_subj") or ""
        multi = req.get("multi_last") or []
        start_time = req.get("start_time")
        batch = req.get("batch") or 0
        if seq == 0 and not last_for and not next_for and not multi and start_time is None:
            self._status(reply, STATUS_EMPTY_REQUEST)
            return
        if (
            (seq > 0 and last_for)
            or (seq > 0 and start_time is not None)
            or (start_time is not None and last_for)
            or (last_for and next_for)
            or (last_for and batch > 0)
            or (last_for and multi)
            or (next_for and multi)
            or ((req.get("up_to_seq") or 0) > 0 and req.get("up_to_time") is not None)
        ):
            self._status(reply, STATUS_BAD_REQUEST)
            return
        self._serve(req, reply)

    def _on_subject(self, subject: bytes, reply: bytes | None, hdr_len: int, msg: bytes) -> None:
        if not reply:
            return
        self._answers.append((subject, self))
        key = subject[self._key_at :]
        if hdr_len < 0 and not msg and 42 not in key and 62 not in key:
            # The hot path (a KV get): no payload, a literal subject.
            seq = self.store.last_seq_for_subject(key)
            if seq:
                self._send_seq(reply, seq)
            else:
                self._status(reply, STATUS_NOT_FOUND)
            return
        self._on_subject_general(subject, reply, hdr_len, msg)

    def _on_subject_general(self, subject: bytes, reply: bytes, hdr_len: int, msg: bytes) -> None:
        hdr, data = (msg[:hdr_len], msg[hdr_len:]) if hdr_len > 0 else (b"", msg)
        if hdr and api_level_too_high(hdr, API_LEVEL):
            self._status(reply, STATUS_REQUIRED_API_LEVEL)
            return
        req: dict[str, Any] = {}
        if data:
            try:
                req = decode_direct_request(data)
            except GoJSONError:
                self._status(reply, STATUS_MALFORMED_REQUEST)
                return
        # The key is everything after the fifth token separator.
        parts = subject.split(b".", 5)
        key = parts[5] if len(parts) > 5 else b""
        if (
            not key
            or any(req.get(k) for k in ("last_by_subj", "next_by_subj", "multi_last", "seq", "batch", "up_to_seq"))
            or req.get("start_time") is not None
            or req.get("up_to_time") is not None
        ):
            self._status(reply, STATUS_BAD_REQUEST)
            return
        sm = self.store.load_last(key)
        if sm is None:
            self._status(reply, STATUS_NOT_FOUND)
        elif req.get("no_hdr"):
            self._send_msg(reply, sm, None)
        else:
            self._send_msg(reply, sm, self._single_header(sm))

    # --- reads ------------------------------------------------------------------------

    def _max_bytes(self, req: dict[str, Any]) -> int:
        mb: int = req.get("max_bytes") or 0
        return mb if mb else self.js.server.options.max_pending

    def _answer(self, reply: bytes, tails: list[bytes], size: int, status: bytes) -> None:
        """Send a reply's messages as HMSG tails (``size``: their message bytes in all), then
        the closing ``status`` block if any: one call to the outbound path for the whole
        reply."""
        if status:
            tails.append(hmsg_tail(status, b""))
            size += len(status)
        if tails:
            self._out.send_tails(reply, tails, size)

    def _answer_plain(self, reply: bytes, items: list[tuple[int, bytes]], status: bytes) -> None:
        """``_answer`` for messages without headers (``no_hdr``)."""
        if status:
            items.append((len(status), status))
        self._out.send_messages(reply, items)

    def _serve(self, req: dict[str, Any], reply: bytes) -> None:
        """``getDirectRequest``: single and batch reads."""
        if req.get("multi_last"):
            self._serve_multi(req, reply)
            return
        store = self.store
        start_time = req.get("start_time")
        seq: int = store.seq_from_time(go_unix_nano(start_time)) if start_time is not None else req.get("seq") or 0
        next_for: str = req.get("next_by_subj") or ""
        filt = next_for.encode()
        batch: int = req.get("batch") or 0
        no_hdr = bool(req.get("no_hdr"))
        is_batch = batch != 0
        np = valid_through = 0
        if is_batch:
            np = store.num_pending(seq, filt)
            valid_through = store.last_seq
        else:
            batch = 1
        mb = self._max_bytes(req)
        sent_bytes = lseq = size = 0
        tails: list[bytes] = []
        plain: list[tuple[int, bytes]] = []  # the messages of a no_hdr reply
        if batch > 0 and is_batch and seq > 0 and not next_for and not no_hdr and seq not in self._prefixes:
            # A range not read lately (a bulk read): column by column. One read again (a
            # client polling the same batch) is cheaper from the cached prefixes below.
            run = self._plain_run(seq, batch, np, mb)
            if run is not None:
                tails, size, np, lseq, seq = run
                batch = 0  # done: the status below ends it
        if batch > 0 and is_batch and seq > 0 and not next_for:
            # Every live message from ``seq`` on, fetched in one go.
            for mseq, subject, body, ts in store.live_entries(seq, batch):
                hdr, data = (b"", body) if type(body) is bytes else cast(tuple[bytes, bytes], body)
                seq = mseq + 1
                if no_hdr:
                    plain.append((-1, data))
                else:
                    if np > 0:
                        np -= 1
                    pre = self._batch_prefix(mseq, subject, hdr, data, ts)
                    pending = _PENDING % (np, lseq)
                    hlen = len(pre) + len(pending)
                    dlen = len(data)
                    tails.append(HMSG_TAIL_SPLIT % (hlen, hlen + dlen, pre, pending, data))
                    size += hlen + dlen
                lseq = mseq
                sent_bytes += len(subject) + len(hdr) + len(data)
                if sent_bytes >= mb:
                    break
            if not tails and not plain:
                self._status(reply, STATUS_NOT_FOUND)
                return
            batch = 0  # done: skip the general loop below
        for i in range(batch):
            if seq > 0 and not next_for:
                sm = store.load(seq) if i == 0 and not is_batch else store.load_next(b">", seq)
            elif next_for:
                sm = store.load_next(filt, seq)
            else:
                sm = store.load_last((req.get("last_by_subj") or "").encode())
            if sm is None:
                if batch > 1 and i > 0:
                    break
                self._status(reply, STATUS_NOT_FOUND)
                return
            seq = sm.seq + 1
            if no_hdr:
                plain.append((-1, sm.data))
            else:
                if is_batch:
                    if np > 0:
                        np -= 1
                    pre = self._batch_prefix(sm.seq, sm.subject, sm.hdr, sm.data, sm.ts)
                    pending = _PENDING % (np, lseq)
                else:
                    pre, pending = self._single_header(sm), b""
                hlen = len(pre) + len(pending)
                dlen = len(sm.data)
                tails.append(HMSG_TAIL_SPLIT % (hlen, hlen + dlen, pre, pending, sm.data))
                size += hlen + dlen
            lseq = sm.seq
            sent_bytes += len(sm.subject) + len(sm.hdr) + len(sm.data)
            if sent_bytes >= mb:
                break
        status = b""
        if is_batch:
            if store.last_seq > valid_through:
                np = store.num_pending(seq, filt)
            status = STATUS_EOB % (np, lseq)
        if no_hdr:
            self._answer_plain(reply, plain, status)
        else:
            self._answer(reply, tails, size, status)

    def _plain_run(self, seq: int, batch: int, np: int, mb: int) -> tuple[list[bytes], int, int, int, int] | None:
        """A batch of messages without stored headers, built column by column (the bulk read
        of a stream, e.g. by the Spark pipeline): the same frames as the loop below, without
        its per-message calls and caches. None (the loop's turn) for anything else: stored
        headers, nothing to send, or ``max_bytes`` reached before the run's end."""
        seqs, subjects, bodies, tss = self.store.live_columns(seq, batch)
        n = len(seqs)
        if n < 2 or tuple in map(type, bodies) or sum(map(len, subjects)) + sum(map(len, bodies)) >= mb:
            return None
        # The loop counts pending down from ``np`` (never below 0) and names the previous message.
        pending = [max(np - k, 0) for k in range(1, n + 1)] if np < n else range(np - 1, np - 1 - n, -1)
        last_seqs = [0, *seqs[: n - 1]]
        head = b"NATS/1.0\r\n" + self._stream_line
        prefixes = [_PLAIN_PREFIX % (head, subject, mseq, stamp(ts)) for subject, mseq, ts in zip(subjects, seqs, tss)]
        lines = list(map(_PENDING.__mod__, zip(pending, last_seqs)))
        tails = [
            HMSG_TAIL_SPLIT % (len(p) + len(q), len(p) + len(q) + len(d), p, q, d)
            for p, q, d in zip(prefixes, lines, bodies)
        ]
        # Kept as the loop keeps them, so a range read again comes from the cache.
        cache = self._prefixes
        if len(cache) + n > _TAIL_CACHE_MAX:
            cache.clear()
        sizes = map(add, map(len, subjects), map(len, bodies))
        cache.update(zip(seqs, zip(subjects, bodies, tss, prefixes, bodies, sizes)))
        size = sum(map(len, prefixes)) + sum(map(len, lines)) + sum(map(len, bodies))
        return tails, size, max(np - n, 0), seqs[-1], seqs[-1] + 1

    def _serve_multi(self, req: dict[str, Any], reply: bytes) -> None:
        """``getDirectMulti``: the last message of each matching subject, ascending."""
        store = self.store
        mb = self._max_bytes(req)
        up_to: int = req.get("up_to_seq") or 0
        up_to_time = req.get("up_to_time")
        if up_to_time is not None:
            up_to = store.seq_from_time(go_unix_nano(up_to_time))
            if up_to <= store.first_seq:
                self._status(reply, STATUS_NO_RESULTS)
                return
            up_to -= 1
        if up_to == 0:
            up_to = store.last_seq
        filters = [f.encode() for f in req["multi_last"]]
        try:
            seqs = store.multi_last_seqs(filters, up_to, MAX_MULTI_RESULTS)
        except TooManyResults:
            self._status(reply, STATUS_TOO_MANY_RESULTS)
            return
        if not seqs:
            self._status(reply, STATUS_NO_RESULTS)
            return
        min_seq: int = req.get("seq") or 0
        batch: int = req.get("batch") or 0
        np = len(seqs)
        lseq = sent = sent_bytes = size = 0
        tails: list[bytes] = []
        for seq, entry in zip(seqs, store.entries(seqs)):
            np -= 1
            if seq < min_seq:
                continue
            if entry is None:
                self._answer(reply, tails, size, STATUS_NOT_FOUND)
                return
            _, _, _, pre, data, nbytes = self._prefix_of(seq, entry)
            pending = _PENDING % (np, lseq)
            hlen = len(pre) + len(pending)
            dlen = len(data)
            tails.append(HMSG_TAIL_SPLIT % (hlen, hlen + dlen, pre, pending, data))
            size += hlen + dlen
            lseq = seq
            sent_bytes += nbytes
            if sent_bytes >= mb:
                break
            sent += 1
            if batch > 0 and sent >= batch:
                break
        self._answer(
            reply,
            tails,
            size,
            STATUS_EOB_UP_TO % (np, lseq, up_to),
        )
