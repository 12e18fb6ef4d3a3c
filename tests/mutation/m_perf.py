"""Planted bugs of the restart work (issue 32, ``perf``): the last timestamp a compacted log
keeps for deleted last messages, the collector a server process turns back on, and the
codecs a plain server start does not import."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_LAST_TS = "tests/jetstream/persistence/test_restart_last_ts.py"
_START = "tests/app/test_serve_start_cost.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "last_ts_only_for_trailing_deletes",
        "store",
        "jsemu/store/compaction.py",
        "    if last_ts and (last > at or not store.msgs):",
        "    if last_ts and last > at:",
        (_LAST_TS,),
        "a purged file stream's last_ts is lost at its restart",
    ),
    Mutation(
        "last_ts_record_ignored",
        "store",
        "jsemu/store/stream_store.py",
        '        a last message that is deleted, which no stored message carries."""\n        self._last_ts = ts\n',
        '        a last message that is deleted, which no stored message carries."""\n',
        (_LAST_TS,),
        "the saved last_ts is read back and dropped: a restart reports the last live message's",
    ),
    Mutation(
        "serve_gc_left_off",
        "app",
        "jsemu/cli/serve.py",
        "    gc.set_threshold(50_000, 20, 100)\n    gc.enable()\n",
        "    gc.set_threshold(50_000, 20, 100)\n",
        (_START,),
        "a server process never collects garbage (python -m jsemu starts with the collector off)",
    ),
    Mutation(
        "websocket_codec_imported_by_every_server",
        "server",
        "jsemu/server/websocket_transport.py",
        "if TYPE_CHECKING:  # the frame codec",
        "if True:  # the frame codec",
        (_START,),
        "every server start imports h11 and wsproto",
    ),
]
MUTATIONS += [
    Mutation(
        "headers_unseen_in_loaded_columns",
        "store",
        "jsemu/store/stream_store.py",
        "        if hdrs is not None:\n            self._hdrs_seen = True\n        last = seqs[-1]\n",
        "        last = seqs[-1]\n",
        ("tests/jetstream/persistence/test_restart_columns.py", "tests/store/test_dedup_rebuild_headers.py"),
        "after a restart from columns the duplicate window forgets every Nats-Msg-Id",
    ),
    Mutation(
        "headers_unseen_in_appends",
        "store",
        "jsemu/store/stream_store.py",
        "            self._body.append((hdr, data))\n            self._hdrs_seen = True\n",
        "            self._body.append((hdr, data))\n",
        ("tests/store/test_dedup_rebuild_headers.py",),
        "a restart from the log's records forgets the Nats-Msg-Ids of the duplicate window",
    ),
]
MUTATIONS += [
    Mutation(
        "headers_unseen_in_runs",
        "store",
        "jsemu/store/stream_store.py",
        "        if with_hdr:\n            self._hdrs_seen = True\n",
        "",
        ("tests/store/test_dedup_rebuild_headers.py",),
        "a restart replaying logged appends in bulk forgets the duplicate window's ids",
    ),
]
