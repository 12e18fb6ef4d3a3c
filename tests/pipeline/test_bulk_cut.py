"""The reader's bulk cut (``columns._cut_plain_run``: a window of plain Direct Get frames split on
CRLF and checked in Arrow) takes exactly the frames the frame-by-frame reader takes, from jsemu
and from nats-server: runs of plain messages broken by stored headers, payloads that contain
CRLF or look like protocol, deletes, filters and ranges that end inside a filtered batch. The
cut is tried on every window here (threshold 0), and on a larger stream at its real threshold.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import RealServer

pytest.importorskip(
    "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' (and Java 17) runs the pipeline tests"
)
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Java is not on PATH (nor JAVA_HOME): the pipeline tests need Java 17", allow_module_level=True)

from jsemu.pipeline import columns
from jsemu.pipeline.source import SeqRange, StreamPlan

from .streams import Pub, direct_all, fill

_TRICKY = [
    b"a\r\nb",
    b"\r\n",
    b"x\r\n\r\nNATS/1.0\r\nNats-Stream: Q\r\n",
    b"HMSG _INBOX.x 1 2 3\r\nNATS/1.0\r\n\r\n",
    b"\xff\xfe",
    b"",
]
plain = st.tuples(
    st.sampled_from(["a", "b.c", "d.e.f"]), st.none(), st.binary(max_size=30).filter(lambda b: b"\r\n" not in b)
)
tricky = st.tuples(
    st.sampled_from(["a", "é"]),
    st.none() | st.just([("K", "v"), ("K", "w")]) | st.just([("Nats-Stream", "Q")]),
    st.sampled_from(_TRICKY),
)
# Mostly plain, so a window holds runs of them, with a tricky message here and there.
pubs = st.lists(st.one_of(plain, plain, plain, tricky), min_size=1, max_size=300)


@pytest.fixture(scope="module")
def real() -> Iterator[str]:
    server = RealServer()
    try:
        yield f"nats://127.0.0.1:{server.port}"
    finally:
        server.stop()


def _plan_rows(url: str, stream: str, first: int, last: int, **options: Any) -> list[tuple[Any, ...]]:
    plan = StreamPlan({"url": url, "stream": stream, **{k: str(v) for k, v in options.items()}})
    out = []
    for rb in plan.read(SeqRange(first, last, "direct")):
        out += [
            (r["seq"], r["subject"], r["time_ns"], [(h["key"], h["value"]) for h in r["headers"]], r["data"])
            for r in rb.to_pylist()
        ]
    return out


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(
    published=pubs,
    deletes=st.sets(st.integers(1, 300), max_size=20),
    batch=st.integers(1, 400),
    data=st.data(),
)
def test_bulk_cut_equals_direct_get_batches(
    emu: str,
    real: str,
    monkeypatch: pytest.MonkeyPatch,
    published: list[Pub],
    deletes: set[int],
    batch: int,
    data: st.DataObject,
) -> None:
    monkeypatch.setattr(columns, "_BULK_MIN_BYTES", 0)
    gone = sorted(d for d in deletes if d < len(published))
    subject = data.draw(st.none() | st.sampled_from(["bc.a", "bc.>", "bc.*.c"]))
    last = data.draw(st.integers(1, len(published)))
    extra = {"subject": subject} if subject else {}
    for url in (emu, real):
        fill(url, "BC", published, gone)
        want = [m for m in direct_all(url, "BC", **({"next_by_subj": subject} if subject else {})) if m[0] <= last]
        assert _plan_rows(url, "BC", 1, last, batch=batch, **extra) == want


def test_a_large_read_takes_the_bulk_cut_and_equals_direct_get(emu: str, real: str) -> None:
    """3,000 messages at the real threshold: most frames go the bulk way, every 97th is tricky."""
    published: list[Pub] = [
        ("t", [("K", "v")], _TRICKY[i % len(_TRICKY)]) if i % 97 == 0 else (f"p.{i % 7}", None, f"v{i}".encode())
        for i in range(3000)
    ]
    calls = []
    cut = columns._cut_plain_run

    def counting(*args: Any) -> tuple[int, int, int]:
        result = cut(*args)
        calls.append(result[1])
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columns, "_cut_plain_run", counting)
        for url in (emu, real):
            fill(url, "BL", published, [5, 6, 2000])
            assert _plan_rows(url, "BL", 1, 3000) == direct_all(url, "BL")
    assert sum(calls) > 2000  # the bulk cut took most of them
