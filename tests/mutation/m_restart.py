"""Planted bugs of the compacted log's column records (``store/column_snapshot.py``), their
bulk load (``StreamStore.load_columns``), the log format that carries them and the
compaction at a clean stop."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_COLUMNS = "jsemu/store/column_snapshot.py"
_STORE = "jsemu/store/stream_store.py"
_TESTS = "tests/store/test_column_snapshot.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "columns_grouping_ignored",
        "store",
        _STORE,
        "        grouped = run.grouped if run.grouped is not None else seqs\n",
        "        grouped = seqs\n",
        (_TESTS,),
        "interleaved subjects get each other's sequences in their indexes after a restart",
    ),
    Mutation(
        "columns_equal_lengths_assumed",
        "store",
        _COLUMNS,
        "    same = lens.count(size) == n\n",
        "    same = lens.count(size) >= 1\n",
        (_TESTS,),
        "bodies of different lengths are cut as if all were as long as the first",
    ),
    Mutation(
        "columns_subject_number_unchecked",
        "store",
        _COLUMNS,
        "        return bool(index.tobytes().translate(None, bytes(range(k))))\n",
        "        return bool(index.tobytes().translate(None, bytes(range(k + 1))))\n",
        (f"{_TESTS}::test_a_record_that_does_not_add_up_is_refused",),
        "a subject number one past the table decodes, and the load fails later with a traceback",
    ),
    Mutation(
        "columns_leftover_bytes_accepted",
        "store",
        _COLUMNS,
        "    if pos != end:\n",
        "    if pos > end:\n",
        (f"{_TESTS}::test_a_record_that_does_not_add_up_is_refused",),
        "a record with bytes left over is read as if whole",
    ),
    Mutation(
        "columns_order_unchecked",
        "store",
        _COLUMNS,
        "    return all(map(lt, seqs, islice(seqs, 1, None)))\n",
        "    return True\n",
        (f"{_TESTS}::test_a_record_that_does_not_add_up_is_refused",),
        "sequences out of order are loaded into the slots",
    ),
    Mutation(
        "columns_gaps_not_deleted",
        "store",
        _STORE,
        "            self._dmap.update(compress(range(start, last + 1), map(is_, subj_slots, repeat(None))))\n",
        "            pass\n",
        (_TESTS,),
        "deleted sequences between the loaded messages are missing from the deleted list",
    ),
    Mutation(
        "columns_header_size_as_plain",
        "store",
        _STORE,
        "            + hsum\n            + dsum\n            + with_hdr * self._hdr_size\n",
        "            + hsum\n            + dsum\n            + with_hdr * self._overhead\n",
        (_TESTS,),
        "a file stream's bytes after a restart count messages with headers as if they had none",
    ),
    Mutation(
        "wal_format_2_refused",
        "store",
        "jsemu/store/wal.py",
        "READABLE_VERSIONS = (2, 3, 4, 5)\n",
        "READABLE_VERSIONS = (3, 4, 5)\n",
        (f"{_TESTS}::test_a_format_2_log_loads_and_is_rewritten_in_the_current_format_at_its_compaction",),
        "a store written before the column records no longer starts",
    ),
    Mutation(
        "wal_no_checkpoint_at_stop",
        "app",
        "jsemu/app.py",
        "            js.checkpoint_logs()\n",
        "            pass\n",
        ("tests/jetstream/persistence/test_restart_columns.py",),
        "a clean stop leaves the log's records one by one: the next start replays them",
    ),
]
