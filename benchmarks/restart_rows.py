"""The suite's ``restart`` section: a file stream's restart, nats-server and jsemu side by
side (``benchmarks/restart.py`` does the work). Two stores, sized by ``--messages`` (M):

* M acknowledged publishes, all kept (``max_msgs`` M);
* 10 M publishes of which M are kept: the history that compaction must keep out of a restart.

Each server publishes once, stops (SIGTERM), then starts on its store :data:`RESTARTS` times;
the row is the median time from spawn to the first ``STREAM.INFO`` answer, the next row the
spread ((max - min) / median) of those starts.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from benchmarks.restart import measure

if TYPE_CHECKING:
    from benchmarks.suite import Row, Sizes

RESTARTS = 5


def restart_rows(kind: str, sizes: Sizes, rows: dict[str, Row]) -> None:
    from benchmarks.suite import Row

    kept = sizes.messages
    for key, publishes in (("kept", kept), ("history", 10 * kept)):
        result = measure(kind, publishes, kept, RESTARTS)
        median = statistics.median(result.restarts)
        name = f"{publishes:,} publishes, {kept:,} kept: start, median of {RESTARTS}"
        rows.setdefault(f"restart/{key}", Row("restart", name, "ms", False)).values[kind] = median * 1e3
        spread = (max(result.restarts) - min(result.restarts)) / median * 100
        spread_row = Row("restart", "  spread of its starts ((max-min)/median)", "%", False, compared=False)
        rows.setdefault(f"restart/{key}_spread", spread_row).values[kind] = spread
