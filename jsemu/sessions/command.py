"""``jsemu record``, ``jsemu replay`` and ``jsemu conformance --sessions DIR``.

Exit statuses, for CI: 0 nothing differs, 1 a difference (or a server that could not be
reached), 2 a session file that is not one (one line on stderr: the file, the line, what is
wrong) or a command line that is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import sys
from pathlib import Path

from ..conformance.command import CaseResult, _table
from .format import SessionFileError, read_session
from .recorder import Recorder, tls_context
from .replayer import ReplayResult, replay
from .targets import SPAWN_JSEMU, SPAWN_REAL, default_nats_server, server_at

__all__ = ["conformance_main", "record_main", "replay_main"]


def _target(args: argparse.Namespace) -> str:
    if getattr(args, "spawn_real", False):
        return SPAWN_REAL
    return args.against or getattr(args, "url", None) or SPAWN_JSEMU


def _binary(args: argparse.Namespace, target: str) -> str | None:
    if target != SPAWN_REAL:
        return "nats-server"
    binary = default_nats_server(args.nats_server)
    if binary is None:
        print("nats-server not found; give --nats-server", file=sys.stderr)
    return binary


# --- record -----------------------------------------------------------------------------


async def _record(args: argparse.Namespace) -> int:
    tls = None
    if args.tls_ca or args.tls_cert or args.upstream.startswith("tls://"):
        tls = tls_context(args.tls_ca, args.tls_cert, args.tls_key)
    recorder = Recorder(args.upstream, Path(args.output), args.listen, redact=not args.no_redact, tls=tls)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await recorder.start()
    print(
        f"jsemu record: {recorder.url} -> {args.upstream}, writing {args.output} (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await recorder.stop()
    print(f"jsemu record: {recorder.connections} connection(s) recorded in {args.output}", file=sys.stderr)
    return 0


def record_main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_record(args))
    except (OSError, ValueError) as exc:
        print(f"jsemu record: {exc}", file=sys.stderr)
        return 2


# --- replay -----------------------------------------------------------------------------


async def _replay_file(path: str, target: str, binary: str, pace: str, timeout: float) -> ReplayResult:
    session = read_session(path)
    from .replayer import expected_frames

    for conn in session.connections.values():  # refuse a broken recording before any server starts
        expected_frames(conn)
    async with server_at(target, binary) as (host, port):
        return await replay(session, host, port, pace, timeout)


def _report(path: str, target: str, result: ReplayResult) -> str:
    lines = [f"{path}: {result.connections} connection(s), {result.frames} server frame(s) matched, against {target}"]
    lines += [d.describe() for d in result.differences]
    lines.append("no difference" if result.ok else f"{len(result.differences)} connection(s) differ")
    return "\n".join(lines)


def replay_main(args: argparse.Namespace) -> int:
    target = _target(args)
    if target.startswith("tls://"):
        print(
            f"jsemu replay: {target}: replay over TLS is not supported; give the server's plain port", file=sys.stderr
        )
        return 2
    binary = _binary(args, target)
    if binary is None:
        return 2
    try:
        result = asyncio.run(_replay_file(args.file, target, binary, args.pace, args.timeout))
    except SessionFileError as exc:
        print(f"jsemu replay: {args.file}: {exc}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as exc:
        print(f"jsemu replay: {target}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.as_json(), indent=1) if args.json else _report(args.file, target, result))
    if result.ok and args.save_case:
        folder = Path(args.save_case)
        folder.mkdir(parents=True, exist_ok=True)
        saved = folder / (Path(args.file).stem + ".jsonl")
        shutil.copyfile(args.file, saved)
        print(f"saved as conformance case {saved} (run: jsemu conformance --sessions {folder} --spawn-jsemu)")
    return 0 if result.ok else 1


# --- conformance --sessions DIR ---------------------------------------------------------


async def _run_sessions(folder: Path, target: str, binary: str, only: list[str]) -> list[CaseResult]:
    results = []
    for path in sorted(folder.glob("*.jsonl")):
        if only and path.stem not in only:
            continue
        try:
            result = await _replay_file(str(path), target, binary, "fast", 5.0)
        except SessionFileError as exc:
            results.append(CaseResult(path.stem, "error", detail=str(exc)))
            continue
        except (OSError, RuntimeError) as exc:
            results.append(CaseResult(path.stem, "error", detail=f"{type(exc).__name__}: {exc}"))
            continue
        if result.ok:
            results.append(CaseResult(path.stem, "pass"))
        else:
            d = result.differences[0]
            results.append(CaseResult(path.stem, "fail", f"conn {d.conn} frame {d.frame}", [d.expected], [d.got]))
    return results


def conformance_main(args: argparse.Namespace) -> int:
    """``jsemu conformance --sessions DIR TARGET``: each ``DIR/*.jsonl`` is a case."""
    target = SPAWN_REAL if args.spawn_real else SPAWN_JSEMU if args.spawn_jsemu else args.url
    binary = _binary(args, target)
    if binary is None:
        return 2
    folder = Path(args.sessions)
    if not folder.is_dir():
        print(f"jsemu conformance: {folder}: not a folder", file=sys.stderr)
        return 2
    results = asyncio.run(_run_sessions(folder, target, binary, args.case))
    if args.json:
        from dataclasses import asdict

        print(json.dumps([asdict(r) for r in results], indent=1))
    else:
        print(_table(results))
        counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "error")}
        print(f"\n{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors ({len(results)} sessions)")
    return 1 if any(r.status in ("fail", "error") for r in results) or not results else 0
