"""``python -m benchmarks [--quick] [--only SECTION,...] [--runs N] [--json PATH]``: see suite.py."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from benchmarks.suite import QUICK, SECTIONS, Sizes, machine, run_repeated, table


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {', '.join(SECTIONS)}")
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument("--json", type=Path, help="also write every figure here (every run's)")
    parser.add_argument(
        "--runs", type=int, default=1, help="run each section N times: medians, and the ratios' spread (default 1)"
    )
    for f in dataclasses.fields(Sizes):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=int, help=f"default {f.default:,}")
    args = parser.parse_args()
    sizes = dataclasses.replace(QUICK) if args.quick else Sizes()
    for f in dataclasses.fields(Sizes):
        value = getattr(args, f.name)
        if value is not None:
            setattr(sizes, f.name, value)
    only = [s for s in args.only.split(",") if s]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    header = machine()
    rows = run_repeated(only, sizes, args.runs)
    print(header)
    print(table(rows))
    if args.json:
        data = {
            "machine": header,
            "sizes": dataclasses.asdict(sizes),
            "runs": args.runs,
            "rows": [dataclasses.asdict(r) for r in rows.values()],
        }
        args.json.write_text(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
