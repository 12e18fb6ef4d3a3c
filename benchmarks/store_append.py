"""Memory and append-throughput check for StreamStore (not collected by pytest).

    python -m benchmarks.store_append [--msgs N] [--subjects S] [--shape foo.N|foo.N.bar]

Reports appends per second and RSS growth (first, in a fresh process), then in a second pass
the traced Python heap per stored message (tracemalloc; payloads included, each message has its
own 7-byte payload object).
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

from jsemu.store import ManualClock, MemoryStore, StreamStore


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _subject(shape: str, n: int) -> bytes:
    return b"orders.%d" % n if shape == "foo.N" else b"orders.%d.created" % n


def fill(store: StreamStore, msgs: int, subjects: int, shape: str) -> None:
    append, subject = store.append, _subject
    for i in range(msgs):
        # A fresh subject object per message, as a wire parser would produce.
        append(subject(shape, i % subjects), b"", b"%07d" % (i % 10_000_000))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--msgs", type=int, default=1_000_000)
    ap.add_argument("--subjects", type=int, default=100_000)
    ap.add_argument("--shape", choices=["foo.N", "foo.N.bar"], default="foo.N")
    args = ap.parse_args()

    rss0 = _rss_kib()
    store = MemoryStore(clock=ManualClock())
    started = time.perf_counter()
    fill(store, args.msgs, args.subjects, args.shape)
    elapsed = time.perf_counter() - started
    rss = (_rss_kib() - rss0) * 1024
    started = time.perf_counter()
    for i in range(args.msgs):  # the loop's own cost: building subjects and payloads
        _subject(args.shape, i % args.subjects), b"%07d" % (i % 10_000_000)
    loop = time.perf_counter() - started
    print(
        f"append: {args.msgs / elapsed:,.0f} msgs/s ({elapsed:.2f}s; {args.msgs / (elapsed - loop):,.0f} msgs/s "
        f"without the {loop:.2f}s spent building subjects/payloads); RSS growth {rss / args.msgs:.0f} bytes/msg"
    )
    del store
    gc.collect()

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    store = MemoryStore(clock=ManualClock())
    fill(store, args.msgs, args.subjects, args.shape)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert store.msgs == args.msgs and store.num_subjects == args.subjects
    print(
        f"heap: {used / args.msgs:.1f} bytes/msg ({used / 2**20:.1f} MiB, {args.msgs} msgs, {args.subjects} subjects)"
    )


if __name__ == "__main__":
    main()
