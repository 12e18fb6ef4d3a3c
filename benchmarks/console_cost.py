"""What browsing the console costs a publisher: ``python -m benchmarks.console_cost``.

A ``jsemu serve`` process holds a 1,000,000-message stream (``BIG``). A publisher sends
acked JetStream publishes to another stream (``BENCH``) in rounds, alternately alone and
while a browser pages through ``BIG`` on the console (``/console/api/streams/BIG/messages``:
pages of 100 from random sequences, last-by-subject and ``multi_last`` queries, and the
stream's info), one request every ``--interval`` seconds (0: back to back, the worst case).
It prints the publisher's msg/s, medians over the rounds with their spread, and the cost:
of the medians, and the median of each pair's own (a round alone, then one browsing).
Each round's browsing happens in a thread of this process; the publisher's send and count
loop spends its time in socket calls, which release the GIL.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
import urllib.request

from benchmarks.client import Conn, build_frames
from benchmarks.suite import count_replies, create, fill
from tests.support.servers import RealServer

BIG = 1_000_000


def _browse(base: str, stop: threading.Event, interval: float, counts: list[int]) -> None:
    paths = [
        lambda: f"/console/api/streams/BIG/messages?mode=seq&seq={random.randint(1, BIG)}&batch=100",
        lambda: f"/console/api/streams/BIG/messages?mode=last&subject=big.{random.randint(0, 999)}",
        lambda: "/console/api/streams/BIG/messages?mode=multi_last&subject=big.1*&batch=100",
        lambda: f"/console/api/streams/BIG/messages?mode=next&subject=big.7&seq={random.randint(1, BIG)}&batch=50",
        lambda: "/console/api/streams/BIG?subjects=big.99*",
        lambda: "/console/api/overview",
    ]
    i = 0
    while not stop.is_set():
        with urllib.request.urlopen(base + paths[i % len(paths)](), timeout=30) as resp:
            resp.read()
        counts[0] += 1
        i += 1
        if interval:
            stop.wait(interval)


def _publish_round(conn: Conn, frames: list[bytes], total: int) -> float:
    t0 = time.perf_counter()
    for chunk in frames:
        conn.sock.sendall(chunk)
    count_replies(conn.sock, total, time.monotonic() + 120)
    return total / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=100_000, help="acked publishes per round")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of each kind, alternated")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between console requests (0: none)")
    args = ap.parse_args()
    server = RealServer(jsemu_process=True, conf_text="http_port: -1")
    try:
        conn = Conn(server.port)
        create(conn, "BIG", ["big.>"])
        big = [c.replace(b"PUB bench.", b"PUB big.") for c in build_frames(BIG, 1000, 16, reply=False)]
        fill(conn, "BIG", iter(big), BIG)
        create(conn, "BENCH", ["bench.>"])
        frames = build_frames(args.messages, 1000, 16, reply=True)
        _publish_round(conn, frames, args.messages)  # warm up
        alone: list[float] = []
        browsing: list[float] = []
        pages: list[int] = []
        for _ in range(args.rounds):
            conn.request("$JS.API.STREAM.PURGE.BENCH")
            alone.append(_publish_round(conn, frames, args.messages))
            conn.request("$JS.API.STREAM.PURGE.BENCH")
            stop = threading.Event()
            counts = [0]
            browser = threading.Thread(target=_browse, args=(server.monitor_url, stop, args.interval, counts))
            browser.start()
            time.sleep(0.05)
            browsing.append(_publish_round(conn, frames, args.messages))
            stop.set()
            browser.join()
            pages.append(counts[0])
        a, b = statistics.median(alone), statistics.median(browsing)
        # Each pair ran back to back: its own ratio is less exposed to a neighbour's load.
        costs = sorted(100 * (1 - y / x) for x, y in zip(alone, browsing))
        result = {
            "alone_msgs_per_s": round(a),
            "alone_spread": [round(min(alone)), round(max(alone))],
            "browsing_msgs_per_s": round(b),
            "browsing_spread": [round(min(browsing)), round(max(browsing))],
            "console_requests_per_round": pages,
            "interval_s": args.interval,
            "cost_percent_of_medians": round(100 * (a - b) / a, 1),
            "cost_percent_median_of_pairs": round(statistics.median(costs), 1),
            "cost_percent_pairs": [round(c, 1) for c in costs],
        }
        print(json.dumps(result, indent=2))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
