"""Direct Get request rate, jsemu vs the real nats-server.

Both servers run as their own processes. A memory stream with ``allow_direct`` holds one
small message on each of K subjects (a KV-like bucket); a raw-socket client pipelines N
requests of one form and counts the replies. Forms: subject-appended last-by-subject
(what KV ``get`` sends), payload ``{"seq":n}``, and a 10-message batch.

    python -m benchmarks.direct_get [--requests 100000] [--subjects 10000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from conftest import RealServer

from benchmarks.stream_ingest import Conn


def _count(conn: Conn, expected: int, marker: bytes) -> None:
    seen = 0
    tail = b""
    while seen < expected:
        chunk = tail + conn.sock.recv(1 << 20)
        seen += chunk.count(marker)
        tail = chunk[-(len(marker) - 1) :]


def _frames(requests: int, build: Callable[[int], bytes]) -> list[bytes]:
    return [b"".join(build(i) for i in range(start, min(start + 5000, requests))) for start in range(0, requests, 5000)]


def measure(kind: str, requests: int, subjects: int) -> dict[str, float]:
    server = RealServer(jsemu_process=(kind == "jsemu"))
    try:
        conn = Conn(server.port)
        cfg = {"name": "KV", "subjects": ["kv.>"], "storage": "memory", "allow_direct": True}
        conn.request("$JS.API.STREAM.CREATE.KV", json.dumps(cfg).encode())
        pubs = b"".join(b"PUB kv.%d 5\r\nvalue\r\n" % i for i in range(subjects))
        conn.sock.sendall(pubs)
        while conn.request("$JS.API.STREAM.INFO.KV")["state"]["messages"] < subjects:
            time.sleep(0.01)
        forms: dict[str, tuple[Callable[[int], bytes], int]] = {
            "last_by_subj (KV get)": (
                lambda i: b"PUB $JS.API.DIRECT.GET.KV.kv.%d _INBOX.b.a 0\r\n\r\n" % (i % subjects),
                1,
            ),
            "by seq": (
                lambda i: (
                    b'PUB $JS.API.DIRECT.GET.KV _INBOX.b.a %d\r\n{"seq":%d}\r\n'
                    % (len(b'{"seq":%d}' % (i % subjects + 1)), i % subjects + 1)
                ),
                1,
            ),
            "batch of 10": (  # starts far enough from the end that every batch is full
                lambda i: (
                    b'PUB $JS.API.DIRECT.GET.KV _INBOX.b.a %d\r\n{"seq":%d,"batch":10}\r\n'
                    % (len(b'{"seq":%d,"batch":10}' % (i % (subjects - 10) + 1)), i % (subjects - 10) + 1)
                ),
                11,
            ),
        }
        result = {}
        for label, (build, replies_each) in forms.items():
            n = requests if replies_each == 1 else requests // 10
            chunks = _frames(n, build)
            start = time.perf_counter()
            for chunk in chunks:
                conn.sock.sendall(chunk)
            _count(conn, n * replies_each, b"MSG _INBOX.b.a ")
            result[label] = n / (time.perf_counter() - start)
        return result
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    args = parser.parse_args()
    rows = {kind: measure(kind, args.requests, args.subjects) for kind in ("real", "jsemu")}
    print(f"Direct Get, {args.subjects:,} subjects, pipelined requests (requests/s)")
    print(f"{'form':<24}{'nats-server':>14}{'jsemu':>14}{'ratio':>8}")
    for label in rows["real"]:
        real, emu = rows["real"][label], rows["jsemu"][label]
        print(f"{label:<24}{real:>14,.0f}{emu:>14,.0f}{emu / real:>8.2f}")


if __name__ == "__main__":
    main()
