"""A deliberately naive model of Go's memStore: one sorted list, every operation a linear walk.

Each method is a direct reading of the Go function named in its docstring, with none of the
indexes of the real store, so the two can only agree if the real store's bookkeeping is right.
The model shares no code with what it checks: subject matching and the header lookup are its
own brute-force versions (only the store's data types and error classes are imported).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from jsemu.store import (
    Clock,
    MaxBytesExceeded,
    MaxMsgsExceeded,
    MaxMsgsPerSubjectExceeded,
    MsgTooLarge,
    SequenceMismatch,
    StoredMsg,
    StoreEOF,
    StoreLimits,
    StoreMsgNotFound,
    StoreState,
    TooManyResults,
    stream_store,
)


def shrink_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the store's size thresholds tiny so its large-store code paths run on a few messages."""
    for name, value in {
        "_SMALL_MAX": 3,  # per-subject array -> SortedList
        "_SMALL_MIN": 2,
        "_TRIM_MIN": 1,  # drop dead slots in front almost at once
        "_SCAN_MIN": 1,  # wildcard lookups fall back to the subject tree after one message...
        "_SCAN_CAP": 0,
        "_FEW_SUBJECTS": 1,  # a filter matching two subjects already takes the walk-then-tree path
        "_SCAN_SHORT": 1,
        "_SCAN_SLOTS": 3,  # ...or three slots
        "_CHUNK": 2,
        "_CHUNK_FIRST": 1,  # a walk's first chunk one slot, then two
        "_PROBE": 1,  # next/prev live go to the dmap after one slot
        "_LIVE_STEP": 1,
        "_SCAN_FROM": 1,  # wildcard lookups scan the joined subjects while the tree is empty...
        "_SCANS_PER_BUILD": 2,  # ...for two scans' worth, then build it
    }.items():
        assert hasattr(stream_store, name), name
        monkeypatch.setattr(stream_store, name, value)


@dataclass
class Rec:
    seq: int
    subject: bytes
    hdr: bytes
    data: bytes
    ts: int

    def msg(self) -> StoredMsg:
        return StoredMsg(self.subject, self.hdr, self.data, self.seq, self.ts)


def matches(filt: bytes, subject: bytes) -> bool:
    """``b""`` and ``b">"`` match everything; otherwise NATS wildcard rules, token by token:
    ``*`` is any one token, a final ``>`` one or more tokens."""
    if filt in (b"", b">"):
        return True
    ftoks, stoks = filt.split(b"."), subject.split(b".")
    if ftoks[-1] == b">":
        ftoks = ftoks[:-1]
        if len(stoks) <= len(ftoks):
            return False
        stoks = stoks[: len(ftoks)]
    return len(ftoks) == len(stoks) and all(f in (b"*", t) for f, t in zip(ftoks, stoks, strict=True))


def has_rollup(hdr: bytes) -> bool:
    """Whether a header block has a ``Nats-Rollup`` line (as a line, any value)."""
    return any(line.startswith(b"Nats-Rollup:") for line in hdr.split(b"\r\n")[1:])


class ModelStore:
    def __init__(self, limits: StoreLimits, clock: Clock, storage: str, first_seq: int) -> None:
        self.limits = replace(limits)
        self.clock = clock
        self.file = storage == "file"
        self.msgs: list[Rec] = []
        if first_seq > 0:
            self.first, self.last = first_seq, first_seq - 1
        else:
            self.first, self.last = 0, 0
        self.last_ts = 0

    # -- helpers
    def size(self, subject: bytes, hdr: bytes, data: bytes) -> int:
        if self.file:
            return 22 + len(subject) + len(data) + 8 + (4 + len(hdr) if hdr else 0)
        return len(subject) + len(hdr) + len(data) + 16

    def rsize(self, r: Rec) -> int:
        return self.size(r.subject, r.hdr, r.data)

    @property
    def nbytes(self) -> int:
        return sum(self.rsize(r) for r in self.msgs)

    def find(self, seq: int) -> Rec | None:
        for r in self.msgs:
            if r.seq == seq:
                return r
        return None

    def _drop(self, seq: int) -> bool:
        for i, r in enumerate(self.msgs):
            if r.seq == seq:
                del self.msgs[i]
                self.first = self.msgs[0].seq if self.msgs else self.last + 1
                return True
        return False

    def expire(self) -> None:
        """expireMsgs: from the first message while ts <= now - max_age."""
        if self.limits.max_age_ns <= 0:
            return
        min_age = self.clock.now_ns() - self.limits.max_age_ns
        while self.msgs and self.msgs[0].ts <= min_age:
            self._drop(self.msgs[0].seq)

    def enforce_limits(self) -> None:
        """enforceMsgLimit + enforceBytesLimit (discard old only)."""
        lim = self.limits
        if lim.discard_new:
            return
        while lim.max_msgs > 0 and len(self.msgs) > lim.max_msgs:
            self._drop(self.msgs[0].seq)
        while lim.max_bytes > 0 and self.nbytes > lim.max_bytes:
            self._drop(self.msgs[0].seq)

    def enforce_per_subject(self, subject: bytes) -> None:
        maxp = self.limits.max_msgs_per_subject
        while maxp > 0:
            mine = [r for r in self.msgs if r.subject == subject]
            if len(mine) <= maxp:
                break
            self._drop(mine[0].seq)

    # -- writes
    def append(self, subject: bytes, hdr: bytes, data: bytes) -> tuple[int, int]:
        """storeRawMsg (+ stream.go's max_msg_size check)."""
        self.expire()
        lim = self.limits
        size = self.size(subject, hdr, data)
        if lim.max_msg_size > 0 and len(hdr) + len(data) > lim.max_msg_size:
            raise MsgTooLarge()
        mine = [r for r in self.msgs if r.subject == subject]
        maxp = lim.max_msgs_per_subject
        asl = maxp > 0 and len(mine) >= maxp
        if lim.discard_new:
            if asl and lim.discard_new_per_subject and not has_rollup(hdr):
                raise MaxMsgsPerSubjectExceeded()
            if lim.max_msgs > 0 and len(self.msgs) >= lim.max_msgs and not asl:
                raise MaxMsgsExceeded()
            over = lim.max_bytes > 0 and self.nbytes + size > lim.max_bytes
            if over and (not asl or self.rsize(mine[0]) < size):
                raise MaxBytesExceeded()
        seq = self.last + 1
        ts = self.clock.now_ns()
        if not self.msgs:
            self.first = seq
        self.msgs.append(Rec(seq, subject, hdr, data, ts))
        self.last = seq
        self.last_ts = ts
        self.enforce_per_subject(subject)
        self.enforce_limits()
        return seq, ts

    def skip_msgs(self, seq: int, num: int, no_interest: bool) -> int:
        """skipMsg / SkipMsgs."""
        self.expire()
        if seq != self.last + 1:
            if seq > 0:
                raise SequenceMismatch()
            seq = self.last + 1
        lseq = seq + num - 1
        if no_interest or self.last_ts == 0:
            self.last_ts = self.clock.now_ns()
        self.last = lseq
        if not self.msgs:
            self.first = lseq + 1
        return lseq

    def remove(self, seq: int) -> bool:
        self.expire()
        if self.file:  # filestore.go removeMsg fails outside the block range
            if seq == 0 or seq < self.first:
                raise StoreMsgNotFound()
            if seq > self.last:
                raise StoreEOF()
        return self._drop(seq)

    def purge(self) -> int:
        """purge(0)."""
        self.expire()
        n = len(self.msgs)
        self.msgs = []
        self.first = self.last + 1
        return n

    def compact(self, seq: int) -> int:
        """compact."""
        self.expire()
        if seq == 0:
            return self.purge()
        if self.first > seq:
            return 0
        if seq <= self.last:
            gone = [r for r in self.msgs if r.seq < seq]
            self.msgs = [r for r in self.msgs if r.seq >= seq]
            self.first = self.msgs[0].seq if self.msgs else self.last + 1
            return len(gone)
        n = len(self.msgs)
        self.msgs = []
        self.first, self.last = seq, seq - 1
        return n

    def purge_ex(self, subject: bytes | None, seq: int, keep: int) -> int:
        """PurgeEx, line by line."""
        self.expire()
        if seq == 1:
            return 0
        filt = subject or b""
        if filt in (b"", b">"):
            if keep == 0 and seq == 0:
                return self.purge()
            if seq > 1:
                return self.compact(seq)
            filt = b">"
        matching = [r for r in self.msgs if matches(filt, r.subject)]
        if not matching:
            return 0
        maxp = 0
        if keep > 0:
            if keep >= len(matching):
                return 0
            maxp = len(matching) - keep
        last = seq - 1 if seq >= 1 else matching[-1].seq
        purged = 0
        for r in matching:
            if r.seq > last:
                break
            self._drop(r.seq)
            purged += 1
            if maxp and purged >= maxp:
                break
        return purged

    def update_limits(self, limits: StoreLimits) -> None:
        """UpdateConfig: msgs, bytes, per subject (when lowered or newly set), then age."""
        self.expire()
        old = self.limits.max_msgs_per_subject
        self.limits = replace(limits)
        self.enforce_limits()
        new = limits.max_msgs_per_subject
        if new > 0 and (old <= 0 or new < old):
            for subject in {r.subject for r in self.msgs}:
                self.enforce_per_subject(subject)
        self.expire()

    # -- reads (callers run expire() first)
    def load(self, seq: int) -> StoredMsg | None:
        r = self.find(seq)
        return r.msg() if r else None

    def load_next(self, filt: bytes, start: int) -> StoredMsg | None:
        for r in self.msgs:
            if r.seq >= start and matches(filt, r.subject):
                return r.msg()
        return None

    def load_prev(self, filt: bytes, start: int) -> StoredMsg | None:
        if not self.msgs or start < self.first:
            return None
        for r in reversed(self.msgs):
            if r.seq <= start and matches(filt, r.subject):
                return r.msg()
        return None

    def load_last(self, filt: bytes) -> StoredMsg | None:
        if filt in (b"", b">"):
            # LoadLastMsg loads the message *at* last_seq.
            r = self.find(self.last)
            return r.msg() if r else None
        for r in reversed(self.msgs):
            if matches(filt, r.subject):
                return r.msg()
        return None

    def num_pending(self, start: int, filt: bytes, lps: bool) -> int:
        hits = [r for r in self.msgs if r.seq >= start and matches(filt, r.subject)]
        return len({r.subject for r in hits}) if lps else len(hits)

    def multi_last_seqs(self, filters: list[bytes], max_seq: int, max_allowed: int) -> list[int]:
        if not self.msgs:
            return []
        if max_seq == 0:
            max_seq = self.last
        out: set[int] = set()
        for filt in filters:
            if not filt:
                continue  # stree.Match matches nothing for an empty filter
            last: dict[bytes, int] = {}
            for r in self.msgs:
                if r.seq <= max_seq and matches(filt, r.subject):
                    last[r.subject] = r.seq
            out.update(last.values())
        if max_allowed > 0 and len(out) > max_allowed:
            raise TooManyResults()
        return sorted(out)

    def subjects_totals(self, filt: bytes) -> dict[bytes, int]:
        out: dict[bytes, int] = {}
        for r in self.msgs:
            if matches(filt, r.subject):
                out[r.subject] = out.get(r.subject, 0) + 1
        return out

    def subjects_state(self, filt: bytes) -> dict[bytes, tuple[int, int, int]]:
        out: dict[bytes, tuple[int, int, int]] = {}
        for r in self.msgs:
            if matches(filt, r.subject):
                n, f, _ = out.get(r.subject, (0, r.seq, 0))
                out[r.subject] = (n + 1, f, r.seq)
        return out

    def seq_from_time(self, ts: int) -> int:
        """GetSeqFromTime, a literal port including the gap walking."""
        by_seq = {r.seq: r for r in self.msgs}
        if not by_seq:
            return self.last + 1
        if ts <= by_seq[self.first].ts:
            return self.first
        lmsg = None
        for lseq in range(self.last, self.first, -1):
            if lseq in by_seq:
                lmsg = by_seq[lseq]
                break
        if lmsg is None:
            return self.last + 1
        if ts == lmsg.ts:
            return lmsg.seq
        if ts > lmsg.ts:
            return self.last + 1
        fseq, lseq, seq = self.first, self.last, self.last + 1
        while fseq <= lseq:
            mid = fseq + (lseq - fseq) // 2
            off = 0
            while True:
                m = by_seq.get(mid + off)
                if m is None:
                    off += 1
                    if mid + off <= lseq:
                        continue
                    break
                break
            if m is None:
                lseq = mid - 1
                continue
            if m.ts >= ts:
                seq = m.seq
                if mid == fseq:
                    break
                lseq = mid - 1
            else:
                fseq = mid + off + 1
        return seq

    def deleted(self) -> list[int]:
        if not self.msgs:
            return []
        live = {r.seq for r in self.msgs}
        return [s for s in range(self.first, self.last + 1) if s not in live]

    def state(self) -> StoreState:
        return StoreState(
            msgs=len(self.msgs),
            bytes=self.nbytes,
            first_seq=self.first,
            first_ts=self.msgs[0].ts if self.msgs else 0,
            last_seq=self.last,
            last_ts=self.last_ts,
            num_subjects=len({r.subject for r in self.msgs}),
            num_deleted=len(self.deleted()),
        )
