"""The file store's answers where they differ from the memory store's (server/filestore.go).

jsemu keeps a file stream's messages in memory like any other (a ``store_dir`` adds the
write-ahead log, :mod:`.wal`); what makes it a file store is what a client can see: Go's
``fileStoreMsgSize`` accounting, the 32 MiB record limit, and the few queries that fail
or answer otherwise because the file store looks for message blocks.
"""

from __future__ import annotations

from .errors import StoreEOF, StoreMsgNotFound
from .go_stree import match_keys
from .records import Remove, mutator
from .stream_store import StreamStore, _count_pending, _has_in_token_wildcard

__all__ = ["FileStore"]


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
    # literally where the memory store uses its tree (observed on nats-server 2.15.1).

    def subjects_totals(self, filter: bytes) -> dict[bytes, int]:
        """Go ``subjectsTotalsLocked``: ``psim.Match`` alone, so by the tree's layout."""
        if filter and _has_in_token_wildcard(filter):
            self._tick()
            return {s: len(st.seqs) for s, st in match_keys(self._fss.items(), filter)}
        return super().subjects_totals(filter)

    def _in_token_pending(self, start: int, filter: bytes, last_per_subject: bool) -> int:
        """``NumPending`` reads a filter without a whole-token wildcard as a literal subject."""
        return _count_pending(self._match(filter), start, last_per_subject)

    def last_per_subject_counted(self, filters: list[bytes], seqs: list[int]) -> int:
        """One filter with a ``*``/``>`` inside a token counts nothing unless it is itself a
        stored subject, and then all of ``seqs``."""
        if len(filters) == 1 and _has_in_token_wildcard(filters[0]):
            return len(seqs) if filters[0] in self._fss else 0
        return super().last_per_subject_counted(filters, seqs)

    def detailed_deleted(self) -> list[int]:
        """A never-written stream's detailed state counts sequence 0 as deleted (observed on
        nats-server 2.15.1); the fast state (``deleted``/``num_deleted``) does not."""
        deleted = self.deleted()
        if not deleted and self.first_seq == 0:
            return [0]
        return deleted
