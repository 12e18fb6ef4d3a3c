"""Plant each listed mutation in a scratch copy of the tree and run the tests that must catch it.

    python -m tests.mutation                 # every mutation in tests/mutation/mutations.py
    python -m tests.mutation NAME [NAME...]  # some of them (also: -k SUBSTRING)
    python -m tests.mutation --list          # the list, with the anchors checked

For each mutation the runner copies ``jsemu/``, ``tests/``, ``benchmarks/`` and ``pyproject.toml`` to a temporary
directory (the working tree is never touched), replaces the one occurrence of the anchor, and
runs ``pytest -x`` on the mutation's tests there, with the copy first on ``PYTHONPATH`` so that
``import jsemu`` loads the mutant. It prints a table and exits 1 if any mutation survives
(its tests pass) or any anchor is missing or ambiguous, 2 if a test run errors out (collection,
usage), 0 when every mutation is caught.

Why not mutmut or cosmic-ray: they mutate every operator of the whole tree and run the whole
suite (or a coverage-selected part) per mutant; with a 5-10 minute suite that is days. A short
list of plausible bugs, each paired with the tests meant to catch it, runs in minutes and says
which harness is blind when one survives.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .mutations import MUTATIONS, Mutation, anchor_count

ROOT = Path(__file__).resolve().parents[2]
#: Per-mutation limit: a mutant that hangs its tests counts as caught (the suite would not pass).
TIMEOUT = 900


def _copy_tree(dest: Path) -> None:
    """The parts of the tree the tests need; nats.js's node_modules and the newest nats.py's venv are
    linked, not copied."""
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", ".venv", "*.egg-info", ".hypothesis")
    shutil.copytree(ROOT / "jsemu", dest / "jsemu", ignore=ignore)
    shutil.copytree(ROOT / "tests", dest / "tests", ignore=ignore)
    shutil.copytree(ROOT / "benchmarks", dest / "benchmarks", ignore=ignore)  # for benchmark runner tests
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")
    modules = ROOT / "tests" / "clients" / "js" / "node_modules"
    if modules.exists():
        (dest / "tests" / "clients" / "js" / "node_modules").symlink_to(modules)
    newest = ROOT / ".venv-nats-next"  # the newest nats.py packages' venv: linked too, or their tests skip
    if newest.exists():
        (dest / ".venv-nats-next").symlink_to(newest)


def _plant(dest: Path, m: Mutation) -> None:
    if not m.file:  # the baseline: nothing planted
        return
    path = dest / m.file
    text = path.read_text()
    count = text.count(m.original)
    if count != 1:
        raise LookupError(f"{m.name}: anchor found {count} times in {m.file}")
    path.write_text(text.replace(m.original, m.replacement))


_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def run_one(m: Mutation, verbose: bool = False) -> tuple[str, str, float]:
    """(verdict, detail, seconds): verdict is caught, SURVIVED, STALE (anchor) or ERROR."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="jsemu-mut-") as tmp:
        dest = Path(tmp)
        _copy_tree(dest)
        try:
            _plant(dest, m)
        except LookupError as exc:
            return "STALE", str(exc), 0.0
        env = dict(os.environ, PYTHONPATH=str(dest), PYTHONDONTWRITEBYTECODE="1", JSEMU_MUTATION_RUN="1")
        env.pop("JSEMU_PAIR_REAL_REAL", None)
        check = subprocess.run(
            [sys.executable, "-c", "import jsemu; print(jsemu.__file__)"],
            cwd=dest,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if not check.stdout.startswith(str(dest)):
            return "ERROR", f"the copy is not what gets imported: {check.stdout.strip()}", 0.0
        cmd = [sys.executable, "-m", "pytest", "-n", "0", "-x", "-q", "-rfE", "-p", "no:cacheprovider", *m.tests]
        try:
            proc = subprocess.run(cmd, cwd=dest, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return "caught", f"timeout after {TIMEOUT}s", time.monotonic() - start
        elapsed = time.monotonic() - start
        out = proc.stdout + proc.stderr
        if verbose:
            print(out)
        if proc.returncode == 0:
            return "SURVIVED", out.strip().splitlines()[-1] if out.strip() else "", elapsed
        failed = _FAILED.findall(out)
        if proc.returncode == 1 and failed:
            return "caught", failed[0], elapsed
        tail = " | ".join(out.strip().splitlines()[-3:])
        return "ERROR", f"pytest exit {proc.returncode}: {tail}", elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="mutations to run (default: all)")
    ap.add_argument("-k", dest="substring", default="", help="only mutations whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the mutations and check their anchors")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each pytest output")
    ap.add_argument(
        "--baseline", action="store_true", help="first run the chosen mutations' tests unmutated (they must pass)"
    )
    args = ap.parse_args(argv)
    chosen = [m for m in MUTATIONS if (not args.names or m.name in args.names) and args.substring in m.name]
    unknown = set(args.names) - {m.name for m in MUTATIONS}
    if unknown:
        print(f"unknown mutations: {sorted(unknown)}", file=sys.stderr)
        return 2
    if args.list:
        bad = 0
        for m in chosen:
            n = anchor_count(ROOT, m)
            bad += n != 1
            print(f"{m.name:32} {m.file:36} anchor x{n}  {' '.join(m.tests)}")
        return 1 if bad else 0
    rows = []
    total = time.monotonic()
    if args.baseline:
        union = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
        verdict, detail, secs = run_one(Mutation("(baseline)", "-", "", "", "", union), args.verbose)
        print(
            f"{'(baseline: nothing planted)':32} {'passed' if verdict == 'SURVIVED' else 'FAILED':8} {secs:6.1f}s  {detail}"
        )
        if verdict != "SURVIVED":
            print("the tests fail without any mutation: fix them first", file=sys.stderr)
            return 2
    for m in chosen:
        verdict, detail, secs = run_one(m, args.verbose)
        rows.append((m, verdict, detail, secs))
        print(f"{m.name:32} {verdict:8} {secs:6.1f}s  {detail}", flush=True)
    print("\n| mutation | layer | verdict | first failing test | s |\n|---|---|---|---|---|")
    for m, verdict, detail, secs in rows:
        print(f"| {m.name} | {m.layer} | {verdict} | {detail} | {secs:.0f} |")
    elapsed = time.monotonic() - total
    survived = [m.name for m, v, _, _ in rows if v in ("SURVIVED", "STALE")]
    errors = [m.name for m, v, _, _ in rows if v == "ERROR"]
    print(
        f"\n{len(rows)} mutations, {len(rows) - len(survived) - len(errors)} caught, "
        f"{len(survived)} survived or stale, {len(errors)} errors, {elapsed:.0f}s"
    )
    if survived:
        return 1
    return 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
