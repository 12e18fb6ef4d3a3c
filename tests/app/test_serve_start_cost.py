"""What a ``jsemu serve`` start pays for before its first answer: no collector passes while
it starts (``python -m jsemu`` turns the collector off, ``tune_gc`` back on once the server is
up), and no import of codecs a plain server does not use (WebSocket, snapshot archives)."""

from __future__ import annotations

import gc
import subprocess
import sys

from jsemu.cli.serve import tune_gc

#: Imported only when a server has a WebSocket port, or makes or restores a snapshot.
_LAZY = ("h11", "wsproto", "jsemu.protocol.websocket", "cramjam", "tarfile")


def test_a_plain_server_start_imports_no_websocket_or_snapshot_codec() -> None:
    code = f"import sys, jsemu.cli, jsemu.app\nprint(' '.join(m for m in {_LAZY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_tune_gc_turns_the_collector_back_on() -> None:
    threshold = gc.get_threshold()
    gc.disable()
    try:
        tune_gc()
        assert gc.isenabled()
        assert gc.get_threshold()[0] == 50_000
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
        gc.enable()
