"""The file store's answers where they differ from the memory store's (server/filestore.go).

jsemu keeps a file stream's messages in memory like any other (a ``store_dir`` adds the
write-ahead log, :mod:`.wal`); what makes it a file store is what a client can see: Go's
``fileStoreMsgSize`` accounting, the 32 MiB record limit, and the few queries that fail
or answer otherwise because the file store looks for message blocks.
"""

from __future__ import annotations

from functools import lru_cache

from ..subjects import is_subset_match_tokens
from .errors import StoreEOF, StoreMsgNotFound
from .go_stree import match_keys
from .in_token_pending import SortedSeqs, filestore_pending
from .records import Remove, mutator
from .stream_store import StreamStore, _has_in_token_wildcard
from .subject_tree import is_literal

__all__ = ["FileStore"]


@lru_cache(maxsize=256)
def _has_star_led_token(filter: bytes) -> bool:
    """True when a token starts with ``*`` without being ``*`` (``*a``): Go's
    ``isSubsetMatchTokenized`` lets such a filter token match any subject token."""
    return any(len(tok) > 1 and tok[0] == 0x2A for tok in filter.split(b"."))


# The memory store's walk, called as a plain function: the override above costs a wildcard
# ``load_next`` one call and a cache lookup, not a ``super()`` too.
_walk_next_wildcard = StreamStore._next_wildcard


class FileStore(StreamStore):
    """nats-server's ``fileStore`` as seen from outside."""

    __slots__ = ()

    STORAGE = "file"
    # fileStoreMsgSize: 22 bytes of record header, 8 of hash; 4 more for a header length.
    _OVERHEAD = 30
    _HDR_EXTRA = 4
    # filestore.go rlBadThresh.
    _RECORD_MAX = 32 * 1024 * 1024

    @mutator(Remove)
    def remove(self, seq: int, erase: bool = False) -> bool:
        """Go ``removeMsg`` fails outright outside the block range (StoreMsgNotFound below the
        first sequence or for 0, StoreEOF past the last); the memory store just says False."""
        first, last = self.first_seq, self.last_seq
        if seq == 0 or seq < first:
            raise StoreMsgNotFound()
        if seq > last:
            raise StoreEOF()
        return super().remove(seq, erase)

    def multi_last_seqs(self, filters: list[bytes], max_seq: int, max_allowed: int) -> list[int]:
        """Nothing when ``max_seq`` is past the end: the file store finds no block holding it."""
        if max_seq > self.last_seq:
            return []
        return super().multi_last_seqs(filters, max_seq, max_allowed)

    # A `*`/`>` inside a filter's token (`a*`): Go's file store answers by its per-subject index
    # tree (psim, :mod:`.go_stree`) where the memory store reads the filter literally, and
    # mixes the tree with literal readings where the memory store mixes otherwise (observed on
    # nats-server 2.15.1, :mod:`.in_token_pending`).

    def subjects_totals(self, filter: bytes) -> dict[bytes, int]:
        """Go ``subjectsTotalsLocked``: ``psim.Match`` alone, so by the tree's layout."""
        if filter and _has_in_token_wildcard(filter):
            self._tick()
            return {s: len(st.seqs) for s, st in match_keys(self._fss.items(), filter)}
        return super().subjects_totals(filter)

    def _in_token_pending(self, start: int, filter: bytes, last_per_subject: bool) -> int:
        """``NumPending``: the filter as a literal subject first, then by the tree
        (:func:`.in_token_pending.filestore_pending`)."""
        fss = self._fss
        literal: SortedSeqs | None = None
        if is_literal(filter):
            own = fss.get(filter)
            literal = own.seqs if own is not None else ()

            def is_match(subject: bytes) -> bool:
                return subject == filter

        else:
            ftoks = filter.decode().split(".")

            def is_match(subject: bytes) -> bool:
                return is_subset_match_tokens(subject.decode().split("."), ftoks)

        def scanned() -> list[SortedSeqs]:
            return [st.seqs for s, st in fss.items() if is_match(s)]

        matched: list[tuple[bytes, SortedSeqs]] = [(s, st.seqs) for s, st in match_keys(fss.items(), filter)]
        return filestore_pending(self._first, literal, matched, is_match, scanned, start, last_per_subject)

    def _next_wildcard(self, filter: bytes, start: int) -> int:
        """Go ``firstMatching`` checks each message with ``isSubsetMatchTokenized``, where a
        filter token ``*a`` matches any token (``p.*a.*`` delivers ``p.a.a``): for such a filter,
        port its walk (:meth:`_next_subset_match`); any other filter matches as everywhere."""
        if _has_star_led_token(filter):
            return self._next_subset_match(filter, start)
        return _walk_next_wildcard(self, filter, start)

    def _next_subset_match(self, filter: bytes, start: int) -> int:
        """Go ``LoadNextMsg`` for such a filter, over one block. From the first sequence, the
        subjects the tree (:mod:`.go_stree`) matches say where to start, or that nothing
        will. Then ``firstMatching``: with one subject stored, the tree alone decides; else the
        walk checks each message from the start while the block's subjects are more than a
        quarter of the range (the cache taken as loaded, as it is after recent writes), or from
        the first message of a subject the tree matches."""
        fss, last = self._fss, self._last
        if start <= self._first:
            firsts = [st.seqs[0] for _, st in match_keys(fss.items(), filter)]
            if not firsts:
                return 0
            start = max(start, min(firsts))
        if len(fss) == 1:
            for _ in match_keys(fss.items(), filter):
                s = self._next_live(start)
                return s if s <= last else 0
            return 0
        fseq = start
        if len(fss) * 4 <= last - start:
            fseq = last + 1
            for _, st in match_keys(fss.items(), filter):
                seqs = st.seqs
                if start <= seqs[-1]:
                    fseq = min(fseq, max(start, seqs[0]))
        ftoks = filter.decode().split(".")
        base, subj = self._base, self._subj
        s = self._next_live(fseq) if fseq <= last else last + 1
        while s <= last:
            sb = subj[s - base]
            if sb is not None and is_subset_match_tokens(sb.decode().split("."), ftoks):
                return s
            s = self._next_live(s + 1) if s < last else last + 1
        return 0

    def detailed_deleted(self) -> list[int]:
        """A never-written stream's detailed state counts sequence 0 as deleted (observed on
        nats-server 2.15.1); the fast state (``deleted``/``num_deleted``) does not."""
        deleted = self.deleted()
        if not deleted and self.first_seq == 0:
            return [0]
        return deleted
