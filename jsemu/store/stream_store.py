"""In-memory stream store with the semantics of nats-server's ``memStore`` (server/memstore.go).

Layout, chosen so that every operation is O(log n) or better in the stream size and a stored
message costs little Python heap:

* Messages by sequence live in parallel slot lists that start at sequence ``_base``: the subject
  (the one shared ``bytes`` object of that subject, ``None`` once deleted), the body (``data``, or
  ``(hdr, data)`` when there are headers) and the timestamp in an ``array('q')``. Sequences below
  ``_first`` are dead and dropped from the front in amortised O(1).
* ``_dmap`` holds the interior deleted sequences in ``[first, last]`` (Go's ``dmap``) in a
  ``SortedList``; with it, "next live sequence", "live count from a sequence" and the time
  search cross runs of deletes in O(log n) steps instead of walking them.
* Each subject has a ``_Subj`` with its ordered sequences: a compact ``array('Q')`` while small,
  a ``SortedList`` when large. Subjects are found by a dict (literals) and a ``SubjectTree``
  (wildcards).

Expiry by ``max_age`` and by per-message TTL (``Nats-TTL``, kept in a heap of deadlines) is driven
by the clock: every public method first runs an O(1) check of the first message's timestamp and of
the earliest TTL deadline, so there are no timers. With subject delete markers the stream carries
expiry out instead (``expiry_due``, ``next_expiry``), since removing the last message of a subject
then stores a marker through the stream's publish path.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from heapq import heappop, heappush, merge
from itertools import compress, islice, repeat
from operator import is_, mul
from typing import Protocol, cast

from sortedcontainers import SortedList  # type: ignore[import-untyped]

from ..protocol.headers import slice_header
from ..protocol.msg_ttl import NEVER, InvalidTTL, header_ttl
from ..subjects import is_subset_match_tokens
from .clock import Clock, SystemClock
from .column_snapshot import Columns
from .errors import (
    MaxBytesExceeded,
    MaxMsgsExceeded,
    MaxMsgsPerSubjectExceeded,
    MsgTooLarge,
    SequenceMismatch,
    TooManyResults,
)
from .go_stree import match_keys
from .in_token_pending import memstore_pending
from .interface import Body, StoredMsg, StoreState
from .limits import StoreLimits
from .records import (
    ROLLUP_ALL,
    ROLLUP_SUBJECT,
    SKIP_NO_INTEREST,
    Append,
    AppendBatch,
    BatchMessage,
    Compact,
    LastTime,
    Purge,
    PurgeEx,
    Record,
    Remove,
    Skip,
    SkipMany,
    UpdateLimitsAt,
    batched,
    local_mutation,
    mutator,
)
from .subject_scan import joined, scan, scannable
from .subject_tree import SubjectTree, is_literal, paused_gc

__all__ = ["MemoryStore", "StreamStore"]

_FWC = b">"
_STAR = b"*"
_ROLLUP = b"Nats-Rollup"
_MSG_TTL = b"Nats-TTL"

# Bulk appends leave messages this large to ``append`` (the file store refuses records above
# 32 MiB, filestore.go ``rlBadThresh``, and ``append`` checks it).
_BULK_MAX = 32 * 1024 * 1024 - 1024

# A subject's sequences are an array('Q') up to _SMALL_MAX entries (cheap: 8 bytes each, no int
# objects); above that a SortedList keeps removals O(log n). Back to an array below _SMALL_MIN.
_SMALL_MAX = 2048
_SMALL_MIN = 512

# Dead slots in front of ``_first`` are dropped once there are this many and they are at least half.
_TRIM_MIN = 1024

# Wildcard next/prev lookups first walk the slots, checking at most this many live messages (plus one
# per subject, capped) and _SCAN_SLOTS slots, before asking the subject tree: a short walk wins when
# the next match is near, the tree when it is far. Dead slots are skipped _CHUNK at a time in C.
_SCAN_MIN = 64
_SCAN_CAP = 4096
_SCAN_SLOTS = 65536
_CHUNK = 4096
_CHUNK_FIRST = 64

# Whether a subject met by a wildcard walk matches its filter, remembered for this many filters and
# subjects each (a verdict never goes stale: it depends on the two names alone).
_VERDICT_FILTERS = 64
_VERDICT_SUBJECTS = 4096

# Multi-last filters remembered with their subjects (for at most this many subjects each).
_MEMO_MAX_FILTERS = 256
_MEMO_MAX_SUBJECTS = 4096

# A wildcard filter matching at most _FEW_SUBJECTS subjects is looked up in their indexes
# straight after a walk over _SCAN_SHORT live messages finds nothing; once such a filter is known
# (in the match memo) to match at most _SCAN_SHORT subjects, their indexes are asked first.
_FEW_SUBJECTS = 64
_SCAN_SHORT = 16

# While the subject tree is empty and at least _SCAN_FROM subjects wait for it, wildcard lookups
# scan the joined subjects instead of building it (see subject_scan.py: ~10x cheaper than a build
# for one lookup); once the scans have read _SCANS_PER_BUILD times the subjects there are, the
# next lookup builds the tree, so repeated lookups cost at most about twice what building at once
# would have (the rent-or-buy rule).
_SCAN_FROM = 32768
_SCANS_PER_BUILD = 8

# _next_live/_prev_live look at this many neighbouring slots before searching the dmap.
_PROBE = 32

# First chunk of slots _live_from copies (doubling up to _CHUNK): the next live slot is usually close.
_LIVE_STEP = 16


class _SortedSeqs(Protocol):
    """The part of ``SortedList`` used here (the package ships no type information)."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> int: ...
    def __delitem__(self, index: int | slice) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def bisect_left(self, value: int) -> int: ...
    def bisect_right(self, value: int) -> int: ...
    def add(self, value: int) -> None: ...
    def update(self, values: Iterable[int]) -> None: ...
    def remove(self, value: int) -> None: ...
    def clear(self) -> None: ...


def _sorted_list(values: Iterable[int] = ()) -> _SortedSeqs:
    return cast(_SortedSeqs, SortedList(values))


class _Subj:
    """Per-subject index: the shared subject bytes and its ordered live sequences."""

    __slots__ = ("seqs", "subject")

    def __init__(self, subject: bytes, seq: int) -> None:
        self.subject = subject
        self.seqs: array[int] | _SortedSeqs = array("Q", (seq,))


def _bl(seqs: array[int] | _SortedSeqs, x: int) -> int:
    if type(seqs) is array:
        return bisect_left(seqs, x)
    return cast(_SortedSeqs, seqs).bisect_left(x)


def _br(seqs: array[int] | _SortedSeqs, x: int) -> int:
    if type(seqs) is array:
        return bisect_right(seqs, x)
    return cast(_SortedSeqs, seqs).bisect_right(x)


@lru_cache(maxsize=1024)
def _has_in_token_wildcard(filter: bytes) -> bool:
    """True when some token holds ``*`` or ``>`` without being exactly ``*`` or ``>`` (``m.0*``)."""
    if _STAR not in filter and _FWC not in filter:
        return False
    return any(tok not in (_STAR, _FWC) and (_STAR in tok or _FWC in tok) for tok in filter.split(b"."))


def _count_pending(matched: Iterable[tuple[bytes, _Subj]], start: int, last_per_subject: bool) -> int:
    """Messages at or after ``start`` on the ``matched`` subjects (or, ``last_per_subject``,
    the subjects whose last message is)."""
    total = 0
    for _, st in matched:
        seqs = st.seqs
        if seqs[-1] < start:
            continue
        if last_per_subject:
            total += 1
        elif seqs[0] >= start:
            total += len(seqs)
        else:
            total += len(seqs) - _bl(seqs, start)
    return total


def _sum_max(lens: array[int]) -> tuple[int, int]:
    """The total and the largest of ``lens``, at once when they are all the same."""
    if lens.count(lens[0]) == len(lens):
        return lens[0] * len(lens), lens[0]
    return sum(lens), max(lens)


def _match_tokens(ftoks: list[bytes], subject: bytes) -> bool:
    """Whether literal ``subject`` matches the tokenised filter (``*`` one token, ``>`` the rest)."""
    stoks = subject.split(b".")
    ns = len(stoks)
    for i, ft in enumerate(ftoks):
        if ft == _FWC:
            return ns > i
        if i >= ns:
            return False
        if ft != _STAR and ft != stoks[i]:
            return False
    return ns == len(ftoks)


class _RecordClock:
    """The latest time the records a store applied carried (``StreamStore.apply``)."""

    __slots__ = ("ns",)

    def __init__(self) -> None:
        self.ns = 0

    def now_ns(self) -> int:
        return self.ns


class StreamStore:
    """One stream's messages with memstore semantics; see the module docstring for the layout.

    The shared implementation of :class:`MemoryStore` and :class:`~.file_store.FileStore`;
    create stores with :func:`~jsemu.store.new_store`. A flavour differs in the class
    attributes below and in the methods it overrides, never in checks made by callers.
    Every public method is a read (:class:`~.interface.StoreReader`) or a registered
    mutation (:mod:`.records`).
    """

    #: ``StreamConfig.storage`` of this flavour.
    STORAGE = "memory"
    #: A header-less message's accounted size minus ``len(subject) + len(data)``.
    _OVERHEAD = 16
    #: Added to the size when a message has headers (beyond their length).
    _HDR_EXTRA = 0
    #: Larger records are refused with ``MsgTooLarge("file_record")`` before ``max_msg_size``.
    _RECORD_MAX = 1 << 62
    # (Copied into slots by __init__: an instance reads a slot faster than a class attribute.)

    __slots__ = (
        "_age_clock",
        "_base",
        "_blob",
        "_blob_at",
        "_body",
        "_bytes",
        "_clock",
        "_dmap",
        "_first",
        "_fss",
        "_hdr_size",
        "_hdrs_seen",
        "_last",
        "_last_ts",
        "_limits",
        "_match_memo",
        "_max_age",
        "_maxp",
        "_msgs",
        "_never",
        "_overhead",
        "_record_clock",
        "_record_max",
        "_scanned",
        "_self_expire",
        "_subj",
        "_timed",
        "_tree",
        "_tree_pending",
        "_ts",
        "_ttl_on",
        "_ttls",
        "_unlimited",
        "_verdicts",
    )

    def __init__(
        self,
        limits: StoreLimits | None = None,
        clock: Clock | None = None,
        first_seq: int = 1,
    ) -> None:
        """``first_seq`` is the stream's ``first_seq`` config: >0 behaves like Go's ``purge(first_seq)``
        at creation; 0 (Go's unset) leaves first/last at 0 until the first message, as a new stream shows.
        """
        self._unlimited = False
        self._overhead = self._OVERHEAD
        self._hdr_size = self._OVERHEAD + self._HDR_EXTRA
        self._record_max = self._RECORD_MAX
        self._clock: Clock = clock if clock is not None else SystemClock()
        #: The clock max_age and TTL expiry read: the store's, or while a logged record is
        #: applied, the latest time the applied records carried (``apply``).
        self._age_clock = self._clock
        self._record_clock = _RecordClock()
        self._limits = replace(limits) if limits is not None else StoreLimits()
        self._maxp = 0
        self._max_age = 0
        #: (deadline ns, seq) of each message with a TTL; entries of removed messages linger
        #: until they come up.
        self._ttls: list[tuple[int, int]] = []
        #: Sequences with ``Nats-TTL: never``: max_age passes them by.
        self._never: set[int] = set()
        self._apply_cached_limits()
        self._subj: list[bytes | None] = []
        self._body: list[Body | None] = []
        self._ts: array[int] = array("q")
        self._fss: dict[bytes, _Subj] = {}
        self._tree: SubjectTree[_Subj] = SubjectTree()
        # New subjects join the tree when a wildcard lookup next needs it, not on the
        # publish path (see _wtree).
        self._tree_pending: list[_Subj] = []
        # Scans in place of the tree (_match): the joined subjects, as of how many pending
        # subjects, and how many subjects the scans have read since the tree was last empty.
        self._blob: bytes | None = None
        self._blob_at = 0
        self._scanned = 0
        # Wildcard filter -> its subjects, while the set of subjects stays the same.
        self._match_memo: dict[bytes, list[tuple[bytes, _Subj]]] = {}
        self._verdicts: dict[bytes, dict[bytes, bool]] = {}
        self._dmap: _SortedSeqs = _sorted_list()
        self._msgs = 0
        self._bytes = 0
        self._last_ts = 0
        #: Whether a message with headers was ever stored (never reset: only "no" is a promise).
        self._hdrs_seen = False
        if first_seq > 0:
            self._first = first_seq
            self._last = first_seq - 1
        else:
            self._first = 0
            self._last = 0
        self._base = self._last + 1

    # ------------------------------------------------------------------ helpers

    def _apply_cached_limits(self) -> None:
        lim = self._limits
        self._maxp = max(0, lim.max_msgs_per_subject)
        self._max_age = max(0, lim.max_age_ns)
        self._ttl_on = lim.allow_msg_ttl
        self._self_expire = not lim.stream_expires
        # Whether reads and writes must first check for expired messages.
        self._timed = self._self_expire and (self._max_age > 0 or bool(self._ttls))
        # No limit of any kind: append_plain may skip every check.
        self._unlimited = (
            lim.max_msgs <= 0
            and lim.max_bytes <= 0
            and lim.max_age_ns <= 0
            and lim.max_msgs_per_subject <= 0
            and lim.max_msg_size <= 0
        )

    def msg_size(self, subject: bytes, hdr: bytes, data: bytes) -> int:
        """Bytes accounted for a message: Go ``memStoreMsgSize`` or ``fileStoreMsgSize``."""
        return self._size(len(subject), len(hdr), len(data))

    def _size(self, slen: int, hlen: int, dlen: int) -> int:
        return slen + hlen + dlen + (self._hdr_size if hlen else self._overhead)

    def _body_size(self, subject: bytes, body: Body) -> int:
        if type(body) is bytes:
            return self._size(len(subject), 0, len(body))
        hdr, data = cast(tuple[bytes, bytes], body)
        return self._size(len(subject), len(hdr), len(data))

    def _make(self, seq: int) -> StoredMsg:
        i = seq - self._base
        subject = self._subj[i]
        body = self._body[i]
        assert subject is not None and body is not None
        if type(body) is bytes:
            return StoredMsg(subject, b"", body, seq, self._ts[i])
        hdr, data = cast(tuple[bytes, bytes], body)
        return StoredMsg(subject, hdr, data, seq, self._ts[i])

    def _wtree(self) -> SubjectTree[_Subj]:
        """The subject tree for wildcard lookups, with the subjects added since the last one."""
        pending = self._tree_pending
        if pending:
            fss = self._fss
            with paused_gc():  # up to a million new nodes, no garbage
                if 4 * len(self._tree) <= len(pending):
                    # Mostly new (the first lookup, typically): build the whole tree again from
                    # the index, in one pass; dropping a tree of more would cost more than topping it up.
                    self._tree = SubjectTree()
                    self._tree.insert_many(fss.items())
                else:
                    # Only those still indexed (not removed, not replaced since).
                    get = fss.get
                    self._tree.insert_many([(st.subject, st) for st in pending if get(st.subject) is st])
            pending.clear()
            self._blob = None
        return self._tree

    def _match(self, filter: bytes, limit: int = 0) -> Iterable[tuple[bytes, _Subj]]:
        """``(subject, index)`` of each subject ``filter`` matches, from the subject tree, or
        while the tree is empty and many subjects wait for it, from a scan of the joined
        subjects (see _SCAN_FROM). With ``limit`` > 0, a scan may stop after that many (the
        tree's lazy iterator costs nothing for the ones not taken)."""
        pending = self._tree_pending
        fss = self._fss
        if (
            len(pending) < _SCAN_FROM
            or len(self._tree)
            or self._scanned > _SCANS_PER_BUILD * len(fss)
            or not scannable(filter)
        ):
            return self._wtree().match(filter)
        # The tree is empty, so every live subject is pending: the blob holds the subjects
        # indexed when it was joined, and those pending since are added to it. A subject
        # removed since is skipped below; one removed and stored again is found once.
        blob = self._blob
        if blob is None:
            blob = joined(fss, len(fss))
        elif self._blob_at < len(pending):
            more = pending[self._blob_at :]
            tail = joined([st.subject for st in more], len(more))
            blob = None if tail is None else blob + tail[1:]
        if blob is None:  # a subject holding a newline: only the tree can tell
            self._scanned = _SCANS_PER_BUILD * len(fss) + 1
            return self._wtree().match(filter)
        self._blob = blob
        self._blob_at = len(pending)
        subjects, read = scan(blob, filter, limit)
        self._scanned += len(fss) * read // len(blob)
        get = fss.get
        found: dict[bytes, _Subj] = {}
        for subject in subjects:
            st = get(subject)
            if st is not None:
                found[subject] = st
        if limit > 0 and len(found) < len(subjects):  # stale or repeated ones took places
            return self._match(filter)
        return found.items()

    def _is_live(self, seq: int) -> bool:
        return self._msgs > 0 and self._first <= seq <= self._last and self._subj[seq - self._base] is not None

    def _next_live(self, x: int) -> int:
        """Smallest live sequence >= x (x in [first, last]); last+1 if none.

        Nearby slots are checked directly; a longer run of deletes is crossed by galloping over the
        dmap, O(log run * log n).
        """
        base, subj = self._base, self._subj
        hi = min(self._last, x + _PROBE - 1)
        for k in compress(range(x, hi + 1), subj[x - base : hi - base + 1]):
            return k
        if hi == self._last:
            return hi + 1
        d = self._dmap
        i = d.bisect_left(x)  # d[i] == x: every dead slot in [first, last] is in the dmap
        n = len(d)
        # Find the end of the consecutive run d[i] == x, d[i+1] == x+1, ...
        step, good = 1, i
        while good + step < n and d[good + step] == x + (good + step - i):
            good += step
            step <<= 1
        lo, hi_ = good, min(n - 1, good + step)
        while lo < hi_:
            m = (lo + hi_ + 1) >> 1
            if d[m] - m == x - i:
                lo = m
            else:
                hi_ = m - 1
        return x + (lo - i) + 1

    def _prev_live(self, x: int) -> int:
        """Largest live sequence <= x (x in [first, last]); first-1 if none (same approach as _next_live)."""
        base, subj = self._base, self._subj
        lo_seq = max(self._first, x - _PROBE + 1)
        for k in compress(range(x, lo_seq - 1, -1), reversed(subj[lo_seq - base : x - base + 1])):
            return k
        if lo_seq == self._first:
            return lo_seq - 1
        d = self._dmap
        i = d.bisect_left(x)
        step, good = 1, i
        while good - step >= 0 and d[good - step] == x - (i - good + step):
            good -= step
            step <<= 1
        lo, hi = max(0, good - step), good
        while lo < hi:
            m = (lo + hi) >> 1
            if x - d[m] == i - m:
                hi = m
            else:
                lo = m + 1
        return x - (i - lo) - 1

    def _live_from(self, seq: int) -> Iterator[int]:
        """Live sequences >= seq, ascending, skipping dead slots in C in growing chunks.

        Only for use before the next mutation. Used where the walk is paid for by first_seq moving
        past the walked slots, so it stays amortised O(1) per sequence.
        """
        base, subj = self._base, self._subj
        i, end, step = seq - base, len(subj), _LIVE_STEP
        while i < end:
            hi = min(end, i + step)
            yield from compress(range(base + i, base + hi), subj[i:hi])
            i = hi
            step = min(step << 1, _CHUNK)

    def _reset_empty(self, first: int, last: int) -> None:
        """No messages left: drop every slot and index (Go: new msgs map, fss and empty dmap)."""
        self._first = first
        self._last = last
        self._base = last + 1
        self._subj = []
        self._body = []
        self._ts = array("q")
        self._fss = {}
        self._tree = SubjectTree()
        self._tree_pending = []
        self._blob = None
        self._scanned = 0
        self._match_memo.clear()
        self._verdicts.clear()
        self._dmap.clear()
        self._msgs = 0
        self._bytes = 0
        self._never.clear()

    def _advance_first(self) -> None:
        """The first message went away: move to the next live one (Go ``updateFirstSeq``)."""
        if self._msgs == 0:
            self._reset_empty(self._last + 1, self._last)
            return
        subj = self._subj
        j = self._first - self._base + 1
        if subj[j] is None:  # usually the very next slot is live (discard old, expiry)
            j = next(self._live_from(self._first)) - self._base
        new_first = self._base + j
        d = self._dmap
        if d:
            k = d.bisect_left(new_first)
            if k:
                del d[:k]
        self._first = new_first
        if j > _TRIM_MIN and 2 * j > len(subj):
            del subj[:j]
            del self._body[:j]
            del self._ts[:j]
            self._base = new_first

    def _unindex(self, subject: bytes, seq: int) -> None:
        st = self._fss[subject]
        seqs = st.seqs
        n = len(seqs)
        if n == 1:
            del self._fss[subject]
            self._match_memo.clear()
            self._tree.remove(subject)
            return
        if seqs[0] == seq:
            del seqs[0]
        elif seqs[-1] == seq:
            del seqs[-1]
        elif type(seqs) is array:
            del seqs[bisect_left(seqs, seq)]
        else:
            cast(_SortedSeqs, seqs).remove(seq)
        if n <= _SMALL_MIN and type(seqs) is not array:
            st.seqs = array("Q", seqs)

    def _unindex_many(self, subject: bytes, removed: list[int]) -> None:
        """Drop ascending ``removed`` from a subject; a prefix (the usual case) goes in one slice."""
        st = self._fss[subject]
        seqs = st.seqs
        n, m = len(seqs), len(removed)
        if m == n:
            del self._fss[subject]
            self._match_memo.clear()
            self._tree.remove(subject)
            return
        if seqs[m - 1] == removed[-1]:
            del seqs[:m]
        elif type(seqs) is array:
            for seq in reversed(removed):
                del seqs[bisect_left(seqs, seq)]
        else:
            sl = cast(_SortedSeqs, seqs)
            for seq in removed:
                sl.remove(seq)
        if n - m < _SMALL_MIN and type(seqs) is not array:
            st.seqs = array("Q", seqs)

    def _remove_one(self, seq: int) -> bool:
        """Go ``removeMsg``: False when ``seq`` is not a stored message."""
        if not self._msgs or seq < self._first or seq > self._last:
            return False
        i = seq - self._base
        subject = self._subj[i]
        if subject is None:
            return False
        body = self._body[i]
        assert body is not None
        self._subj[i] = None
        self._body[i] = None
        self._msgs -= 1
        self._bytes -= self._body_size(subject, body)
        self._unindex(subject, seq)
        if seq == self._first:
            self._advance_first()
        else:
            self._dmap.add(seq)
        return True

    def _remove_batch(self, seqs: Iterable[int]) -> int:
        """Remove many live messages given in ascending order; one first/dmap update at the end."""
        base, subj, body = self._base, self._subj, self._body
        per_subj: dict[bytes, list[int]] = {}
        removed: list[int] = []
        nbytes = 0
        for seq in seqs:
            i = seq - base
            subject = subj[i]
            b = body[i]
            if subject is None or b is None:
                continue
            subj[i] = None
            body[i] = None
            nbytes += self._body_size(subject, b)
            lst = per_subj.get(subject)
            if lst is None:
                per_subj[subject] = [seq]
            else:
                lst.append(seq)
            removed.append(seq)
        if not removed:
            return 0
        self._msgs -= len(removed)
        self._bytes -= nbytes
        for subject, lst in per_subj.items():
            self._unindex_many(subject, lst)
        if self._msgs == 0:
            self._reset_empty(self._last + 1, self._last)
            return len(removed)
        if subj[self._first - base] is None:
            self._advance_first()
        first = self._first
        interior = [s for s in removed if s > first]
        if interior:
            self._dmap.update(interior)
        return len(removed)

    # ------------------------------------------------------------------ expiry

    def _tick(self) -> None:
        """O(1): is the oldest message past max_age, or a TTL up? Then expire (Go ``expireMsgs``
        on its timer)."""
        if not self._timed:
            return
        max_age = self._max_age
        if max_age and self._msgs:
            min_age = self._age_clock.now_ns() - max_age
            if self._ts[self._first - self._base] <= min_age:
                self._expire(min_age)
        ttls = self._ttls
        if ttls and ttls[0][0] <= self._age_clock.now_ns():
            for seq in self._pop_due_ttls():
                self._remove_one(seq)

    def _aged(self, min_age: int) -> list[int]:
        """Live sequences from the front with ``ts <= min_age``, less those that never expire."""
        never = self._never
        base, ts = self._base, self._ts
        out = []
        for seq in self._live_from(self._first):
            if ts[seq - base] > min_age:
                break
            if seq not in never:
                out.append(seq)
        return out

    def _expire(self, min_age: int) -> int:
        # Go walks from the first message and stops at the first one with ts > now-maxAge,
        # passing over those with a "never" TTL.
        if self._never:
            return sum(self._remove_one(seq) for seq in self._aged(min_age))
        n = 0
        while self._msgs and self._ts[self._first - self._base] <= min_age:
            self._remove_one(self._first)
            n += 1
        return n

    def _pop_due_ttls(self) -> list[int]:
        """Sequences whose TTL is up and that are still stored, ascending (Go sorts the wheel's)."""
        now = self._age_clock.now_ns()
        ttls = self._ttls
        due = []
        while ttls and ttls[0][0] <= now:
            seq = heappop(ttls)[1]
            if self._is_live(seq):
                due.append(seq)
        due.sort()
        return due

    def _schedule_ttl(self, seq: int, ts: int, hdr: bytes) -> None:
        """Go ``storeRawMsg``: a stored message with a TTL joins the wheel while TTLs are
        allowed; ``never`` is noted either way (Go's max_age walk reads it from the header)."""
        try:
            ttl = header_ttl(hdr)
        except InvalidTTL:
            return
        if ttl > 0 and self._ttl_on:
            heappush(self._ttls, (ts + ttl * 1_000_000_000, seq))
            self._timed = self._self_expire
        elif ttl == NEVER:
            self._never.add(seq)

    @local_mutation
    def expire(self) -> int:
        """Remove messages with ``ts <= now - max_age`` from the front and those whose TTL is
        up; returns how many."""
        if not self._timed or not self._msgs:
            return 0
        n = self._expire(self._age_clock.now_ns() - self._max_age) if self._max_age else 0
        return n + sum(self._remove_one(seq) for seq in self._pop_due_ttls())

    @local_mutation
    def expiry_due(self) -> list[int]:
        """For a stream that expires its messages itself (``stream_expires``): the stored
        sequences past max_age (in order), then those whose TTL is up (ascending), as Go's
        ``expireMsgs`` visits them. TTL entries handed out leave the schedule."""
        due = self._aged(self._age_clock.now_ns() - self._max_age) if self._max_age and self._msgs else []
        seen = set(due)
        due += [seq for seq in self._pop_due_ttls() if seq not in seen]
        return due

    def next_expiry(self) -> int:
        """The clock time (ns) at which ``expiry_due`` next has something, 0 if never."""
        ttls = self._ttls
        while ttls and not self._is_live(ttls[0][1]):
            heappop(ttls)
        deadline = ttls[0][0] if ttls else 0
        if self._max_age and self._msgs:
            aged = self._first
            if self._never:
                aged = next((s for s in self._live_from(self._first) if s not in self._never), 0)
            if aged:
                at = self._ts[aged - self._base] + self._max_age
                deadline = min(deadline, at) if deadline else at
        return deadline

    # ------------------------------------------------------------------ writes

    @mutator(Append)
    def append(self, subject: bytes, hdr: bytes, data: bytes, ts: int = 0) -> tuple[int, int]:
        """Store a message, enforcing limits like memstore ``storeRawMsg`` with ``discardNewCheck``.

        ``ts`` (ns) is the message's timestamp when it is a copy (replicas, mirrors); 0 means now.

        Returns (seq, ts). Raises MsgTooLarge, or with discard new MaxMsgsPerSubjectExceeded /
        MaxMsgsExceeded / MaxBytesExceeded under exactly Go's conditions.
        """
        if type(subject) is not bytes:
            subject = bytes(subject)
        if type(hdr) is not bytes:
            hdr = bytes(hdr)
        if type(data) is not bytes:
            data = bytes(data)
        if not subject:
            raise ValueError("a stream message needs a subject")
        if self._timed:
            self._tick()
        lim = self._limits
        hlen, dlen = len(hdr), len(data)
        size = len(subject) + hlen + dlen + (self._hdr_size if hlen else self._overhead)
        # stream.go processJetStreamMsg: the file-store record check comes first, then max_msg_size.
        if size > self._record_max:
            raise MsgTooLarge("file_record")
        if lim.max_msg_size > 0 and hlen + dlen > lim.max_msg_size:
            raise MsgTooLarge("max_msg_size")

        st = self._fss.get(subject)
        maxp = self._maxp
        asl = st is not None and maxp > 0 and len(st.seqs) >= maxp
        if lim.discard_new:
            if asl and lim.discard_new_per_subject and not slice_header(_ROLLUP, hdr):
                raise MaxMsgsPerSubjectExceeded()
            if lim.max_msgs > 0 and self._msgs >= lim.max_msgs and not asl:
                raise MaxMsgsExceeded()
            if lim.max_bytes > 0 and self._bytes + size > lim.max_bytes:
                if not asl:
                    raise MaxBytesExceeded()
                # At the subject limit the subject's first message goes; is it at least as big?
                assert st is not None
                fseq = st.seqs[0]
                fi = fseq - self._base
                fsubj, fbody = self._subj[fi], self._body[fi]
                assert fsubj is not None and fbody is not None
                if self._body_size(fsubj, fbody) < size:
                    raise MaxBytesExceeded()

        seq = self._last + 1
        if not ts:
            ts = self._clock.now_ns()
        if self._msgs == 0:
            self._restart_at(seq)
        self._subj.append(subject if st is None else st.subject)
        if hlen:
            self._body.append((hdr, data))
            self._hdrs_seen = True
        else:
            self._body.append(data)
        self._ts.append(ts)
        self._msgs += 1
        self._bytes += size
        self._last = seq
        self._last_ts = ts

        if st is None:
            st = _Subj(subject, seq)
            self._fss[subject] = st
            self._tree_pending.append(st)
            if self._match_memo:
                self._match_memo.clear()
        else:
            seqs = st.seqs
            if type(seqs) is array:
                seqs.append(seq)
                if len(seqs) > _SMALL_MAX:
                    st.seqs = _sorted_list(seqs)
            else:
                cast(_SortedSeqs, seqs).add(seq)
            if maxp and len(st.seqs) > maxp:
                self._enforce_per_subject(st)

        if hlen and _MSG_TTL in hdr:
            self._schedule_ttl(seq, ts, hdr)
        if not lim.discard_new and (lim.max_msgs > 0 or lim.max_bytes > 0):
            self._enforce_msg_limit()
            self._enforce_bytes_limit()
        return seq, ts

    @batched(Append)
    def append_plain(self, subject: bytes, data: bytes) -> int:
        """``append(subject, b"", data)[0]`` for the publish path (``bytes`` arguments only):
        through ``append_columns`` when no limit applies, else ``append``."""
        if self.append_columns((subject,), (data,)):
            return self._last
        return self.append(subject, b"", data)[0]

    @batched(Append)
    def append_columns(self, subjects: Sequence[bytes], datas: Sequence[bytes]) -> bool:
        """``append(subject, b"", data)`` for each pair, in order, or nothing (False) unless no
        limit of any kind is configured, the store is not empty and every subject is non-empty.

        The publish hot path: sequences are consecutive from ``last_seq + 1``, each message
        gets its own timestamp, and the bookkeeping is done once for the whole run.
        """
        if not self._unlimited or not self._msgs or b"" in subjects or max(map(len, datas)) > _BULK_MAX:
            return False
        fss = self._fss
        get = fss.get
        pending = self._tree_pending
        shared: list[bytes] = []
        add = shared.append
        seq = self._last
        before = len(fss)
        for subject in subjects:
            seq += 1
            st = get(subject)
            if st is None:
                st = fss[subject] = _Subj(subject, seq)
                pending.append(st)
                add(subject)
                continue
            seqs = st.seqs
            if type(seqs) is array:
                seqs.append(seq)
                if len(seqs) > _SMALL_MAX:
                    st.seqs = _sorted_list(seqs)
            else:
                cast(_SortedSeqs, seqs).add(seq)
            add(st.subject)  # one shared bytes object per subject
        if self._match_memo and len(fss) != before:
            self._match_memo.clear()
        now = self._clock.now_ns
        stamps = [now() for _ in shared]
        count = len(shared)
        self._subj += shared
        self._body += datas
        self._ts.extend(stamps)
        self._msgs += count
        self._bytes += sum(map(len, shared)) + sum(map(len, datas)) + count * self._overhead
        self._last = seq
        self._last_ts = stamps[-1]
        return True

    @batched(Append)
    def append_run(self, subjects: list[bytes], hdrs: list[bytes], datas: list[bytes], tss: list[int]) -> bool:
        """``append(subject, hdr, data, ts)`` for each message of a replayed log's run of
        ``Append`` records, or nothing (False) unless the end state cannot depend on the
        order of the limits' removals (then each goes through ``append``). Every message is
        stored, then the limits are applied once: with only ``max_msgs`` / ``max_bytes``,
        ``append`` keeps the longest suffix that fits, and so does one pass at the end; with
        only ``max_msgs_per_subject``, each subject's newest. Not taken: discard new (a
        message could be refused), ``max_age`` or TTLs (expiry between appends), both
        kinds of limit at once (a removal for bytes that the subject limit would have made
        unnecessary), a message with a ``Nats-TTL`` header or that could be too big."""
        n = len(subjects)
        lim = self._limits
        if (
            not n
            or lim.discard_new
            or self._timed
            or self._max_age
            or (self._maxp and (lim.max_msgs > 0 or lim.max_bytes > 0))
            or b"" in subjects
            or 0 in tss
        ):
            return False
        joined_hdrs = b"".join(hdrs)
        if _MSG_TTL in joined_hdrs:
            return False
        hmax, dmax = max(map(len, hdrs)), max(map(len, datas))
        if max(map(len, subjects)) + hmax + dmax + self._hdr_size > self._record_max or (
            lim.max_msg_size > 0 and hmax + dmax > lim.max_msg_size
        ):
            return False
        seq = self._last + 1
        if self._msgs == 0:
            self._restart_at(seq)
        fss = self._fss
        get = fss.get
        new_subjects = self._tree_pending
        before = len(fss)
        shared: list[bytes] = []
        add = shared.append
        grown: dict[_Subj, list[int]] = {}
        if subjects.count(subjects[0]) == n:
            # One subject (a one-subject stream's log, the usual tail of a killed server's): its
            # index grows by one range, no pass per message (measured: replaying 1,000,000
            # appends on one subject, 0.33 -> 0.08 s of CPU).
            subject = subjects[0]
            st = get(subject)
            first = seq
            if st is None:
                fss[subject] = st = _Subj(subject, seq)
                new_subjects.append(st)
                first += 1
            if first < seq + n:
                grown[st] = list(range(first, seq + n))
            shared += repeat(st.subject, n)
            seq += n
        else:
            for subject in subjects:
                st = get(subject)
                if st is None:
                    fss[subject] = st = _Subj(subject, seq)
                    new_subjects.append(st)
                    add(subject)
                else:
                    more = grown.get(st)
                    if more is None:
                        grown[st] = [seq]
                    else:
                        more.append(seq)
                    add(st.subject)  # one shared bytes object per subject
                seq += 1
        for st, more in grown.items():
            seqs = st.seqs
            if type(seqs) is array:
                seqs.extend(more)
                if len(seqs) > _SMALL_MAX:
                    st.seqs = _sorted_list(seqs)
            else:
                cast(_SortedSeqs, seqs).update(more)
        if self._match_memo and len(fss) != before:
            self._match_memo.clear()
        with_hdr = n - hdrs.count(b"")
        if with_hdr:
            self._hdrs_seen = True
        self._subj += shared
        self._body += [(h, d) if h else d for h, d in zip(hdrs, datas)] if with_hdr else datas
        self._ts.extend(tss)
        self._msgs += n
        self._bytes += (
            sum(map(len, shared))
            + len(joined_hdrs)
            + sum(map(len, datas))
            + with_hdr * self._hdr_size
            + (n - with_hdr) * self._overhead
        )
        self._last = seq - 1
        self._last_ts = tss[-1]
        if self._maxp:
            for st in grown:
                if len(st.seqs) > self._maxp:
                    self._enforce_per_subject(st)
        if lim.max_msgs > 0 or lim.max_bytes > 0:
            self._enforce_msg_limit()
            self._enforce_bytes_limit()
        return True

    @batched(Columns)
    def load_columns(self, run: Columns) -> bool:
        """The chunk's messages stored at their sequences (``run.appends`` one by one, with
        the skips between them), in bulk: the slot columns extended by whole lists, each
        subject's index by one array slice. Only where nothing can judge a message (no
        limit of any kind, as a compacted log replays them) and the chunk starts past the
        last sequence (right after it when the store is empty); False (nothing done)
        otherwise. Dead slots between the messages join the dmap, as skips would."""
        seqs = run.seqs
        n = len(seqs)
        lim = self._limits
        start = self._last + 1
        first = seqs[0]
        if (
            not self._unlimited
            or lim.discard_new
            or self._timed
            or first < start
            or (not self._msgs and first != start)
        ):
            return False
        hdrs, hlens, dlens = run.hdrs, run.hdr_lens, run.data_lens
        table = run.table
        dsum, dmax = _sum_max(dlens)
        hsum, hmax = _sum_max(hlens) if hlens is not None else (0, 0)
        if max(map(len, table)) + hmax + dmax + self._hdr_size > self._record_max:
            return False
        if not self._msgs:
            self._restart_at(first)
        subjects = run.subjects()
        bodies = run.bodies()
        if hdrs is not None:
            self._hdrs_seen = True
        last = seqs[-1]
        span = last - start + 1
        if span == n:  # no gaps: the columns as they are
            self._subj += subjects
            self._body += bodies
            self._ts.extend(run.tss)
        else:
            subj_slots: list[bytes | None] = [None] * span
            body_slots: list[Body | None] = [None] * span
            ts_slots = array("q", bytes(8 * span))
            for seq, subject, body, ts in zip(seqs, subjects, bodies, run.tss):
                i = seq - start
                subj_slots[i] = subject
                body_slots[i] = body
                ts_slots[i] = ts
            self._dmap.update(compress(range(start, last + 1), map(is_, subj_slots, repeat(None))))
            self._subj += subj_slots
            self._body += body_slots
            self._ts.extend(ts_slots)
        fss = self._fss
        grouped = run.grouped if run.grouped is not None else seqs
        at = 0
        new = False
        if not fss and len(table) == n:  # one message per subject (a KV bucket's values): no slices
            made = list(map(_Subj, table, seqs))
            fss.update(zip(table, made))
            self._tree_pending += made
            new = True
        for subject, count in zip(table if not new else (), run.counts):
            mine = grouped[at : at + count]
            at += count
            st = fss.get(subject)
            if st is None:
                st = fss[subject] = _Subj(subject, 0)
                st.seqs = mine if count <= _SMALL_MAX else _sorted_list(mine)
                self._tree_pending.append(st)
                new = True
                continue
            seqs_of = st.seqs
            if type(seqs_of) is array:
                seqs_of.extend(mine)
                if len(seqs_of) > _SMALL_MAX:
                    st.seqs = _sorted_list(seqs_of)
            else:
                cast(_SortedSeqs, seqs_of).update(mine)
        if new and self._match_memo:
            self._match_memo.clear()
        with_hdr = n - hlens.count(0) if hlens is not None else 0
        self._msgs += n
        self._bytes += (
            sum(map(mul, map(len, table), run.counts))
            + hsum
            + dsum
            + with_hdr * self._hdr_size
            + (n - with_hdr) * self._overhead
        )
        self._last = last
        self._last_ts = run.tss[-1]
        if with_hdr and hdrs is not None:
            for seq, hdr, ts in zip(seqs, hdrs, run.tss):
                if hdr and _MSG_TTL in hdr:
                    self._schedule_ttl(seq, ts, hdr)
        return True

    def _restart_at(self, seq: int) -> None:
        """An empty store takes its next message at ``seq``: the columns start over there."""
        self._first = seq
        if self._subj:
            self._subj = []
            self._body = []
            self._ts = array("q")
        self._base = seq

    def _enforce_per_subject(self, st: _Subj) -> None:
        maxp = self._maxp
        while maxp and len(st.seqs) > maxp:
            if not self._remove_one(st.seqs[0]):
                break

    def _enforce_msg_limit(self) -> None:
        lim = self._limits
        if lim.discard_new or lim.max_msgs <= 0:
            return
        while self._msgs > lim.max_msgs:
            self._remove_one(self._first)

    def _enforce_bytes_limit(self) -> None:
        lim = self._limits
        if lim.discard_new or lim.max_bytes <= 0:
            return
        while self._bytes > lim.max_bytes and self._msgs:
            self._remove_one(self._first)

    @mutator(AppendBatch)
    def append_batch(self, messages: list[BatchMessage], ts: int = 0) -> tuple[int, int]:
        """A committed atomic batch as one mutation (one record for a log), each message
        stored like :meth:`append` and then its rollup applied, as nats-server's commit
        loop does. The publish path checked every limit for the whole batch first.

        Returns (last seq, ts); ``ts`` is every message's timestamp (0 means now)."""
        if not ts:
            ts = self._clock.now_ns()
        seq = self._last
        for subject, hdr, data, rollup in messages:
            if rollup == SKIP_NO_INTEREST:
                seq = self.skip_msg(no_interest=True)
                self._last_ts = ts  # the batch's time, on every copy
                continue
            seq = self.append(subject, hdr, data, ts)[0]
            if rollup == ROLLUP_SUBJECT:
                self.purge_ex(subject, 0, 1)
            elif rollup == ROLLUP_ALL:
                self.purge_ex(None, 0, 1)
        return seq, ts

    @mutator(Skip)
    def skip_msg(self, seq: int = 0, no_interest: bool = False) -> int:
        """Go ``SkipMsg`` (``no_interest=True``: ``SkipMsgNoInterest``): use up a sequence, store nothing.

        ``seq`` 0 means last_seq+1; any other value must equal it (SequenceMismatch). On an empty store
        first_seq moves past it; otherwise it becomes a deleted sequence. ``last_ts`` becomes now when
        ``no_interest`` or when it was never set.
        """
        return self.skip_msgs(seq, 1, no_interest)

    @mutator(SkipMany)
    def skip_msgs(self, seq: int, num: int, no_interest: bool = False) -> int:
        """Go ``SkipMsgs``: skip ``num`` sequences starting at ``seq`` (0 = last_seq+1); returns the last one."""
        self._tick()
        if seq != self._last + 1:
            if seq > 0:
                raise SequenceMismatch()
            seq = self._last + 1
        if num <= 0:
            return seq - 1
        lseq = seq + num - 1
        now = self._clock.now_ns()
        if no_interest or self._last_ts == 0:
            self._last_ts = now
        if self._msgs == 0:
            self._reset_empty(lseq + 1, lseq)
            return lseq
        self._last = lseq
        self._subj.extend([None] * num)
        self._body.extend([None] * num)
        self._ts.extend([now] * num)
        self._dmap.update(range(seq, lseq + 1))
        return lseq

    @mutator(LastTime)
    def restore_last_ts(self, ts: int) -> None:
        """``last_ts`` as a compacted log saved it (:class:`~.records.LastTime`): the time of
        a last message that is deleted, which no stored message carries."""
        self._last_ts = ts

    @mutator(Remove)
    def remove(self, seq: int, erase: bool = False) -> bool:
        """Go ``RemoveMsg``/``EraseMsg``; erasing only overwrites bytes in Go, so both are the same here."""
        self._tick()
        return self._remove_one(seq)

    @mutator(Purge)
    def purge(self) -> int:
        """Go ``Purge``: drop everything; ``first_seq`` becomes ``last_seq + 1``."""
        self._tick()
        purged = self._msgs
        self._reset_empty(self._last + 1, self._last)
        return purged

    @mutator(Compact)
    def compact(self, seq: int) -> int:
        """Go ``Compact``: remove everything below ``seq``; past the end the next message gets ``seq``."""
        self._tick()
        if seq == 0:
            return self.purge()
        if self._first > seq:
            return 0
        if seq <= self._last:
            base = self._base
            live = list(compress(range(self._first, seq), self._subj[self._first - base : seq - base]))
            return self._remove_batch(live)
        purged = self._msgs
        self._reset_empty(seq, seq - 1)
        return purged

    @mutator(PurgeEx)
    def purge_ex(self, subject: bytes | None, seq: int, keep: int) -> int:
        """Go ``PurgeEx``: purge matching messages below ``seq`` (0 = no bound), keeping the newest ``keep``.

        With no subject (or ``>``): keep=0 and seq=0 is a full purge, seq>1 is ``compact(seq)`` (keep is
        then ignored, as in Go), seq==1 purges nothing. ``keep`` counts against every message matching
        the subject, not only those below ``seq``.
        """
        self._tick()
        if seq == 1:
            return 0
        filt = subject or b""
        if filt == b"" or filt == _FWC:
            if keep == 0 and seq == 0:
                return self.purge()
            if seq > 1:
                return self.compact(seq)
            filt = _FWC
        if self._msgs == 0:
            return 0

        if filt == _FWC:
            # Only keep > 0 and seq == 0 reaches here: drop the oldest msgs-keep messages.
            if keep >= self._msgs:
                return 0
            return self._remove_batch(list(islice(self._live_from(self._first), self._msgs - keep)))

        matches = [st for _, st in self._match(filt)]
        total = sum(len(st.seqs) for st in matches)
        if total == 0:
            return 0
        maxp = 0
        if keep > 0:
            if keep >= total:
                return 0
            maxp = total - keep
        upper = seq - 1 if seq >= 1 else max(st.seqs[-1] for st in matches)
        if len(matches) == 1:
            seqs = matches[0].seqs
            count = _br(seqs, upper)
            if maxp:
                count = min(count, maxp)
            return self._remove_batch(list(islice(seqs, count)))
        iters = [islice(st.seqs, _br(st.seqs, upper)) for st in matches]
        ordered: Iterable[int] = merge(*iters)
        if maxp:
            ordered = islice(ordered, maxp)
        return self._remove_batch(list(ordered))

    @mutator(UpdateLimitsAt)
    def update_limits(self, limits: StoreLimits, ts: int = 0) -> int:
        """Go ``UpdateConfig``: new limits apply at once (msgs, bytes, then per subject, then age).

        Messages already past the old max_age go first, as Go's timer would have removed them.
        ``ts`` is the time of the change when it is a copy (applied as a record, which runs
        expiry at that time); 0 means now. Returns the time of the change.
        """
        self._tick()
        old_maxp = self._limits.max_msgs_per_subject
        recover_ttls = limits.allow_msg_ttl and not self._ttl_on
        self._limits = replace(limits)
        self._apply_cached_limits()
        if recover_ttls:  # Go ``recoverTTLState``: what is stored gets its TTLs now
            for seq in list(self._live_from(self._first)) if self._msgs else []:
                body = self._body[seq - self._base]
                if type(body) is tuple:
                    self._schedule_ttl(seq, self._ts[seq - self._base], body[0])
        self._enforce_msg_limit()
        self._enforce_bytes_limit()
        new_maxp = limits.max_msgs_per_subject
        if new_maxp > 0 and (old_maxp <= 0 or new_maxp < old_maxp):
            drop: list[int] = []
            for st in self._fss.values():
                extra = len(st.seqs) - new_maxp
                if extra > 0:
                    drop.extend(islice(st.seqs, extra))
            if drop:
                drop.sort()
                self._remove_batch(drop)
        self._tick()
        return ts or self._age_clock.now_ns()

    def apply(self, record: Record) -> object:
        """Carry out a logged mutation (a follower's copy, a replayed log): the record applier.

        Expiry during it is judged at the latest time the applied records carried, not by
        the store's clock: a log replayed (or a follower catching up) later expires what the
        leader had expired by then, under the limits of then, so a max_age lifted since
        expires nothing. Reads afterwards expire by the store's clock again.
        """
        at = record.time_ns()
        clock = self._record_clock
        clock.ns = max(clock.ns, at)
        self._age_clock = clock
        try:
            return record.apply(self)
        finally:
            self._age_clock = self._clock

    # ------------------------------------------------------------------ reads

    def load(self, seq: int) -> StoredMsg | None:
        self._tick()
        if not self._is_live(seq):
            return None
        return self._make(seq)

    def entry(self, seq: int) -> tuple[bytes, Body, int] | None:
        """The stored form of message ``seq``: (subject, data or (hdr, data), ts); None if not live.

        For hot paths that cache what they derive from a message: the objects returned are the
        ones stored, so ``is`` tells whether a sequence still holds the same message.
        """
        if self._timed:
            self._tick()
        if not self._msgs or not self._first <= seq <= self._last:
            return None
        i = seq - self._base
        subject = self._subj[i]
        if subject is None:
            return None
        body = self._body[i]
        assert body is not None
        return subject, body, self._ts[i]

    def entries(self, seqs: Sequence[int]) -> list[tuple[bytes, Body, int] | None]:
        """``entry`` for each sequence (0 gives None), for a run of Direct Gets."""
        if self._timed:
            self._tick()
        if not self._msgs:
            return [None] * len(seqs)
        first, last, base = self._first, self._last, self._base
        subj, body, ts = self._subj, self._body, self._ts
        out: list[tuple[bytes, Body, int] | None] = []
        add = out.append
        for seq in seqs:
            if first <= seq <= last:
                i = seq - base
                subject = subj[i]
                if subject is not None:
                    add((subject, body[i], ts[i]))  # type: ignore[arg-type]
                    continue
            add(None)
        return out

    def live_entries(self, start: int, limit: int) -> list[tuple[int, bytes, Body, int]]:
        """Up to ``limit`` live messages from sequence ``start`` on, ascending, as
        (seq, subject, data or (hdr, data), ts): ``load_next(b">", ...)`` repeated, for a
        Direct Get batch. Live slots are picked out at C speed; a long run of deletes is
        crossed through the dmap."""
        if self._timed:
            self._tick()
        last = self._last
        if not self._msgs or start > last or limit <= 0:
            return []
        pos = max(start, self._first)
        base, subj, body, ts = self._base, self._subj, self._body, self._ts
        out: list[tuple[int, bytes, Body, int]] = []
        add = out.append
        while pos <= last:
            want = limit - len(out)
            end = min(last, pos + 2 * want + 16)
            found = False
            for seq in compress(range(pos, end + 1), subj[pos - base : end - base + 1]):
                i = seq - base
                add((seq, subj[i], body[i], ts[i]))  # type: ignore[arg-type]
                found = True
                if len(out) >= limit:
                    return out
            pos = end + 1
            if not found and pos <= last:
                pos = self._next_live(pos)
        return out

    def live_columns(self, start: int, limit: int) -> tuple[Sequence[int], list[bytes], list[Body], Sequence[int]]:
        """``live_entries`` as columns (seqs, subjects, bodies, timestamps), for a loop that
        works column by column: a run without deletes is four slices of the store's own
        columns, anything else the entries turned over."""
        if self._timed:
            self._tick()
        if not self._msgs or start > self._last or limit <= 0:
            return (), [], [], ()
        pos = max(start, self._first)
        end = min(self._last, pos + limit - 1)
        i, j = pos - self._base, end - self._base + 1
        subjects = self._subj[i:j]
        if None not in subjects:
            return range(pos, end + 1), subjects, self._body[i:j], self._ts[i:j]  # type: ignore[return-value]
        rows = self.live_entries(start, limit)
        if not rows:
            return (), [], [], ()
        seqs, subjs, bodies, tss = zip(*rows)
        return seqs, list(subjs), list(bodies), tss

    @property
    def may_have_headers(self) -> bool:
        """False when no stored message has headers (none ever had): a scan for header
        values (the duplicate window's ids after a restart) can stop before it starts."""
        return self._hdrs_seen

    def last_seqs(self, subjects: Sequence[bytes]) -> list[int]:
        """``last_seq_for_subject`` for each literal subject, for a run of Direct Gets."""
        if self._timed:
            self._tick()
        get = self._fss.get
        return [st.seqs[-1] if (st := get(subject)) is not None else 0 for subject in subjects]

    def _verdicts_for(self, filter: bytes) -> dict[bytes, bool]:
        """The remembered verdicts of ``filter``'s walks (see ``_scan``)."""
        verdicts = self._verdicts
        memo = verdicts.get(filter)
        if memo is None:
            if len(verdicts) >= _VERDICT_FILTERS:
                verdicts.clear()
            memo = verdicts[filter] = {}
        elif len(memo) > _VERDICT_SUBJECTS:
            memo.clear()
        return memo

    def _scan(
        self, ftoks: list[bytes], memo: dict[bytes, bool], start: int, end: int, step: int, budget: int = 0
    ) -> tuple[int, int]:
        """Walk live slots from ``start`` to ``end`` (``step`` +1 or -1) for a wildcard match.

        Dead slots are skipped at C speed (``compress``); the walk gives up after a number of live
        messages comparable to what the subject-tree lookup would cost, or after _SCAN_SLOTS slots.
        Each subject's verdict is kept in ``memo`` (``_verdicts_for`` the filter), so later walks
        over the same subjects look it up instead of comparing tokens (measured: ``load_next(b"s.7.*",
        1)`` on 1,000 messages on 1,000 subjects, a match 8 messages on, 7.4 -> 4.3 µs).
        Returns (match or 0, the first sequence not examined).
        """
        base, subj = self._base, self._subj
        if not budget:
            budget = _SCAN_MIN + min(len(self._fss), _SCAN_CAP)
        if abs(end - start) >= _SCAN_SLOTS:
            end = start + step * (_SCAN_SLOTS - 1)
        pos = start
        # Chunks grow from _CHUNK_FIRST to _CHUNK slots: a walk usually ends within a few
        # messages, and slicing a whole _CHUNK for it cost more than the walk (measured:
        # ``load_next(b"s.>", n)`` on 10,000 messages 15 -> 8 µs, ``s.*.x`` 20 -> 12 µs).
        chunk = min(_CHUNK_FIRST, _CHUNK)
        while (pos - end) * step <= 0:
            chunk_end = pos + step * (chunk - 1)
            if (chunk_end - end) * step > 0:
                chunk_end = end
            if step > 0:
                live = compress(range(pos, chunk_end + 1), subj[pos - base : chunk_end - base + 1])
            else:
                live = compress(range(pos, chunk_end - 1, -1), reversed(subj[chunk_end - base : pos - base + 1]))
            for k in live:
                sb = subj[k - base]
                assert sb is not None
                hit = memo.get(sb)
                if hit is None:
                    hit = memo[sb] = _match_tokens(ftoks, sb)
                if hit:
                    return k, k + step
                budget -= 1
                if budget <= 0:
                    return 0, k + step
            pos = chunk_end + step
            if chunk < _CHUNK:
                chunk = min(chunk * 4, _CHUNK)
        return 0, pos

    def load_next(self, filter: bytes, start: int) -> StoredMsg | None:
        """First message with seq >= start matching ``filter`` (``b""``/``b">"`` = any), Go ``LoadNextMsg``."""
        self._tick()
        if not self._msgs:
            return None
        start = max(start, self._first)
        last = self._last
        if start > last:
            return None
        if not filter or filter == _FWC:
            s = self._next_live(start)
            return self._make(s) if s <= last else None
        if is_literal(filter):
            st = self._fss.get(filter)
            if st is None:
                return None
            seqs = st.seqs
            i = _bl(seqs, start)
            return self._make(seqs[i]) if i < len(seqs) else None
        found = self._next_wildcard(filter, start)
        return self._make(found) if found else None

    def load_next_multi(self, filters: list[bytes], start: int) -> StoredMsg | None:
        """First message with seq >= start matching any of ``filters``, Go ``LoadNextMsgMulti``:
        the filters go into a sublist, where a ``*``/``>`` inside a token is a literal
        character on either store (the file store's ``load_next`` reads ``*a`` otherwise)."""
        self._tick()
        if not self._msgs:
            return None
        start = max(start, self._first)
        last = self._last
        if start > last:
            return None
        best = 0
        for f in filters:
            if not f or f == _FWC:
                s = self._next_live(start)
                s = s if s <= last else 0
            elif is_literal(f):
                st = self._fss.get(f)
                if st is None:
                    continue
                seqs = st.seqs
                i = _bl(seqs, start)
                s = seqs[i] if i < len(seqs) else 0
            else:
                s = StreamStore._next_wildcard(self, f, start)
            if s and (not best or s < best):
                best = s
        return self._make(best) if best else None

    def _few_matches(self, filter: bytes) -> list[_Subj] | None:
        """The subjects matching ``filter`` when there are at most _FEW_SUBJECTS (their
        indexes then beat any walk), else None. A short list is remembered in the match memo
        (``_memo_match``'s, dropped when a subject comes or goes) for ``_known_few``."""
        memo = self._match_memo
        found = memo.get(filter)
        if found is None:
            found = [(st.subject, st) for _, st in islice(self._match(filter, _FEW_SUBJECTS + 1), _FEW_SUBJECTS + 1)]
            if len(found) > _FEW_SUBJECTS:
                return None
            if len(memo) >= _MEMO_MAX_FILTERS:
                memo.clear()
            memo[filter] = found
        elif len(found) > _FEW_SUBJECTS:
            return None
        return [st for _, st in found]

    def _known_few(self, filter: bytes) -> list[_Subj] | None:
        """The subjects of a filter already known to match at most _SCAN_SHORT of them: their
        indexes answer at once, cheaper than the short walk that would otherwise come first
        (one bisect per subject against a subject comparison per message walked; measured:
        ``next_by_subj`` with a one-subject wildcard, see docs/performance.md)."""
        found = self._match_memo.get(filter)
        if found is None or len(found) > _SCAN_SHORT:
            return None
        return [st for _, st in found]

    def _next_wildcard(self, filter: bytes, start: int) -> int:
        few = self._known_few(filter)
        if few is None:
            ftoks = filter.split(b".")
            memo = self._verdicts_for(filter)
            found, start = self._scan(ftoks, memo, start, self._last, 1, _SCAN_SHORT)
            if found or start > self._last:
                return found
            few = self._few_matches(filter)
            if few is None:
                found, start = self._scan(ftoks, memo, start, self._last, 1)
                if found or start > self._last:
                    return found
        best = 0
        for st in few if few is not None else (st for _, st in self._match(filter)):
            seqs = st.seqs
            if seqs[-1] < start:
                continue
            s = seqs[_bl(seqs, start)]
            if not best or s < best:
                best = s
                if best == start:
                    break
        return best

    def load_prev(self, filter: bytes, start: int) -> StoredMsg | None:
        """Last message with seq <= start matching ``filter``, Go ``LoadPrevMsg``."""
        self._tick()
        if not self._msgs or start < self._first:
            return None
        start = min(start, self._last)
        if not filter or filter == _FWC:
            return self._make(self._prev_live(start))
        if is_literal(filter):
            st = self._fss.get(filter)
            if st is None:
                return None
            i = _br(st.seqs, start) - 1
            return self._make(st.seqs[i]) if i >= 0 else None
        found = self._prev_wildcard(filter, start)
        return self._make(found) if found else None

    def _prev_wildcard(self, filter: bytes, start: int) -> int:
        few = self._known_few(filter)
        if few is None:
            ftoks = filter.split(b".")
            memo = self._verdicts_for(filter)
            found, start = self._scan(ftoks, memo, start, self._first, -1, _SCAN_SHORT)
            if found or start < self._first:
                return found
            few = self._few_matches(filter)
            if few is None:
                found, start = self._scan(ftoks, memo, start, self._first, -1)
                if found or start < self._first:
                    return found
        best = 0
        for st in few if few is not None else (st for _, st in self._match(filter)):
            seqs = st.seqs
            if seqs[0] > start:
                continue
            s = seqs[_br(seqs, start) - 1]
            if s > best:
                best = s
                if best == start:
                    break
        return best

    def load_last(self, filter: bytes) -> StoredMsg | None:
        """Go ``LoadLastMsg``: newest message matching ``filter``.

        For ``b""``/``b">"`` Go loads the message *at* ``last_seq``, so this is None when that
        message was deleted even if older ones remain (memstore and filestore both do this).
        """
        self._tick()
        if not self._msgs:
            return None
        if not filter or filter == _FWC:
            return self._make(self._last) if self._is_live(self._last) else None
        if is_literal(filter):
            st = self._fss.get(filter)
            return self._make(st.seqs[-1]) if st is not None else None
        # The newest match overall: a short walk back from the end usually finds it before the
        # subject tree would have to visit every matching subject.
        best = self._prev_wildcard(filter, self._last)
        return self._make(best) if best else None

    def seq_from_time(self, ts_ns: int) -> int:
        """Go ``GetSeqFromTime``: first seq whose ts >= ``ts_ns``, or last_seq+1; the same binary search,
        so with a clock that stepped backwards the answer is Go's too."""
        self._tick()
        first, last = self._first, self._last
        if not self._msgs:
            return last + 1
        tsa, base = self._ts, self._base
        if ts_ns <= tsa[first - base]:
            return first
        lseq = self._prev_live(last) if last > first else first - 1
        if lseq <= first:
            # Go only looks for a last message above FirstSeq.
            return last + 1
        last_ts = tsa[lseq - base]
        if ts_ns == last_ts:
            return lseq
        if ts_ns > last_ts:
            return last + 1
        lo, hi = first, last
        seq = hi + 1
        while lo <= hi:
            mid = lo + (hi - lo) // 2
            cseq = self._next_live(mid)
            if cseq > hi:
                hi = mid - 1
                continue
            if tsa[cseq - base] >= ts_ns:
                seq = cseq
                if mid == lo:
                    break
                hi = mid - 1
            else:
                lo = cseq + 1
        return seq

    def num_pending(self, start: int, filter: bytes, last_per_subject: bool = False) -> int:
        """Go ``NumPending``: matching messages with seq >= start (or matching subjects whose last
        message is >= start when ``last_per_subject``)."""
        self._tick()
        if not self._msgs:
            return 0
        first, last = self._first, self._last
        start = max(start, first)
        if start > last:
            return 0
        if not filter or filter == _FWC:
            if start <= first:
                return len(self._fss) if last_per_subject else self._msgs
            if not last_per_subject:
                d = self._dmap
                return (last - start + 1) - (len(d) - d.bisect_left(start))
            return sum(1 for st in self._fss.values() if st.seqs[-1] >= start)
        if _has_in_token_wildcard(filter):
            return self._in_token_pending(start, filter, last_per_subject)
        return _count_pending(self._match(filter), start, last_per_subject)

    def _in_token_pending(self, start: int, filter: bytes, last_per_subject: bool) -> int:
        """``NumPending`` of a filter with a ``*``/``>`` inside a token: the memory store's
        mix of its subject tree and ``isMatch`` (:mod:`.in_token_pending`); the file store
        overrides this."""
        fss = self._fss

        def scanned() -> list[Sequence[int]]:
            if is_literal(filter):
                literal = fss.get(filter)
                return [list(literal.seqs)] if literal is not None else []
            ftoks = filter.decode().split(".")
            return [list(st.seqs) for s, st in fss.items() if is_subset_match_tokens(s.decode().split("."), ftoks)]

        return memstore_pending(
            self._first,
            self._last,
            ((len(st.seqs), st.seqs[0], st.seqs[-1]) for _, st in match_keys(fss.items(), filter)),
            scanned,
            start,
            last_per_subject,
        )

    def num_pending_multi(self, start: int, filters: list[bytes], last_per_subject: bool = False) -> int:
        """Go ``NumPendingMulti``: the filters (two or more, not overlapping) go into a sublist,
        where a ``*``/``>`` inside a token is a literal character."""
        self._tick()
        if not self._msgs:
            return 0
        start = max(start, self._first)
        if start > self._last:
            return 0
        return sum(_count_pending(self._match(f), start, last_per_subject) for f in filters)

    def last_per_subject_counted(self, filters: list[bytes], seqs: list[int]) -> int:
        """How many of ``seqs`` (``multi_last_seqs(filters)``, where a new last-per-subject
        consumer starts) Go's ``NumPending`` counts from the first of them: all, unless a filter
        has a ``*``/``>`` inside a token (the tree matched what a literal reading would not)."""
        if not seqs or not any(_has_in_token_wildcard(f) for f in filters):
            return len(seqs)
        if len(filters) > 1:
            return self.num_pending_multi(seqs[0], filters, True)
        return self.num_pending(seqs[0], filters[0], True)

    def multi_last_seqs(self, filters: list[bytes], max_seq: int, max_allowed: int) -> list[int]:
        """Go ``MultiLastSeqs``: last seq per subject matching any filter, at or below ``max_seq``
        (0 = last_seq), ascending and de-duplicated; TooManyResults above ``max_allowed`` (> 0)."""
        self._tick()
        if not self._msgs:
            return []
        if max_seq == 0 and max_allowed <= 0 and filters == [_FWC]:
            return sorted(st.seqs[-1] for st in self._fss.values())
        if max_seq == 0:
            max_seq = self._last
        seen: set[int] = set()
        for filt in filters:
            if _has_in_token_wildcard(filt):
                # Go's stree matcher treats a `*`/`>` left over at a node boundary as a wildcard
                # (`m.0*` can match `m.01`), so the answer depends on the tree's layout: ask a
                # port of it, built from the live subjects (the layout is the radix trie of the
                # key set, whatever the history; dict order is Go's insertion order anyway).
                matched: Iterable[tuple[bytes, _Subj]] = match_keys(self._fss.items(), filt)
            else:
                matched = self._memo_match(filt)
            for _, st in matched:
                seqs = st.seqs
                s = seqs[-1]
                if s > max_seq:
                    if len(seqs) == 1:
                        continue
                    i = _br(seqs, max_seq) - 1
                    if i < 0:
                        continue
                    s = seqs[i]
                seen.add(s)
            if max_allowed > 0 and len(seen) > max_allowed:
                raise TooManyResults()
        return sorted(seen)

    def _memo_match(self, filter: bytes) -> list[tuple[bytes, _Subj]]:
        """``_match(filter)`` as a list, remembered until a subject comes or goes."""
        memo = self._match_memo
        found = memo.get(filter)
        if found is None:
            found = [(st.subject, st) for _, st in self._match(filter)]
            if len(found) <= _MEMO_MAX_SUBJECTS:
                if len(memo) >= _MEMO_MAX_FILTERS:
                    memo.clear()
                memo[filter] = found
        return found

    def _matching(self, filter: bytes) -> Iterable[tuple[bytes, _Subj]]:
        if not filter or filter == _FWC:
            return iter(self._fss.items())
        return self._match(filter)

    def subjects_totals(self, filter: bytes) -> dict[bytes, int]:
        """Go ``SubjectsTotals``: message count per subject matching ``filter`` (``b""`` = all).
        For a ``*``/``>`` inside a token, the memory store keeps what both its subject tree
        (:mod:`.go_stree`) and ``isSubsetMatchTokenized`` match: in practice the literal subject."""
        self._tick()
        if filter and _has_in_token_wildcard(filter):
            ftoks = filter.decode().split(".")
            return {
                s: len(st.seqs)
                for s, st in match_keys(self._fss.items(), filter)
                if is_subset_match_tokens(s.decode().split("."), ftoks)
            }
        return {s: len(st.seqs) for s, st in self._matching(filter)}

    def subjects_state(self, filter: bytes) -> dict[bytes, tuple[int, int, int]]:
        """Go ``SubjectsState``: (msgs, first, last) per subject matching ``filter`` (``b""`` = all)."""
        self._tick()
        return {s: (len(st.seqs), st.seqs[0], st.seqs[-1]) for s, st in self._matching(filter)}

    def last_seq_for_subject(self, subject: bytes) -> int:
        """The newest sequence stored on literal ``subject``; 0 if none."""
        if self._timed:
            self._tick()
        st = self._fss.get(subject)
        return st.seqs[-1] if st is not None else 0

    # ------------------------------------------------------------------ state

    def state(self) -> StoreState:
        self._tick()
        return StoreState(
            msgs=self._msgs,
            bytes=self._bytes,
            first_seq=self._first,
            first_ts=self._ts[self._first - self._base] if self._msgs else 0,
            last_seq=self._last,
            last_ts=self._last_ts,
            num_subjects=len(self._fss),
            num_deleted=len(self._dmap),
        )

    def deleted(self) -> list[int]:
        """Interior deleted sequences in [first_seq, last_seq], ascending (Go ``State().Deleted``)."""
        self._tick()
        return list(self._dmap)

    def detailed_deleted(self) -> list[int]:
        """The deleted sequences Go's detailed ``State()`` lists (``deleted`` for the memory store)."""
        return self.deleted()

    @property
    def limits(self) -> StoreLimits:
        return replace(self._limits)

    @property
    def storage(self) -> str:
        return self.STORAGE

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def msgs(self) -> int:
        self._tick()
        return self._msgs

    @property
    def first_seq(self) -> int:
        self._tick()
        return self._first

    @property
    def last_seq(self) -> int:
        self._tick()
        return self._last

    @property
    def num_subjects(self) -> int:
        self._tick()
        return len(self._fss)

    @property
    def num_deleted(self) -> int:
        self._tick()
        return len(self._dmap)

    # Last in the class body so the name does not shadow the ``bytes`` type in annotations above.
    @property
    def bytes(self) -> int:
        self._tick()
        return self._bytes


class MemoryStore(StreamStore):
    """nats-server's ``memStore``: the shared implementation as it is."""

    __slots__ = ()
