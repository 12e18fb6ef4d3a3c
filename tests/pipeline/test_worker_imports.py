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


#: What Spark's planner processes (``create_data_source``, ``plan_data_source_read``) need not
#: load with the source: PyArrow and the Arrow reader (a task's worker imports them when it
#: reads), and the protocol's encoder, parser and Go JSON decoder (the client needs ``frames``).
_PLANNER_NEEDS_NOT = (
    "pyarrow",
    "jsemu.pipeline.columns",
    "jsemu.pipeline.consumer_read",
    "jsemu.protocol.encoder",
    "jsemu.protocol.parser",
    "jsemu.protocol.gojson",
)


def test_planning_a_read_loads_neither_arrow_nor_the_protocol_encoders() -> None:
    code = (
        "import sys, jsemu.pipeline.source as s; s.JetStreamDataSource({'url': 'u', 'stream': 'P'}).reader(None); "
        "print(sorted(sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert not [part for part in _PLANNER_NEEDS_NOT if f"'{part}'" in loaded], loaded


def test_the_protocol_package_still_offers_its_names() -> None:
    from jsemu import protocol

    assert set(protocol.__all__) == set(protocol._HOME)
    for name in protocol.__all__:
        assert getattr(protocol, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        protocol.Nope  # noqa: B018
