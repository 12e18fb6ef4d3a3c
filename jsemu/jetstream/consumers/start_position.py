"""Where a new consumer starts: nats-server's ``selectStartingSeqNo``.

The deliver policy (or ``opt_start_seq``) names the first stream sequence to look at, then
clamped to the stream's range. ``last_per_subject`` first hands out the last message of each
matching subject, in sequence order, then resumes after the stream's last message as it was
at creation; a stream keeping one message per subject needs no such list, and a list that
holds only the stream's last message is dropped (Go's ``setLeader``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..streams.stream import Stream
    from .config import ConsumerConfig

__all__ = ["StartPosition", "starting_position"]


@dataclass(frozen=True, slots=True)
class StartPosition:
    """The first stream sequence to look at; with ``last_per_subject``, the sequences to hand
    out first and where to resume after them (Go's ``o.lss``)."""

    next_stream_seq: int
    last_per_subject: list[int] | None = None
    resume: int = 0
    #: How many of ``last_per_subject`` the server's ``num_pending`` leaves out (a filter with
    #: a ``*``/``>`` inside a token: the store's ``last_per_subject_counted``).
    uncounted: int = 0


def starting_position(cfg: ConsumerConfig, filters: list[bytes], stream: Stream) -> StartPosition:
    """``selectStartingSeqNo`` for a consumer with ``cfg`` and these (encoded) filters."""
    store = stream.store
    state = store.state()
    first, last = state.first_seq, state.last_seq
    last_per_subject: list[int] | None = None
    resume = uncounted = 0
    if cfg.opt_start_seq == 0:
        if cfg.deliver_policy == "all":
            sseq = first
        elif cfg.deliver_policy == "last":
            if not filters:
                sseq = last
            else:
                sseq = 0
                for f in filters:
                    sm = store.load_last(f)
                    if sm is not None and sm.seq > sseq:
                        sseq = sm.seq
        elif cfg.deliver_policy == "last_per_subject":
            if stream.config.max_msgs_per_subject == 1:
                sseq = first
            else:
                seqs = sorted(store.multi_last_seqs(filters, 0, 0))
                last_per_subject, resume = seqs, last
                uncounted = len(seqs) - store.last_per_subject_counted(filters, seqs)
                sseq = seqs[0] if seqs else last
                if seqs and sseq >= resume:
                    # setLeader drops a skip list that starts where it would resume (only the
                    # stream's last message): the filter alone finds what comes next, so an
                    # in-token `a*` that the tree matched on `ab` delivers nothing.
                    last_per_subject, uncounted = None, 0
        elif cfg.opt_start_time is not None:
            sseq = store.seq_from_time(cfg.opt_start_time)
            if filters:
                nseq = last
                for f in filters:
                    sm = store.load_next(f, first)
                    if sm is not None and sseq <= sm.seq < nseq:
                        nseq = sm.seq
                if sseq < nseq < last:
                    sseq = nseq
        else:
            sseq = last + 1
    else:
        sseq = cfg.opt_start_seq
    if first == 0 and cfg.opt_start_seq == 0:
        sseq = 1
    elif sseq > last and cfg.opt_start_seq == 0:
        sseq = last + 1
    elif sseq < first:
        sseq = first
    return StartPosition(sseq, last_per_subject, resume, uncounted)
