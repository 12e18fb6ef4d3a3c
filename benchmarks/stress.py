"""Stress harness: ``python -m benchmarks.stress [--server jsemu|real|both] [--only ...]``.

Runs, against ``jsemu serve`` and/or ``nats-server -js`` as processes on loopback (bounded
in count and time), and prints a table row per server for each scenario:

* ``many``: ``--connections`` clients (default 1,000) at once for ``--duration`` seconds, each
  one request at a time: acked publishes with a ``Nats-Msg-Id`` to a file stream, Direct Gets,
  pull fetches acked with a reply, core publishes received by plain subscriptions. Protocol
  errors, acked publishes and how many of them are missing at the end, p50/p99 latency, the
  server's peak RSS (VmHWM) and CPU seconds.
* ``slow``: ``--slow`` subscribers that never read among ``--fast`` ones reading everything
  while publishers flood a subject; the server (``max_pending`` ``--max-pending``) must cut the
  slow ones (``/varz`` ``slow_consumers``) and the fast ones' largest gap between messages.
* ``crash``: ``--trials`` times: acked publishes and AckSync'd acks of a durable pull consumer,
  SIGKILL at a random moment, restart on the same store; every acked publish stored (by
  sequence and by Msg-Id), no message half there, the ack floor never going back between restarts;
  acks confirmed by their reply but forgotten by the kill are counted (both servers write consumer
  state behind the acks: about the last 100 ms are lost).
* ``wsfuzz``: ``--ws-fuzz`` seeded hostile sockets on the WebSocket port (``stress_ws.py``:
  garbage, bad upgrades, handshakes never finished, random frames in random pieces, a 2 MB
  frame, a 50 MB deflate bomb) while TCP and WebSocket bystanders publish and subscribe: none
  of their messages may be lost; with both servers ``--ws-compare`` reactions compared.
* ``fuzz``: ``--fuzz`` seeded mutated inputs (protocol lines, API JSON bodies): internal errors
  (a traceback or handler failure in the log, a panic, the server dying), closes with and
  without ``-ERR`` (with both servers: jsemu's silent closes where nats-server answered); with
  both servers, ``--compare`` of them sent to each on fresh connections and the answers compared.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.stress_crash import crash_trials
from benchmarks.stress_fuzz import compare, fuzz, inputs
from benchmarks.stress_many import many_connections, slow_consumers
from benchmarks.stress_util import ServerProc, raise_nofile
from benchmarks.stress_ws import ws_compare, ws_fuzz, ws_inputs, ws_server

SCENARIOS = ("many", "slow", "crash", "fuzz", "wsfuzz")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 or math.isnan(v) else f"{v:.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def table(title: str, rows: dict[str, dict[str, Any]], columns: list[str]) -> str:
    cells = [["server", *columns]] + [[kind, *(_fmt(r.get(c, "")) for c in columns)] for kind, r in rows.items()]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = [title] + [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in cells
    ]
    return "\n".join(lines)


def _label(kind: str) -> str:
    return "nats-server" if kind == "real" else "jsemu"


def run(args: argparse.Namespace, kinds: list[str], out: dict[str, Any]) -> list[str]:
    """Runs the chosen scenarios; returns the failures (empty when every check holds)."""
    failures: list[str] = []
    if "many" in args.only:
        rows = {}
        for kind in kinds:
            srv = ServerProc(kind)
            try:
                r = many_connections(srv, args.connections, args.duration, args.seed)
                r["internal"] = len(srv.internal_errors())
            finally:
                srv.close()
            rows[_label(kind)] = r
            if r["errors"] or r["missing"] or r["internal"] or r["core_lost"]:
                failures.append(f"many/{kind}: {r['errors']} errors {r['error_samples']}, {r['missing']} missing")
        print(
            table(
                f"many: {args.connections:,} connections x {args.duration:g}s (acked pubs, Direct Gets, fetch+AckSync, core pub/sub)",
                rows,
                [
                    "errors",
                    "acked_pubs",
                    "missing",
                    "gets",
                    "fetched",
                    "core_pubs",
                    "core_received",
                    "core_lost",
                    "p50_ms",
                    "p99_ms",
                    "peak_rss_mb",
                    "cpu_s",
                    "internal",
                ],
            ),
            flush=True,
        )
        out["many"] = rows
    if "slow" in args.only:
        rows = {}
        for kind in kinds:
            srv = ServerProc(
                kind, config={"max_pending": args.max_pending, "max_payload": min(1 << 20, args.max_pending)}
            )
            try:
                r = slow_consumers(srv, args.fast, args.slow, args.duration, args.rate, args.size)
            finally:
                srv.close()
            rows[_label(kind)] = r
            if r["slow_cut"] != args.slow or r["fast_cut"] or r["fast_complete"] != args.fast:
                failures.append(f"slow/{kind}: {r}")
        print(
            table(
                f"slow: {args.slow} never-reading among {args.fast} fast subscribers, {args.rate:,} msg/s x {args.size} B "
                f"for {args.duration:g}s, max_pending {args.max_pending:,}",
                rows,
                [
                    "published",
                    "flood_s",
                    "slow_cut",
                    "varz_slow_consumers",
                    "fast_cut",
                    "fast_complete",
                    "max_stall_ms",
                    "median_max_stall_ms",
                ],
            ),
            flush=True,
        )
        out["slow"] = rows
    if "crash" in args.only:
        rows = {}
        for kind in kinds:
            r = crash_trials(kind, args.trials, args.seed, args.kill_within)
            rows[_label(kind)] = r
            if r["missing"] or r["corrupt"] or r["dedupe_lost"] or r["floor_back"] or r["internal"]:
                failures.append(f"crash/{kind}: {r['problems']}")
        print(
            table(
                f"crash: {args.trials} SIGKILL trials on one store",
                rows,
                [
                    "acked_pubs",
                    "confirmed_acks",
                    "missing",
                    "corrupt",
                    "dedupe_lost",
                    "floor_back",
                    "acks_forgotten_trials",
                    "ack_loss_max_ms",
                    "errors",
                    "internal",
                    "restart_median_s",
                ],
            ),
            flush=True,
        )
        for label, r in rows.items():
            for p in r["problems"][:5]:
                print(f"  {label}: {p}")
        out["crash"] = rows
    if "fuzz" in args.only:
        items = inputs(args.seed, args.fuzz)
        rows = {}
        results = {}
        for kind in kinds:
            srv = ServerProc(kind)
            try:
                results[kind] = res = fuzz(srv, items)
            finally:
                srv.close()
            rows[_label(kind)] = {
                "inputs": res.inputs,
                "per_s": res.inputs / res.seconds,
                "err_closes": res.err_closes,
                "silent_drops": res.silent_drops,
                "stalls": res.stalls,
                "resets": res.resets,
                "json_500": res.code_500,
                "internal": len(res.internal),
                "died": res.server_died,
            }
            for line in res.internal[:3]:
                print(f"  {_label(kind)} log: {line[:200]}")
        if "real" in results and "jsemu" in results:
            # nats-server itself closes without -ERR on some bad lines (PUB without a size):
            # jsemu's drops of inputs nats-server answered are the suspicious ones.
            extra = sorted(results["jsemu"].drops - results["real"].drops)
            rows["jsemu"]["drops_not_by_real"] = len(extra)
            rows["nats-server"]["drops_not_by_real"] = 0
            for i in extra[:3]:
                print(f"  jsemu closed without -ERR where nats-server did not, after: {items[i][:160]!r}")
        for kind, res in results.items():
            if res.internal or res.server_died:
                failures.append(f"fuzz/{kind}: internal {res.internal[:3]}, died {res.server_died}")
        print(
            table(
                f"fuzz: {args.fuzz:,} seeded inputs (seed {args.seed}), 32 connections",
                rows,
                [
                    "inputs",
                    "per_s",
                    "err_closes",
                    "silent_drops",
                    "drops_not_by_real",
                    "stalls",
                    "json_500",
                    "internal",
                    "died",
                ],
            ),
            flush=True,
        )
        out["fuzz"] = rows
        if len(kinds) == 2 and args.compare:
            real, emu = ServerProc("real"), ServerProc("jsemu")
            try:
                differ, samples = compare(real, emu, items[: args.compare])
            finally:
                real.close()
                emu.close()
            print(
                f"fuzz compare: {differ} of {min(args.compare, len(items)):,} inputs got different -ERR / status / "
                "JSON error answers"
            )
            for s in samples:
                print("  " + s)
            out["fuzz_compare"] = {"differ": differ, "samples": samples}
    if "wsfuzz" in args.only:
        _ws_scenario(args, kinds, out, failures)
    return failures


def _ws_scenario(args: argparse.Namespace, kinds: list[str], out: dict[str, Any], failures: list[str]) -> None:
    items = ws_inputs(args.seed, args.ws_fuzz)
    rows: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        srv, ws_port = ws_server(kind)
        try:
            r = ws_fuzz(srv, ws_port, items)
        finally:
            srv.close()
        rows[_label(kind)] = r
        if r["bystander_lost"] or r.get("bystander_error") or r["internal"] or r["died"]:
            failures.append(f"wsfuzz/{kind}: {r}")
    print(
        table(
            f"wsfuzz: {args.ws_fuzz:,} hostile WebSocket sockets (seed {args.seed}), 32 at a time, "
            "TCP and WebSocket bystanders publishing every 4 ms",
            rows,
            ["inputs", "per_s", "bystander_sent", "bystander_lost", "max_gap_ms", "internal", "died"],
        ),
        flush=True,
    )
    for label, r in rows.items():
        print(f"  {label} answers: {r['answers']}")
    out["wsfuzz"] = rows
    if len(kinds) == 2 and args.ws_compare:
        real, emu = ws_server("real"), ws_server("jsemu")
        try:
            differ, samples = ws_compare(real, emu, items[: args.ws_compare])
        finally:
            real[0].close()
            emu[0].close()
        print(f"wsfuzz compare: {differ} of {min(args.ws_compare, len(items)):,} inputs got different reactions")
        for s in samples:
            print("  " + s)
        out["wsfuzz_compare"] = {"differ": differ, "samples": samples}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.stress", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--server", choices=("jsemu", "real", "both"), default="both")
    p.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated of " + ", ".join(SCENARIOS))
    p.add_argument("--duration", type=float, default=10.0, help="seconds of load in many and slow (10)")
    p.add_argument("--connections", type=int, default=1000)
    p.add_argument("--fast", type=int, default=50)
    p.add_argument("--slow", type=int, default=5)
    p.add_argument("--rate", type=int, default=4000, help="flood messages a second (4,000)")
    p.add_argument("--size", type=int, default=512, help="flood message bytes (512)")
    p.add_argument("--max-pending", type=int, default=1 << 20, help="the servers' max_pending (1 MiB)")
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--kill-within", type=float, default=1.5, help="crash: SIGKILL 0.05 s to this many s in (1.5)")
    p.add_argument("--fuzz", type=int, default=100_000, help="inputs (100,000; 1,000,000 for a long run)")
    p.add_argument("--compare", type=int, default=1000, help="inputs sent to both servers and compared")
    p.add_argument("--ws-fuzz", type=int, default=2000, help="hostile WebSocket sockets (2,000)")
    p.add_argument("--ws-compare", type=int, default=300, help="of them sent to both servers and compared")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", type=Path, help="also write every figure here")
    args = p.parse_args(argv)
    args.only = [s for s in args.only.split(",") if s]
    if set(args.only) - set(SCENARIOS):
        p.error(f"unknown scenarios: {sorted(set(args.only) - set(SCENARIOS))}")
    kinds = ["real", "jsemu"] if args.server == "both" else [args.server]
    nofile = raise_nofile()
    print(
        f"# stress: {' and '.join(_label(k) for k in kinds)}; RLIMIT_NOFILE {nofile:,}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        flush=True,
    )
    out: dict[str, Any] = {}
    failures = run(args, kinds, out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str))
    for f in failures:
        print("FAILED " + f[:2000])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
