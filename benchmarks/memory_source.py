"""A Python data source with the ``jetstream`` schema whose rows come from no server:
``format("memory_rows")`` with the options ``rows`` and ``partitions`` (default 10). Each task
builds its Arrow record batches in memory (one batch of 20,000 rows made once per worker, its
``seq`` column renumbered per batch, the rest shared), so a read costs what any Python data
source's read costs in Spark, less the reading: ``benchmarks.pipeline_first --source memory``
measures that floor. Its imports are the few a worker needs (it is pickled by reference).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

_BATCH = 20_000
_template: Any = None


class _Span(InputPartition):
    def __init__(self, first: int, last: int) -> None:
        self.first, self.last = first, last


def _batch(first: int, n: int) -> Any:
    """``n`` rows of the ``jetstream`` schema numbered from ``first`` (built once per worker)."""
    import pyarrow as pa

    from jsemu.pipeline.columns import ARROW_SCHEMA

    global _template
    if _template is None or _template.num_rows < n:
        rows = max(n, _BATCH)
        stamps = pa.array([1_700_000_000_000_000_000 + i for i in range(rows)], pa.int64())
        _template = pa.RecordBatch.from_arrays(
            [
                pa.array(["P"] * rows, pa.string()),
                pa.array(range(rows), pa.int64()),
                pa.array([f"p.{i % 10_000}" for i in range(rows)], pa.string()),
                stamps.cast(pa.timestamp("ns", tz="UTC")).cast(pa.timestamp("us", tz="UTC"), safe=False),
                stamps,
                pa.array([[]] * rows, ARROW_SCHEMA.field("headers").type),
                pa.array([b"hello"] * rows, pa.binary()),
            ],
            schema=ARROW_SCHEMA,
        )
    seqs = pa.array(range(first, first + n), pa.int64())
    return _template.slice(0, n).set_column(1, "seq", seqs)


class _MemoryReader(DataSourceReader):
    def __init__(self, rows: int, partitions: int) -> None:
        self.rows, self.count = rows, partitions

    def partitions(self) -> list[_Span]:
        step = -(-self.rows // self.count)
        return [_Span(s, min(self.rows, s + step - 1)) for s in range(1, self.rows + 1, step)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, _Span)
        seq = partition.first
        while seq <= partition.last:
            n = min(_BATCH, partition.last - seq + 1)
            yield _batch(seq, n)
            seq += n


class MemorySource(DataSource):
    """``format("memory_rows")``: ``rows`` rows (option), ``partitions`` (default 10)."""

    @classmethod
    def name(cls) -> str:
        return "memory_rows"

    def schema(self) -> str:
        from jsemu.pipeline.source import SCHEMA

        return SCHEMA

    def reader(self, schema: Any) -> _MemoryReader:
        return _MemoryReader(int(self.options["rows"]), int(self.options.get("partitions", "10")))
