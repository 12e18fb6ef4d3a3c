"""The consumer's hot loops without their per-message calls: a stretch of new messages to
one receiver, and a run of plain acks.

``Consumer._pull_run`` / ``_push_run`` and ``process_ack`` handle every case one message at
a time through ``_get_next``, ``_record_delivery``, ``_send`` and ``_record_ack``. In the
common case (``Consumer._stretch_ok``: no redelivery due, no filter, no replay, no priority
group, no fault, no replicas, no ``headers_only`` or ``backoff``; no rate limit; for pull one
waiting request without ``max_bytes``) those calls do the same few things per message, so
these functions do them inline, with the state changes that are the same for every message
of the stretch (clock reading, ack check, ``on_change``, heartbeat deadline) done once.
Anything else returns to the general loop, which then handles exactly what it would have
handled.

They work on the consumer's public state: its position, ack state and floors, and the run's
shared objects (:mod:`.delivery`: the frames still leave through its ``DeliveryRun``, no
second mechanism), read into locals once per stretch and written back at its end.
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, cast

from ..streams.retention import ack_msg
from .ack_kinds import ACK_ACK, ACK_OK
from .delivery import READ_AHEAD

if TYPE_CHECKING:
    from ...server.subscriber import HeaderLens, Payloads, Replies, Subjects
    from .consumer import Consumer
    from .pull_request import PullRequest

__all__ = ["in_order_acks", "new_stretch", "plain_acks"]

#: Fewer acks than this in a run take the per-ack loop (the block's checks cost more).
_BLOCK_MIN = 8
_DSEQ = itemgetter(0)


def new_stretch(c: Consumer, to: bytes, limit: int, npc: int, now: int, wr: PullRequest | None) -> tuple[int, int]:
    """Deliver up to ``limit`` new messages to ``to`` (a pull request's inbox, ``wr``
    counted down, or the deliver subject); returns (messages delivered, ``npc``). Stops
    before a message it cannot hand out as the general loop would (end of stream,
    ``max_ack_pending``, the flow-control window), leaving that to the general loop."""
    cfg = c.config
    store = c.stream.store
    retains = c.stream.retains
    ack_none = cfg.ack_policy == "none"
    maxap = 0 if ack_none else cfg.max_ack_pending
    pending = c.pending
    fmt = c.ack_prefix.replace(b"%", b"%%") + b"1.%d.%d.%d.%d"
    run = c.run
    append = run.towards(to).append
    read_ahead = c.read_ahead
    ahead = read_ahead.entries
    sseq = c.next_stream_seq
    dseq = c.next_consumer_seq
    dmax, smax = c.delivered
    flow = c.flow
    window = flow.window
    # Flow control and ack none on an interest or work-queue stream act after each
    # message: those take the stretch one message at a time.
    slow = bool(window) or (ack_none and retains)
    count = 0
    last = 0
    while count < limit:
        room = limit - count
        if maxap > 0:
            room = min(room, maxap - len(pending))
            if room <= 0:
                break
        if window and flow.sent > window:
            break
        if not slow and (not ahead or read_ahead.resumes_at != sseq):
            # The usual stretch: ``room`` messages as columns, each step a C loop.
            seqs, subjects, bodies, tss = store.live_columns(sseq, room)
            k = len(seqs)
            if not k:
                break
            if npc < 0:
                c.next_stream_seq = seqs[0] + 1
                npc = c.num_pending() + 1
            dseqs = range(dseq, dseq + k)
            replies = list(map(fmt.__mod__, zip(seqs, dseqs, tss, range(npc - 1, npc - 1 - k, -1))))
            npc -= k
            if not ack_none:  # ``_record_delivery``
                if pending.keys().isdisjoint(seqs):
                    pending.update(zip(seqs, map(list, zip(dseqs, repeat(now)))))
                else:
                    for seq, d in zip(seqs, dseqs):
                        p = pending.get(seq)
                        if p is not None:
                            p[1] = now
                        else:
                            pending[seq] = [d, now]
            dseq += k
            if list(map(type, bodies)).count(bytes) == k:
                run.items.extend(zip(subjects, replies, repeat(-1), cast("list[bytes]", bodies)))
            else:
                for subject, reply, body in zip(subjects, replies, bodies):
                    if type(body) is bytes:
                        append((subject, reply, -1, body))
                    else:
                        hdr, data = cast("tuple[bytes, bytes]", body)
                        append((subject, reply, len(hdr), hdr + data))
            last = seqs[-1]
            read_ahead.resumes_at = sseq = last + 1
            count += k
            continue
        if not ahead or read_ahead.resumes_at != sseq:
            ahead = read_ahead.entries = store.live_entries(sseq, READ_AHEAD)
            if not ahead:
                break
            ahead.reverse()
        if slow:
            room = 1
        if room >= len(ahead):
            chunk, ahead = ahead, []
            read_ahead.entries = ahead
        else:
            chunk = ahead[-room:]
            del ahead[-room:]
        chunk.reverse()
        if npc < 0:  # counted once per run, after its first message (the server's ``npc``)
            c.next_stream_seq = chunk[0][0] + 1
            npc = c.num_pending() + 1
        for seq, subject, body, ts in chunk:
            npc -= 1
            reply = fmt % (seq, dseq, ts, npc)
            # ``_record_delivery``; sequences only grow in a stretch, so ``delivered`` is
            # worked out at its end.
            if not ack_none:
                p = pending.get(seq)
                if p is not None:
                    p[1] = now
                else:
                    pending[seq] = [dseq, now]
            elif retains:  # delivered is acked (the stream's ``ackq``); ``needAck`` reads the floor
                if dseq > dmax:
                    c.delivered = c.ack_floor = c.own_ack_floor = (dseq, max(smax, seq))
                c.next_stream_seq, c.next_consumer_seq = seq + 1, dseq + 1
                ack_msg(c.stream, seq)
            dseq += 1
            # ``_send``
            if type(body) is bytes:
                append((subject, reply, -1, body))
            else:
                hdr, data = cast("tuple[bytes, bytes]", body)
                body = hdr + data
                append((subject, reply, len(hdr), body))
            if window:
                flow.sent += len(to) + len(reply) + len(body)
                if not flow.reply and flow.sent > window // 2:
                    c.next_stream_seq, c.next_consumer_seq = seq + 1, dseq
                    c.request_flow_control()
                    append = run.items.append  # the request may have sent the run
        last = chunk[-1][0]
        read_ahead.resumes_at = sseq = last + 1
        count += len(chunk)
    c.next_stream_seq, c.next_consumer_seq = sseq, dseq
    if not count:
        return 0, npc
    c.on_change()
    c.last_delivered_ns = c.waiting_last_ns = now
    c.has_state = True
    if ack_none:
        if dseq - 1 > dmax:
            c.delivered = c.ack_floor = c.own_ack_floor = (dseq - 1, max(smax, last))
    else:
        c.delivered = (max(dmax, dseq - 1), max(smax, last))
        c.check_acks_by(now + cfg.ack_wait)
    if wr is not None:
        wr.remaining -= count
        wr.delivered += count
        if wr.heartbeat:
            wr.heartbeat_due = now + wr.heartbeat
    return count, npc


def plain_acks(c: Consumer, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> bool:
    """``process_ack`` for a run of acks of an ack-explicit consumer without faults or
    sampling: plain acks (empty, ``+ACK`` or ``+OK``, no reply, no headers) inline, any other one
    through ``process_ack`` in its turn. The caller holds delivery until the run ends; returns
    whether delivery must wake then (a plain ack counted while requests wait or for a push
    consumer: room under ``max_ack_pending``)."""
    if len(subjects) >= _BLOCK_MIN and in_order_acks(c, subjects, replies, hdrs, msgs):
        return bool(c.waiting or c.push)
    pending = c.pending
    stream = c.stream
    retains = stream.retains
    process_ack = c.process_ack
    acked = wake = False
    for subject, reply, hdr, msg in zip(subjects, replies, hdrs or repeat(-1), msgs):
        if reply is not None or hdr > 0 or (msg and msg != ACK_ACK and msg != ACK_OK) or c.closed:
            process_ack(subject, reply, hdr, msg)
            continue
        tokens = subject.split(b".")
        try:
            int(tokens[4])  # a bad delivery count makes the ack one of sequence 0, as in ``process_ack``
            sseq, dseq = int(tokens[5]), int(tokens[6])
        except (IndexError, ValueError):
            process_ack(subject, reply, hdr, msg)
            continue
        if sseq >= c.next_stream_seq:
            continue  # not delivered yet: ignored (``_ack``)
        # ``_record_ack`` (explicit)
        acked = True
        p = pending.pop(sseq, None)
        if c.redelivery_counts:
            c.redelivery_counts.pop(sseq, None)
        queue = c.redelivery_queue
        if queue and sseq in queue:
            queue.remove(sseq)
        if p is not None:
            if p[0] > 0 and dseq > p[0]:
                dseq = p[0]
            if not pending:
                c.ack_floor = c.delivered
                c.own_ack_floor = (c.next_consumer_seq - 1, c.next_stream_seq - 1)
            else:
                # ``move_ack_floor`` / ``move_own_ack_floor`` where the next message is pending
                # (acks in order): the floor stops just below it.
                nxt = pending.get(sseq + 1)
                if dseq == c.ack_floor[0] + 1:
                    if nxt is not None and c.delivered[0] > dseq and sseq < c.delivered[1]:
                        c.ack_floor = (nxt[0] - 1, sseq) if nxt[0] > 0 else (dseq, sseq)
                    else:
                        c.move_ack_floor(dseq, sseq)
                if dseq == c.own_ack_floor[0] + 1:
                    if nxt is not None and sseq + 1 < c.next_stream_seq:
                        c.own_ack_floor = (nxt[0] - 1, sseq) if nxt[0] > 0 else (dseq, sseq)
                    else:
                        c.move_own_ack_floor(dseq, sseq)
            if retains:
                ack_msg(stream, sseq)
        if c.waiting or c.push:
            wake = True
    if acked:
        c.on_change()
        c.last_ack_ns = c.js.clock.now_ns()
    return wake


def in_order_acks(c: Consumer, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> bool:
    """The commonest run of acks, handled as one block: plain acks of the messages next
    above both ack floors, in delivery order, with consecutive stream and delivery
    sequences, each pending once and not redelivered. One at a time (``plain_acks``'s
    loop) each such ack pops its message and moves both floors to just below the next
    one, so after the block the floors are where the last ack alone moves them. Checked
    column by column (C loops); returns False, having changed nothing, for any other run."""
    n = len(subjects)
    if c.closed or c.redelivery_counts or c.redelivery_queue:
        return False
    if replies.count(None) != n or (hdrs is not None and max(hdrs) > 0):
        return False
    plain = msgs.count(b"")
    if plain != n and plain + msgs.count(ACK_ACK) + msgs.count(ACK_OK) != n:
        return False
    tokens = b".".join(subjects).split(b".")
    # Every ack subject has nine tokens (the ack subscription's), so the columns line up.
    if len(tokens) != 9 * n or tokens[1::9].count(b"ACK") != n:
        return False
    try:
        for _ in map(int, tokens[4::9]):  # a bad delivery count: ``process_ack``'s case
            pass
        sseqs = list(map(int, tokens[5::9]))
        dseqs = list(map(int, tokens[6::9]))
    except ValueError:
        return False
    dfirst, sfirst = dseqs[0], sseqs[0]
    dlast, slast = dfirst + n - 1, sfirst + n - 1
    if (
        dfirst != c.ack_floor[0] + 1
        or dfirst != c.own_ack_floor[0] + 1
        or slast >= c.next_stream_seq
        or dseqs != list(range(dfirst, dlast + 1))
        or sseqs != list(range(sfirst, slast + 1))
    ):
        return False
    pending = c.pending
    entries = list(map(pending.get, sseqs))
    if entries.count(None) or list(map(_DSEQ, cast("list[list[int]]", entries))) != dseqs:
        return False
    for seq in sseqs:
        del pending[seq]
    # Where the block's last ack, as the loop's last turn, moves the floors.
    c.ack_floor = (dlast - 1, slast - 1)
    c.move_ack_floor(dlast, slast)
    c.own_ack_floor = (dlast - 1, slast - 1)
    c.move_own_ack_floor(dlast, slast)
    stream = c.stream
    if stream.retains:
        for seq in sseqs:
            ack_msg(stream, seq)
    c.on_change()
    c.last_ack_ns = c.js.clock.now_ns()
    return True
