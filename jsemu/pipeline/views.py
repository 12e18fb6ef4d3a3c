"""Direct Get answers at scale: DataFrame functions over rows of the ``jetstream`` schema.

``last_per_subject`` is ``multi_last`` (without the 1024-subject cap: this is the bulk path),
``next_by_subject`` is a ``next_by_subj`` batch, ``subject_counts`` is stream info's
``subjects`` with first and last sequences. Filters are NATS subject filters: ``*`` matches
one token and ``>`` the rest, as whole tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..timefmt import parse_rfc3339_ns

__all__ = ["filter_regex", "last_per_subject", "matches", "next_by_subject", "subject_counts"]


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


def matches(filters: str | Sequence[str]) -> Column:
    """Whether the row's subject matches any of ``filters``."""
    if isinstance(filters, str):
        filters = [filters]
    cond = F.lit(False)
    for f in filters:
        cond = (
            cond | (F.col("subject") == f)
            if "*" not in f and ">" not in f
            else cond | F.col("subject").rlike(filter_regex(f))
        )
    return cond


def _time_ns(value: str | int | datetime) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, datetime):
        return int(value.timestamp()) * 1_000_000_000 + value.microsecond * 1000
    return parse_rfc3339_ns(value)


def last_per_subject(
    df: DataFrame,
    filters: str | Sequence[str],
    up_to_seq: int | None = None,
    up_to_time: str | int | datetime | None = None,
) -> DataFrame:
    """The newest message of each subject matching ``filters``, ascending by sequence: what a
    ``multi_last`` Direct Get answers. ``up_to_seq`` is inclusive; ``up_to_time`` (RFC 3339,
    Unix ns or a datetime) is exclusive, as on the server."""
    rows = df.where(matches(filters))
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
