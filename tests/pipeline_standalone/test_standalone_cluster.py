"""The pipeline on a Spark standalone cluster (``spark://``): executors in processes of their
own, started by the cluster's workers, read from and write to jsemu over TCP.

The cases are ``tests/pipeline``'s, imported so pytest runs them again here with this
package's fixtures (``spark`` on the cluster, ``emu`` a jsemu on a TCP port): the batch read
against Direct Get batches, the same rows from nats-server, a write with ``Nats-Msg-Id``
deduplication, a view (``subject_counts``) and a streaming read restarted from its checkpoint
(a few of the cases, chosen to keep the module short: each Spark job on a cluster costs more
than on ``local[*]``). The tests of this module check what differs on a cluster: the tasks run in
the executors, not the driver, and the executors run this interpreter and this jsemu
(``jsemu.pipeline.workers``), not whatever their workers' environment would give them.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip(
    "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' (and Java 17) runs the pipeline tests"
)

from pipeline.test_pipeline import (
    test_read_equals_direct_get_batches,
    test_subject_counts_match_stream_info,
    test_the_real_server_gives_the_samerows,
    test_write_then_read_round_trips_and_msg_ids_dedupe,
)
from pipeline.test_streaming import (
    test_a_restarted_query_sees_every_message_once,
)
from support.doc_blocks import runnable

import jsemu

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from jsemu.testing.spark_cluster import SparkStandalone

__all__ = [
    "test_a_restarted_query_sees_every_message_once",
    "test_read_equals_direct_get_batches",
    "test_subject_counts_match_stream_info",
    "test_the_real_server_gives_the_samerows",
    "test_write_then_read_round_trips_and_msg_ids_dedupe",
]


def test_tasks_run_in_executors_with_this_python_and_this_jsemu(spark: SparkSession, cluster: SparkStandalone) -> None:
    """Two executors (one per worker), neither of them this process; their Python workers run
    this interpreter and import the jsemu this process imported, though the workers were
    started without either on their path."""

    def where_tasks_run(_: Any) -> Any:  # nested: pickled by value (executors cannot import tests/)
        import os
        import sys

        import jsemu

        yield (os.getpid(), sys.executable, os.path.abspath(jsemu.__file__))

    sc = spark.sparkContext
    assert sc.master == cluster.url
    assert sc._jsc.sc().getExecutorMemoryStatus().size() == 3  # type: ignore[union-attr] # the driver and two executors
    seen = set(sc.parallelize(range(8), 8).mapPartitions(where_tasks_run).collect())
    pids = {pid for pid, _, _ in seen}
    assert os.getpid() not in pids and len(pids) >= 2
    assert {(exe, path) for _, exe, path in seen} == {(sys.executable, os.path.abspath(jsemu.__file__))}


def test_the_guide_example_runs_on_the_cluster(spark: SparkSession, emu: str) -> None:
    """The standalone example of ``docs/guides/spark.md`` as written (its server address
    replaced by this package's jsemu; its ``getOrCreate`` finds the session already on the
    cluster, as the guide's ``local[*]`` example finds ``tests/pipeline``'s)."""
    (block,) = runnable("standalone")
    scope: dict[str, Any] = {"__name__": "__guide__"}
    exec(compile(block.with_url(emu), block.name, "exec"), scope)  # noqa: S102 - the docs as written
    assert scope["spark"] is spark
    assert scope["per_subject"] == {f"orders.{i}": 50 for i in range(4)}
