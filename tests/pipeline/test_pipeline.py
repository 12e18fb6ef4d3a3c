"""The PySpark pipeline (extra ``spark``): the ``jetstream`` data source and the views give
exactly what Direct Get gives.

What each test compares with: most read the data source and the views from jsemu and compare
them with Direct Get batches read from the same jsemu (``direct_all``) or with values worked
out from what was published; :func:`test_the_real_server_gives_the_same_rows` and the
in-token wildcard test also ask a real nats-server. Direct Get itself is compared with
nats-server in ``tests/conformance``. :func:`test_last_per_subject_equals_multi_last` runs only 6
hypothesis examples (each is a Spark job), so it is a smoke test of the view, not a search.
The package's Spark session and jsemu server are in ``conftest.py``.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.doc_blocks import runnable
from support.servers import RealServer

import jsemu

pyspark = pytest.importorskip(
    "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' (and Java 17) runs the pipeline tests"
)
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Java is not on PATH (nor JAVA_HOME): the pipeline tests need Java 17", allow_module_level=True)
from pyspark.sql import SparkSession

from jsemu.pipeline.client import NatsClient
from jsemu.pipeline.views import last_per_subject, next_by_subject, subject_counts

from .streams import direct_all, fill, read, rows

SUBJECTS = ["a.b", "a.c", "a.b.c", "b.c", "b", "a.b.d", "c.d.e"]
FILTERS = ["a.*", "*.c", "a.>", ">", "b", "a.*.*", "*.*.c", "x.>", "a.b.c"]


def _pubs(n: int) -> list[tuple[str, list[tuple[str, str]] | None, bytes]]:
    out: list[tuple[str, list[tuple[str, str]] | None, bytes]] = []
    for i in range(n):
        headers = [("K", str(i)), ("K", "again"), ("X-Empty", "")] if i % 4 == 0 else None
        out.append((SUBJECTS[i % len(SUBJECTS)], headers, b"payload-%d" % i))
    return out


def test_read_equals_direct_get_batches(spark: SparkSession, emu: str) -> None:
    fill(emu, "R1", _pubs(1200), deletes=[3, 4, 5, 600, 1200])
    df = read(spark, emu, "R1", partitions=4, batch=100)
    assert df.rdd.getNumPartitions() == 4
    got = rows(df)
    assert got == direct_all(emu, "R1")
    assert len(got) == 1195 and got[0][3] == [("K", "0"), ("K", "again"), ("X-Empty", "")]
    first = df.where("seq = 1").collect()[0]
    assert first.stream == "R1"
    us = first.time_ns // 1000  # PySpark hands timestamps back as naive local times
    assert first.time == datetime.fromtimestamp(us // 1_000_000).replace(microsecond=us % 1_000_000)


def test_read_with_a_filter_and_a_start(spark: SparkSession, emu: str) -> None:
    fill(emu, "R2", _pubs(300), deletes=[10])
    got = rows(read(spark, emu, "R2", subject="r2.a.*", start_seq=40, partitions=3, batch=7))
    assert got == direct_all(emu, "R2", seq=40, next_by_subj="r2.a.*")
    assert {subject for _, subject, *_ in got} == {"r2.a.b", "r2.a.c"}


def test_a_read_is_fixed_when_planned(spark: SparkSession, emu: str) -> None:
    """The last sequence is taken when the read is planned: later messages are not in it."""
    fill(emu, "R3", _pubs(50), deletes=[])
    planned = read(spark, emu, "R3", partitions=2).rdd  # planned now
    with NatsClient(emu) as nc:
        nc.publish_acked(iter([("r3.a.b", None, b"late")] * 5))
    assert [r.seq for r in planned.collect()] == list(range(1, 51))
    assert read(spark, emu, "R3").count() == 55  # a new read sees them


def test_the_real_server_gives_the_samerows(spark: SparkSession, emu: str) -> None:
    real = RealServer()
    real_url = f"nats://127.0.0.1:{real.port}"
    try:
        pubs = _pubs(400)
        for url in (emu, real_url):
            fill(url, "RR", pubs, deletes=[7, 8, 399])

        def strip(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            return [(seq, subject, headers, data) for seq, subject, _, headers, data in rows]

        from_real = strip(rows(read(spark, real_url, "RR", partitions=3)))
        assert from_real == strip(rows(read(spark, emu, "RR", partitions=2)))
        assert from_real == strip(direct_all(real_url, "RR"))
    finally:
        real.stop()


def test_write_then_read_round_trips_and_msg_ids_dedupe(spark: SparkSession, emu: str) -> None:
    fill(emu, "W1", [], deletes=[])
    rows = [
        ("w1.a", [("H", "1"), ("H", "2")], bytes(range(256)), "id-1"),
        ("w1.b", [], b"", "id-2"),
        ("w1.a.deep", None, b"\r\n\x00 binary", "id-3"),
    ]
    schema = "subject string, headers array<struct<key:string,value:string>>, data binary, id string"
    df = spark.createDataFrame(rows, schema).repartition(2)
    df.write.format("jetstream").option("url", emu).option("msg_id_column", "id").mode("append").save()
    df.write.format("jetstream").option("url", emu).option("msg_id_column", "id").mode("append").save()  # a re-run
    stored = read(spark, emu, "W1").collect()
    # Rows are counted, not collected by subject: a duplicate stored by the re-run must fail here.
    assert sorted(r.subject for r in stored) == sorted(subject for subject, *_ in rows)
    assert [r.seq for r in sorted(stored, key=lambda r: r.seq)] == [1, 2, 3]
    back = {r.subject: r for r in stored}
    for subject, headers, data, msg_id in rows:
        assert bytes(back[subject].data) == data
        assert [(h.key, h.value) for h in back[subject].headers] == [*(headers or []), ("Nats-Msg-Id", msg_id)]


def test_a_refused_publish_fails_the_write(spark: SparkSession, emu: str) -> None:
    df = spark.createDataFrame([("nobody.listens", b"x")], "subject string, data binary")
    with pytest.raises(Exception, match="publish refused|no responders|503"):
        df.write.format("jetstream").option("url", emu).mode("append").save()


def test_subject_counts_match_stream_info(spark: SparkSession, emu: str) -> None:
    fill(emu, "C1", _pubs(200), deletes=[1, 2])
    with NatsClient(emu) as nc:
        info = nc.request("$JS.API.STREAM.INFO.C1", {"subjects_filter": ">"})
    counts = {r.subject: r.messages for r in subject_counts(read(spark, emu, "C1")).collect()}
    assert counts == info["state"]["subjects"]


def test_next_by_subject_is_a_next_by_subj_batch(spark: SparkSession, emu: str) -> None:
    fill(emu, "N1", _pubs(100), deletes=[15])
    got = [r.seq for r in next_by_subject(read(spark, emu, "N1"), "n1.*.c", 10, 5).collect()]
    want = [m[0] for m in direct_all(emu, "N1", seq=10, next_by_subj="n1.*.c")][:5]
    assert got == want and len(got) == 5


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    picks=st.lists(st.tuples(st.sampled_from(SUBJECTS), st.binary(max_size=6), st.booleans()), min_size=1, max_size=40),
    deletes=st.sets(st.integers(1, 40), max_size=8),
    filters=st.lists(st.sampled_from(FILTERS), min_size=1, max_size=3, unique=True),
    up_to=st.none() | st.integers(1, 40),
)
def test_last_per_subject_equals_multi_last(
    spark: SparkSession,
    emu: str,
    picks: list[tuple[str, bytes, bool]],
    deletes: set[int],
    filters: list[str],
    up_to: int | None,
) -> None:
    pubs = [(s, [("N", str(i))] if h else None, d) for i, (s, d, h) in enumerate(picks)]
    fill(emu, "ML", pubs, deletes=sorted(d for d in deletes if d <= len(pubs)))
    full = [f"ml.{f}" if f != ">" else "ml.>" for f in filters]
    request: dict[str, Any] = {"multi_last": full}
    if up_to is not None:
        request["up_to_seq"] = up_to
    with NatsClient(emu) as nc:
        want = [(m.seq, m.subject, m.headers, m.data) for m in nc.direct_batch("ML", request)]
    view = last_per_subject(read(spark, emu, "ML", partitions=2), full, up_to_seq=up_to)
    got = [(r.seq, r.subject, [(h.key, h.value) for h in r.headers], bytes(r.data)) for r in view.collect()]
    assert got == want


def test_cli_export_view_seed(emu: str, tmp_path: Any, spark: SparkSession) -> None:
    """``jsemu pipeline``: archive a KV-like stream, ask what each key held at a sequence, and
    seed another server from the archive (run in-process; the command shares the session)."""
    from jsemu.cli import main

    fill(emu, "KV", [("k1", None, b"v1"), ("k2", None, b"v2"), ("k1", None, b"v3")], deletes=[])
    out = tmp_path / "kv.parquet"
    assert main(["pipeline", "--master", "local[2]", "export", "--url", emu, "--stream", "KV", "--out", str(out)]) == 0
    view = tmp_path / "view.parquet"
    assert (
        main(
            [
                "pipeline",
                "--master",
                "local[2]",
                "view",
                "--in",
                str(out),
                "--filter",
                "kv.>",
                "--up-to-seq",
                "2",
                "--out",
                str(view),
            ]
        )
        == 0
    )
    assert [(r.subject, bytes(r.data)) for r in spark.read.parquet(str(view)).orderBy("seq").collect()] == [
        ("kv.k1", b"v1"),
        ("kv.k2", b"v2"),
    ]
    with jsemu.Server.in_thread(port=0) as other:
        url = other.server.url
        with NatsClient(url) as nc:
            nc.request(
                "$JS.API.STREAM.CREATE.KV",
                {
                    "name": "KV",
                    "subjects": ["kv.>"],
                    "storage": "memory",
                    "allow_direct": True,
                    "duplicate_window": 60_000_000_000,
                },
            )
        for _ in range(2):  # the second run is deduplicated
            assert main(["pipeline", "--master", "local[2]", "seed", "--in", str(out), "--url", url, "--msg-id"]) == 0
        assert [(m[1], m[4]) for m in direct_all(url, "KV")] == [("kv.k1", b"v1"), ("kv.k2", b"v2"), ("kv.k1", b"v3")]


def test_clients_never_share_an_inbox(emu: str) -> None:
    """Spark's Python workers are forks of one daemon, so objects land at the same addresses:
    an inbox derived from id() was shared by concurrent tasks, which then read each other's
    replies. A client made where the previous one lived must still get its own."""
    seen = set()
    for _ in range(5):
        nc = NatsClient(emu)
        seen.add(nc.inbox)
        nc.close()
        del nc
    assert len(seen) == 5


def test_start_time_and_up_to_time_follow_the_server(spark: SparkSession) -> None:
    """``start_time`` starts the read at the first message at or after it; ``up_to_time`` is
    exclusive, as in a multi_last request (the clock is set for each publish)."""
    from jsemu.timefmt import format_ns

    base = 1_800_000_000_000_000_000
    with jsemu.Server.in_thread(port=0) as srv:
        url = srv.server.url
        srv.control.freeze_clock(base)
        fill(url, "T", [], deletes=[])
        with NatsClient(url) as nc:
            for i in range(10):
                srv.control.set_clock(base + i * 1_000_000_000)
                nc.publish_acked(iter([(f"t.{i % 3}", None, b"%d" % i)]))
            cut = format_ns(base + 6_000_000_000)
            want = [m.seq for m in nc.direct_batch("T", {"multi_last": ["t.>"], "up_to_time": cut})]
        df = read(spark, url, "T", start_time=format_ns(base + 4_000_000_000))
        assert [r.seq for r in df.orderBy("seq").collect()] == list(range(5, 11))
        view = last_per_subject(read(spark, url, "T"), ["t.>"], up_to_time=cut)
        assert [r.seq for r in view.collect()] == want == [4, 5, 6]


@pytest.mark.parametrize(
    ("subjects", "filters"),
    [
        (["0", "01", "02", "1", "10", "2"], ["iw.0*"]),  # a node ends at iw.0: the * matches
        (["01", "1", "10", "2"], ["iw.0*", "iw.1*"]),  # iw.01 alone: no node boundary, nothing
        (["0", "01", "02", "1", "10", "11"], ["iw.1>", "iw.*"]),
    ],
)
def test_last_per_subject_follows_the_server_on_in_token_wildcards(
    spark: SparkSession, emu: str, subjects: list[str], filters: list[str]
) -> None:
    """nats-server's subject tree matches ``m.0*`` by its layout; the view gives its answer."""
    pubs = [(s, None, b"%d" % i) for i, s in enumerate(subjects * 2)]
    real = RealServer()
    real_url = f"nats://127.0.0.1:{real.port}"
    try:
        answers = []
        for url in (emu, real_url):
            fill(url, "IW", pubs, deletes=[1])
            with NatsClient(url) as nc:
                answers.append([(m.seq, m.subject) for m in nc.direct_batch("IW", {"multi_last": filters})])
    finally:
        real.stop()
    assert answers[0] == answers[1]
    view = last_per_subject(read(spark, emu, "IW"), filters)
    assert [(r.seq, r.subject) for r in view.collect()] == answers[0]


def test_readme_spark_example(spark: SparkSession, emu: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Spark example of the documentation (``docs/guides/spark.md``), as written (its server
    address replaced by this package's jsemu; its Parquet files in a temporary directory), in
    the package's Spark session."""
    (block,) = runnable("spark")
    monkeypatch.chdir(tmp_path)
    exec(compile(block.with_url(emu), block.name, "exec"), {"__name__": "__readme__"})  # noqa: S102 - the docs as written
    archived = spark.read.parquet(str(tmp_path / "cfg.parquet"))
    assert archived.count() == 2000
    assert archived.filter("subject = '$KV.cfg.key7'").count() == 40
