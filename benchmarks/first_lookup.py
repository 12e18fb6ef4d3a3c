"""The suite's ``firstlookup`` section: the first wildcard lookups on a stream of many distinct
subjects, on a fresh server (``python -m benchmarks.first_lookup [SUBJECTS] [ROUNDS]`` runs it
alone, alternating the servers, and prints each figure).

jsemu keeps the index for wildcard filters (the subject tree) out of the publish path and brings
it up to date on the first lookup that needs it; nats-server keeps its tree up to date at store
time. So the first lookup after a big ingest is the one to measure: on each server, a memory
stream ``W`` of ``--messages`` (M) distinct subjects ``w.b<i % 100>.k<i>`` (and every 1,000th
``w.s.k<i>``) is filled with acked publishes, then

* the first Direct Get ``last_by_subj`` with a wildcard (``w.b7.*``, M/100 subjects), timed alone;
* then the first ``multi_last`` on another wildcard (``w.s.*``, M/1,000 subjects);
* then ``STREAM.INFO`` with ``subjects_filter`` on a third (``w.b9.*``).

Each figure is one request's wall time (milliseconds, client side); the machine must be otherwise
idle for it to mean much (``--runs`` gives medians). Run alone, it also prints the server's CPU time
for each request (``/proc/<pid>/stat``, 10 ms ticks), which a loaded machine disturbs less.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.suite import Row, Sizes

BUCKETS = 100


SMALL = 1000  # one subject in SMALL is ``w.s.k<i>``: a multi_last answer under its 1,024 limit


def _subjects(count: int) -> list[bytes]:
    return [b"w.s.k%d" % i if i % SMALL == 0 else b"w.b%d.k%d" % (i % BUCKETS, i) for i in range(count)]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` so far, in seconds (clock-tick resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: The server's CPU seconds for each request of the last :func:`measure` (``main`` prints them:
#: on a loaded machine they say more than the wall times).
CPU: dict[str, float] = {}


def _timed(conn: object, subject: str, body: dict[str, object], replies: int) -> float:
    """Seconds from sending one request to its ``replies``-th reply (a Direct Get batch ends in an
    EOB status, which is counted)."""
    from benchmarks.client import Conn

    assert isinstance(conn, Conn)
    payload = json.dumps(body).encode()
    t0 = time.perf_counter()
    conn.sock.sendall(b"PUB %s _INBOX.b.t %d\r\n%s\r\n" % (subject.encode(), len(payload), payload))
    seen = 0
    while seen < replies:
        frame = conn._next()
        if frame.op in (b"MSG", b"HMSG"):
            seen += 1
        elif frame.op == b"PING":
            conn.sock.sendall(b"PONG\r\n")
    return time.perf_counter() - t0


def measure(kind: str, count: int) -> dict[str, float]:
    """The three first lookups' times (seconds) on a fresh server of ``kind``."""
    from benchmarks.client import Conn
    from benchmarks.suite import fill_acked, start

    server = start(kind)
    pid = server.proc.pid
    try:
        conn = Conn(server.port)
        cfg = {"name": "W", "subjects": ["w.>"], "storage": "memory", "allow_direct": True}
        reply = conn.request("$JS.API.STREAM.CREATE.W", json.dumps(cfg).encode())
        if "error" in reply:
            raise RuntimeError(reply)
        fill_acked(conn, "W", iter(_subjects(count)), count)
        per = len(range(0, count, SMALL))
        requests = {
            "last_by_subj": ("$JS.API.DIRECT.GET.W", {"last_by_subj": "w.b7.*"}, 1),
            "multi_last": ("$JS.API.DIRECT.GET.W", {"multi_last": ["w.s.*"]}, per + 1),
            "subjects_filter": ("$JS.API.STREAM.INFO.W", {"subjects_filter": "w.b9.*"}, 1),
        }
        walls = {}
        for key, (subject, body, replies) in requests.items():
            cpu = cpu_seconds(pid)
            walls[key] = _timed(conn, subject, body, replies)
            CPU[key] = cpu_seconds(pid) - cpu
        return walls
    finally:
        server.stop()


def first_lookup_rows(kind: str, sizes: Sizes, rows: dict[str, Row]) -> None:
    from benchmarks.suite import Row

    count = sizes.messages
    names = {
        "last_by_subj": f"first wildcard last_by_subj on a {count:,}-subject stream, fresh server",
        "multi_last": f"  then, index built, first multi_last of another wildcard ({len(range(0, count, SMALL)):,} subjects)",
        "subjects_filter": "  then, index built, first STREAM.INFO subjects_filter of a third",
    }
    for key, seconds in measure(kind, count).items():
        rows.setdefault(f"firstlookup/{key}", Row("firstlookup", names[key], "ms", False)).values[kind] = seconds * 1e3


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    runs: dict[str, dict[str, list[float]]] = {"real": {}, "jsemu": {}, "real cpu": {}, "jsemu cpu": {}}
    for _ in range(rounds):
        for kind in ("real", "jsemu"):  # alternating, so load on the machine hits both alike
            for key, seconds in measure(kind, count).items():
                runs[kind].setdefault(key, []).append(seconds * 1e3)
                runs[f"{kind} cpu"].setdefault(key, []).append(CPU[key] * 1e3)
    for kind, figures in runs.items():
        for key, ms in figures.items():
            each = " ".join(f"{v:.1f}" for v in ms)
            print(f"{kind:9} {key:16} median {statistics.median(ms):8.1f} ms  (each: {each})")


if __name__ == "__main__":
    main()
