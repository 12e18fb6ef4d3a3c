"""Direct Get answers at scale: DataFrame functions over rows of the ``jetstream`` schema.

``last_per_subject`` is ``multi_last`` (without the 1024-subject cap: this is the bulk path),
``next_by_subject`` is a ``next_by_subj`` batch, ``subject_counts`` is stream info's
``subjects`` with first and last sequences. Filters are NATS subject filters: ``*`` matches
one token and ``>`` the rest, as whole tokens. A ``*`` or ``>`` inside a token (``m.0*``) is
what nats-server makes of it: its subject tree matches such a filter by the layout of the
subjects it holds (``m.0*`` matches ``m.01`` only when ``m.01`` and ``m.02`` exist), so those
filters are answered by ``jsemu.store.go_stree`` over the distinct subjects of the rows, as the
server would answer for a stream holding exactly those rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..store.go_stree import match_keys
from ..timefmt import parse_rfc3339_ns

__all__ = [
    "filter_regex",
    "in_token_wildcard",
    "last_per_subject",
    "matches",
    "next_by_subject",
    "server_matches",
    "subject_counts",
]


def in_token_wildcard(filter: str) -> bool:
    """Whether some token holds ``*`` or ``>`` without being exactly one (``m.0*``)."""
    return any(tok not in ("*", ">") and ("*" in tok or ">" in tok) for tok in filter.split("."))


def server_matches(df: DataFrame, filter: str) -> list[str]:
    """The subjects of ``df`` that nats-server's subject tree matches with ``filter`` (one
    with an in-token wildcard), computed on the driver from the candidate subjects only."""
    head = filter.lstrip(".")
    cut = [i for i in (head.find("*"), head.find(">")) if i >= 0]
    head = head[: min(cut)] if cut else head
    candidates = df.where(F.col("subject").startswith(head)).select("subject").distinct().collect()
    found = match_keys(((row.subject.encode(), None) for row in candidates), filter.encode())
    return [subject.decode() for subject, _ in found]


def filter_regex(filter: str) -> str:
    """A regular expression (for ``rlike``) matching the subjects a NATS filter matches."""
    parts = []
    tokens = filter.split(".")
    for i, token in enumerate(tokens):
        if token == ">" and i == len(tokens) - 1:
            parts.append("[^.]+(\\.[^.]+)*")
        elif token == "*":
            parts.append("[^.]+")
        else:
            parts.append(re.escape(token))
    return "^" + "\\.".join(parts) + "$"


def matches(filters: str | Sequence[str], df: DataFrame | None = None) -> Column:
    """Whether the row's subject matches any of ``filters``. With ``df``, a filter with an
    in-token wildcard matches what the server's subject tree matches among ``df``'s subjects
    (``multi_last``); without, such a token is literal."""
    if isinstance(filters, str):
        filters = [filters]
    cond = F.lit(False)
    for f in filters:
        if df is not None and in_token_wildcard(f):
            cond = cond | F.col("subject").isin(server_matches(df, f))
        elif "*" not in f and ">" not in f:
            cond = cond | (F.col("subject") == f)
        else:
            cond = cond | F.col("subject").rlike(filter_regex(f))
    return cond


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _time_ns(value: str | int | datetime) -> int:
    """Unix nanoseconds of ``up_to_time``; a naive datetime or a zoneless string is refused:
    the machine's zone would be a guess, and the cut would move with it."""
    if isinstance(value, int):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"up_to_time {value!r} has no time zone: pass an aware datetime "
                "(e.g. datetime(..., tzinfo=timezone.utc)), an RFC 3339 string or Unix nanoseconds"
            )
        return (value - _EPOCH) // timedelta(microseconds=1) * 1000
    try:
        return parse_rfc3339_ns(value)
    except ValueError:
        raise ValueError(f"up_to_time {value!r} is not RFC 3339 with a zone (e.g. 2026-01-02T03:04:05Z)") from None


def last_per_subject(
    df: DataFrame,
    filters: str | Sequence[str],
    up_to_seq: int | None = None,
    up_to_time: str | int | datetime | None = None,
) -> DataFrame:
    """The newest message of each subject matching ``filters``, ascending by sequence: what a
    ``multi_last`` Direct Get answers. ``up_to_seq`` is inclusive; ``up_to_time`` (RFC 3339,
    Unix ns or a datetime) is exclusive, as on the server."""
    rows = df.where(matches(filters, df))
    if up_to_seq is not None:
        rows = rows.where(F.col("seq") <= up_to_seq)
    if up_to_time is not None:
        rows = rows.where(F.col("time_ns") < _time_ns(up_to_time))
    newest = Window.partitionBy("subject").orderBy(F.col("seq").desc())
    return rows.withColumn("_n", F.row_number().over(newest)).where(F.col("_n") == 1).drop("_n").orderBy("seq")


def next_by_subject(df: DataFrame, filter: str, from_seq: int, batch: int) -> DataFrame:
    """Up to ``batch`` messages matching ``filter`` from sequence ``from_seq`` on, ascending."""
    return df.where(matches(filter) & (F.col("seq") >= from_seq)).orderBy("seq").limit(batch)


def subject_counts(df: DataFrame, filter: str = ">") -> DataFrame:
    """Per subject: messages, first and last sequence (stream info ``subjects``, with more)."""
    return (
        df.where(matches(filter))
        .groupBy("subject")
        .agg(F.count("*").alias("messages"), F.min("seq").alias("first_seq"), F.max("seq").alias("last_seq"))
        .orderBy("subject")
    )
