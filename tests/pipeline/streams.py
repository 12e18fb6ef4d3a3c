"""Helpers of the pipeline tests: fill a stream, read it the Direct Get way (the reference)."""

from __future__ import annotations

from typing import Any

from jsemu.pipeline.client import JetStreamError, NatsClient

Pub = tuple[str, list[tuple[str, str]] | None, bytes]


def fill(url: str, stream: str, pubs: list[Pub], deletes: list[int], **config: Any) -> None:
    """(Re)create ``stream`` on ``<stream lower>.>``, publish ``pubs`` (subjects relative), delete."""
    with NatsClient(url) as nc:
        try:
            nc.request(f"$JS.API.STREAM.DELETE.{stream}")
        except JetStreamError:
            pass
        cfg = {"name": stream, "subjects": [f"{stream.lower()}.>"], "storage": "memory", "allow_direct": True}
        nc.request(f"$JS.API.STREAM.CREATE.{stream}", {**cfg, **config})
        nc.publish_acked(iter([(f"{stream.lower()}.{s}", h, d) for s, h, d in pubs]))
        for seq in deletes:
            nc.request(f"$JS.API.STREAM.MSG.DELETE.{stream}", {"seq": seq})


def direct_all(url: str, stream: str, **request: Any) -> list[tuple[Any, ...]]:
    """Every message the way a Direct Get batch reads it: (seq, subject, time_ns, headers, data)."""
    out = []
    with NatsClient(url) as nc:
        seq = request.pop("seq", 1)
        while True:
            got = list(nc.direct_batch(stream, {"seq": seq, "batch": 500, **request}))
            if not got:
                return out
            out += [(m.seq, m.subject, m.time_ns, m.headers, m.data) for m in got]
            seq = got[-1].seq + 1


def rows(df: Any) -> list[tuple[Any, ...]]:
    """A DataFrame of the jetstream schema as ``direct_all`` tuples, by sequence."""
    return [
        (r.seq, r.subject, r.time_ns, [(h.key, h.value) for h in r.headers], bytes(r.data))
        for r in df.orderBy("seq").collect()
    ]


def read(spark: Any, url: str, stream: str, **options: Any) -> Any:
    reader = spark.read.format("jetstream").option("url", url).option("stream", stream)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()
