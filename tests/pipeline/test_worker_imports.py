"""What Spark's Python processes load for a read: the ``jetstream`` data source and its reader,
never the server. A read starts several Python processes (the planner's, then a worker per
core), each importing the source; loading ``jsemu.app`` with it cost about 0.35 s of CPU in
each (``python -X importtime -c 'import jsemu.pipeline.source'``), a large part of a first
read's Python time."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install -e '.[spark]'")

_SERVER_PARTS = ("jsemu.app", "jsemu.server.server", "jsemu.jetstream", "jsemu.control", "jsemu.store")


def test_the_data_source_does_not_load_the_server() -> None:
    code = "import sys, jsemu.pipeline.source; print(sorted(m for m in sys.modules if m.startswith('jsemu.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert not [part for part in _SERVER_PARTS if f"'{part}'" in loaded or f"'{part}." in loaded], loaded


def test_the_package_still_offers_the_server_on_first_use() -> None:
    code = "import jsemu; print(jsemu.Server.__module__, jsemu.ThreadedServer.__module__, jsemu.ServerOptions.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["jsemu.app", "jsemu.threaded", "ServerOptions"]
    missing = subprocess.run(
        [sys.executable, "-c", "import jsemu; jsemu.Nope"], capture_output=True, text=True, check=False
    )
    assert "module 'jsemu' has no attribute 'Nope'" in missing.stderr
