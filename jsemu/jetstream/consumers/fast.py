"""The consumer's hot loops without their per-message calls: a stretch of new messages to
one receiver, and a run of plain acks.

``Consumer._pull_run`` / ``_push_run`` and ``process_ack`` handle every case one message at
a time through ``_get_next``, ``_record_delivery``, ``_send`` and ``_record_ack``. In the
common case (no redelivery due, no filter, no replay, no priority group, no fault, no
``headers_only`` or ``backoff``, no rate limit; for pull one waiting request without
``max_bytes``) those calls do the same few things per message, so these functions do them
inline, with the state changes that are the same for every message of the stretch (clock
reading, ack timer, ``on_change``, heartbeat deadline) done once. Anything else returns to
the general loop, which then handles exactly what it would have handled. The frames still
leave through the run of ``_emit`` / ``Sender.deliver`` (no second mechanism).
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, cast

from ..streams.retention import ack_msg

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .consumer import Consumer
    from .pull_request import PullRequest

__all__ = ["in_order_acks", "new_stretch", "plain_acks", "stretch_ok"]

#: Messages a stretch reads from the store at a time (as ``_read_ahead``).
_READ_AHEAD = 128
_ACK_ACK = b"+ACK"
_ACK_OK = b"+OK"
#: Fewer acks than this in a run take the per-ack loop (the block's checks cost more).
_BLOCK_MIN = 8
_DSEQ = itemgetter(0)


def stretch_ok(c: Consumer) -> bool:
    """Whether the consumer's next messages may take the stretch loop (checked once per
    stretch: nothing it tests changes while a stretch runs)."""
    cfg = c.config
    return not (
        c.rdq
        or c.lss is not None
        or c.filters
        or c._replay
        or c.priority is not None
        or c.faults is not None
        or c.replicas is not None  # each delivery is a record for the replicas (``_record_delivery``)
        or cfg.headers_only
        or cfg.backoff
    )


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
    fmt = c._subject_prefix.replace(b"%", b"%%") + b"1.%d.%d.%d.%d"
    if to != c._run_to:
        c._flush_run()
        c._run_to = to
    append = c._run.append
    ahead = c._ahead
    sseq = c.sseq
    dseq = c.dseq
    dmax, smax = c.delivered
    maxpb = c.maxpb
    # Flow control and ack none on an interest or work-queue stream act after each
    # message: those take the stretch one message at a time.
    slow = bool(maxpb) or (ack_none and retains)
    count = 0
    last = 0
    while count < limit:
        room = limit - count
        if maxap > 0:
            room = min(room, maxap - len(pending))
            if room <= 0:
                break
        if maxpb and c.pbytes > maxpb:
            break
        if not slow and (not ahead or c._ahead_at != sseq):
            # The usual stretch: ``room`` messages as columns, each step a C loop.
            seqs, subjects, bodies, tss = store.live_columns(sseq, room)
            k = len(seqs)
            if not k:
                break
            if npc < 0:
                c.sseq = seqs[0] + 1
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
                c._run.extend(zip(subjects, replies, repeat(-1), cast("list[bytes]", bodies)))
            else:
                for subject, reply, body in zip(subjects, replies, bodies):
                    if type(body) is bytes:
                        append((subject, reply, -1, body))
                    else:
                        hdr, data = cast("tuple[bytes, bytes]", body)
                        append((subject, reply, len(hdr), hdr + data))
            last = seqs[-1]
            c._ahead_at = sseq = last + 1
            count += k
            continue
        if not ahead or c._ahead_at != sseq:
            ahead = c._ahead = store.live_entries(sseq, _READ_AHEAD)
            if not ahead:
                break
            ahead.reverse()
        if slow:
            room = 1
        if room >= len(ahead):
            chunk, ahead = ahead, []
            c._ahead = ahead
        else:
            chunk = ahead[-room:]
            del ahead[-room:]
        chunk.reverse()
        if npc < 0:  # counted once per run, after its first message (the server's ``npc``)
            c.sseq = chunk[0][0] + 1
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
                    c.delivered = c.ack_floor = c.mem_floor = (dseq, max(smax, seq))
                c.sseq, c.dseq = seq + 1, dseq + 1
                ack_msg(c.stream, seq)
            dseq += 1
            # ``_send``
            if type(body) is bytes:
                append((subject, reply, -1, body))
            else:
                hdr, data = cast("tuple[bytes, bytes]", body)
                body = hdr + data
                append((subject, reply, len(hdr), body))
            if maxpb:
                c.pbytes += len(to) + len(reply) + len(body)
                if not c.fcid and c.pbytes > maxpb // 2:
                    c.sseq, c.dseq = seq + 1, dseq
                    c._send_flow_control()
                    append = c._run.append
        last = chunk[-1][0]
        c._ahead_at = sseq = last + 1
        count += len(chunk)
    c.sseq, c.dseq = sseq, dseq
    if not count:
        return 0, npc
    c.on_change()
    c.last_delivered_ns = c.waiting_last_ns = now
    c.has_state = True
    if ack_none:
        if dseq - 1 > dmax:
            c.delivered = c.ack_floor = c.mem_floor = (dseq - 1, max(smax, last))
    else:
        c.delivered = (max(dmax, dseq - 1), max(smax, last))
        wait = cfg.ack_wait
        timer = c._ack_timer
        if timer is None or timer.cancelled or timer.deadline > now + wait:
            c._arm_ack_timer(now + wait)
    if wr is not None:
        wr.n -= count
        wr.d += count
        if wr.hb:
            wr.hbt = now + wr.hb
    return count, npc


def plain_acks(
    c: Consumer,
    subjects: Sequence[bytes],
    replies: Sequence[bytes | None],
    hdrs: Sequence[int] | None,
    msgs: Sequence[bytes],
) -> None:
    """``process_ack`` for a run of acks of an ack-explicit consumer without faults or
    sampling: plain acks (empty, ``+ACK`` or ``+OK``, no reply, no headers) inline, any other one
    through ``process_ack`` in its turn. The caller holds delivery until the run ends."""
    if len(subjects) >= _BLOCK_MIN and in_order_acks(c, subjects, replies, hdrs, msgs):
        return
    pending = c.pending
    stream = c.stream
    retains = stream.retains
    process_ack = c.process_ack
    acked = False
    for subject, reply, hdr, msg in zip(subjects, replies, hdrs or repeat(-1), msgs):
        if reply is not None or hdr > 0 or (msg and msg != _ACK_ACK and msg != _ACK_OK) or c.closed:
            process_ack(subject, reply, hdr, msg)
            continue
        tokens = subject.split(b".")
        try:
            int(tokens[4])  # a bad delivery count makes the ack one of sequence 0, as in ``process_ack``
            sseq, dseq = int(tokens[5]), int(tokens[6])
        except (IndexError, ValueError):
            process_ack(subject, reply, hdr, msg)
            continue
        if sseq >= c.sseq:
            continue  # not delivered yet: ignored (``_ack``)
        # ``_record_ack`` (explicit)
        acked = True
        p = pending.pop(sseq, None)
        if c.rdc:
            c.rdc.pop(sseq, None)
        if c.rdq:
            c._remove_rdq(sseq)
        if p is not None:
            if p[0] > 0 and dseq > p[0]:
                dseq = p[0]
            if not pending:
                c.ack_floor = c.delivered
                c.mem_floor = (c.dseq - 1, c.sseq - 1)
            else:
                # ``_move_floor`` / ``_move_mem_floor`` where the next message is pending
                # (acks in order): the floor stops just below it.
                nxt = pending.get(sseq + 1)
                if dseq == c.ack_floor[0] + 1:
                    if nxt is not None and c.delivered[0] > dseq and sseq < c.delivered[1]:
                        c.ack_floor = (nxt[0] - 1, sseq) if nxt[0] > 0 else (dseq, sseq)
                    else:
                        c._move_floor(dseq, sseq)
                if dseq == c.mem_floor[0] + 1:
                    if nxt is not None and sseq + 1 < c.sseq:
                        c.mem_floor = (nxt[0] - 1, sseq) if nxt[0] > 0 else (dseq, sseq)
                    else:
                        c._move_mem_floor(dseq, sseq)
            if retains:
                ack_msg(stream, sseq)
        if c.waiting or c.push:  # room under max_ack_pending: delivery wakes at the run's end
            c._wake = True
    if acked:
        c.on_change()
        c.last_ack_ns = c.js.clock.now_ns()


def in_order_acks(
    c: Consumer,
    subjects: Sequence[bytes],
    replies: Sequence[bytes | None],
    hdrs: Sequence[int] | None,
    msgs: Sequence[bytes],
) -> bool:
    """The commonest run of acks, handled as one block: plain acks of the messages next
    above both ack floors, in delivery order, with consecutive stream and delivery
    sequences, each pending once and not redelivered. One at a time (``plain_acks``'s
    loop) each such ack pops its message and moves both floors to just below the next
    one, so after the block the floors are where the last ack alone moves them. Checked
    column by column (C loops); returns False, having changed nothing, for any other run."""
    n = len(subjects)
    if c.closed or c.rdc or c.rdq or replies.count(None) != n or (hdrs is not None and max(hdrs) > 0):
        return False
    plain = msgs.count(b"")
    if plain != n and plain + msgs.count(_ACK_ACK) + msgs.count(_ACK_OK) != n:
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
        or dfirst != c.mem_floor[0] + 1
        or slast >= c.sseq
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
    c._move_floor(dlast, slast)
    c.mem_floor = (dlast - 1, slast - 1)
    c._move_mem_floor(dlast, slast)
    stream = c.stream
    if stream.retains:
        for seq in sseqs:
            ack_msg(stream, seq)
    if c.waiting or c.push:  # room under max_ack_pending: delivery wakes at the run's end
        c._wake = True
    c.on_change()
    c.last_ack_ns = c.js.clock.now_ns()
    return True
