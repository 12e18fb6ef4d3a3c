"""``jsemu conformance``: run the conformance table against any server and print the result.

The table: the Direct Get scenarios (``cases.py``, ``fixtures.json``) and the stream API
cases (``api_cases.py``, ``api_fixtures.json``), both recorded from nats-server 2.15.1.

Targets:

* ``nats://host:port``: a running server. Each scenario deletes the streams it is about to
  create (so earlier runs do not leak in) and deletes them again at the end; stream
  listings are compared on the case's own streams, so the server may hold others. Scenarios
  that need server options (a JetStream domain, a small ``max_pending``) or an unused
  account can not be set up on someone else's server and are reported as skipped.
* ``--spawn-real``: a fresh ``nats-server -js`` per scenario (the binary from PATH or
  ``--nats-server``); this must pass 100%, which proves the table right.
* ``--spawn-jsemu``: a fresh in-process jsemu per scenario; this must pass 100% too.

Each row: the scenario, its first differing request, what was expected and what came.
Exit status 0 when nothing failed, 1 otherwise; ``--json`` prints machine-readable rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import load_fixtures
from .api_cases import API_CASES, LISTINGS, ApiCase, load_api_fixtures, own_streams, run_api_case
from .model import Scenario
from .runner import Run, run_scenario

__all__ = ["CaseResult", "main", "run_all"]


@dataclass
class CaseResult:
    case: str
    status: str  # pass, fail, skip, error
    request: str = ""
    expected: list[str] | None = None
    got: list[str] | None = None
    detail: str = ""


def compare(scenario: Scenario, want: list[list[str]], got: list[list[str]]) -> CaseResult:
    for get, exp, have in zip(scenario.requests, want, [*got, *([None] * len(want))], strict=False):
        if have != exp:
            return CaseResult(scenario.id, "fail", get.describe(), exp, have)
    return CaseResult(scenario.id, "pass")


# --- targets ----------------------------------------------------------------------------


class _RealProcess:
    def __init__(self, binary: str, server: dict[str, Any]) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-conformance-")
        args = [binary, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", self.tmp.name]
        if server:
            conf = Path(self.tmp.name) / "server.conf"
            conf.write_text("\n".join(_conf_line(k, v) for k, v in server.items()) + "\n")
            args += ["-c", str(conf)]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        assert self.proc.stderr is not None
        self.port = 0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            if "Listening for client connections on" in line:
                self.port = int(line.rsplit(":", 1)[1])
            if "Server is ready" in line and self.port:
                return
        self.stop()
        raise RuntimeError(f"{binary} did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.tmp.cleanup()


def _conf_line(key: str, value: Any) -> str:
    if isinstance(value, dict):
        inner = " ".join(f"{k}: {json.dumps(v)}" for k, v in value.items())
        return f"{key} {{ {inner} }}"
    return f"{key}: {json.dumps(value)}"


def _server_conf(scenario: Scenario) -> dict[str, Any]:
    """The scenario's server options as a nats-server configuration."""
    conf: dict[str, Any] = {}
    for key, value in scenario.server.items():
        if key == "domain":
            conf["jetstream"] = {"domain": value}
        else:
            conf[key] = value
    return conf


async def _run_spawned_jsemu(scenario: Scenario, want: list[list[str]]) -> list[list[str]]:
    from ..app import Server

    srv = Server(**scenario.server)
    await srv.start()
    try:
        return await run_scenario("127.0.0.1", srv.port, scenario, want, first_timeout=1.0)
    finally:
        await srv.stop()


async def _run_spawned_real(binary: str, scenario: Scenario, want: list[list[str]]) -> list[list[str]]:
    proc = await asyncio.to_thread(_RealProcess, binary, _server_conf(scenario))
    try:
        return await run_scenario("127.0.0.1", proc.port, scenario, want)
    finally:
        await asyncio.to_thread(proc.stop)


async def _delete_streams(host: str, port: int, scenario: Scenario) -> None:
    """Delete the scenario's streams, whether they exist or not."""
    await _delete_named(host, port, [c["name"] for c in scenario.streams])


async def _run_at(host: str, port: int, scenario: Scenario, want: list[list[str]]) -> list[list[str]]:
    await _delete_streams(host, port, scenario)
    try:
        return await run_scenario(host, port, scenario, want)
    finally:
        await _delete_streams(host, port, scenario)


# --- the run ----------------------------------------------------------------------------


async def run_all(target: str, binary: str = "nats-server", only: Sequence[str] = ()) -> list[CaseResult]:
    """Run every scenario (or those in ``only``) against ``target``: ``spawn-jsemu``,
    ``spawn-real`` or a ``nats://host:port`` URL."""
    from .cases import SCENARIOS  # building the table costs ~70 ms: only `jsemu conformance` pays it

    data = load_fixtures()
    results = []
    for scenario in SCENARIOS:
        if only and scenario.id not in only:
            continue
        entries = data.get(scenario.id)
        if entries is None:
            results.append(CaseResult(scenario.id, "error", detail="no recorded replies for this scenario"))
            continue
        want = [e["reply"] for e in entries]
        try:
            if target == "spawn-jsemu":
                got = await _run_spawned_jsemu(scenario, want)
            elif target == "spawn-real":
                got = await _run_spawned_real(binary, scenario, want)
            else:
                if scenario.server:
                    results.append(CaseResult(scenario.id, "skip", detail=f"needs server options {scenario.server}"))
                    continue
                url = urlsplit(target if "://" in target else f"nats://{target}")
                got = await _run_at(url.hostname or "127.0.0.1", url.port or 4222, scenario, want)
        except Exception as exc:  # noqa: BLE001 - a broken server is a result, not a crash
            results.append(CaseResult(scenario.id, "error", detail=f"{type(exc).__name__}: {exc}"))
            continue
        results.append(compare(scenario, want, got))
    api_data = load_api_fixtures()
    for case in API_CASES:
        if only and case.id not in only:
            continue
        results.append(await _run_api(target, binary, case, api_data.get(case.id)))
    return results


async def _run_api(target: str, binary: str, case: ApiCase, entries: list[dict[str, Any]] | None) -> CaseResult:
    if entries is None:
        return CaseResult(case.id, "error", detail="no recorded replies for this case")
    want = [e["reply"] for e in entries]
    shared = target not in ("spawn-jsemu", "spawn-real")
    try:
        if target == "spawn-jsemu":
            from ..app import Server

            async with Server() as srv:
                got = await run_api_case("127.0.0.1", srv.port, case)
        elif target == "spawn-real":
            proc = await asyncio.to_thread(_RealProcess, binary, {})
            try:
                got = await run_api_case("127.0.0.1", proc.port, case)
            finally:
                await asyncio.to_thread(proc.stop)
        else:
            if case.fresh_server:
                return CaseResult(case.id, "skip", detail="needs a server nobody else has used")
            url = urlsplit(target if "://" in target else f"nats://{target}")
            host, port = url.hostname or "127.0.0.1", url.port or 4222
            await _delete_named(host, port, case.streams)
            try:
                got = await run_api_case(host, port, case)
            finally:
                await _delete_named(host, port, case.streams)
    except Exception as exc:  # noqa: BLE001 - a broken server is a result, not a crash
        return CaseResult(case.id, "error", detail=f"{type(exc).__name__}: {exc}")
    for (subject, _), exp, have in zip(case.steps, want, got, strict=True):
        if shared and subject in LISTINGS:  # other people's streams are listed too
            exp, have = own_streams(exp, case.streams), own_streams(have, case.streams)
        if have != exp:
            return CaseResult(case.id, "fail", subject, [exp], [have])
    return CaseResult(case.id, "pass")


async def _delete_named(host: str, port: int, names: list[str]) -> None:
    run = Run(host, port)
    try:
        await run.api_many([(f"$JS.API.STREAM.DELETE.{name}", b"", None) for name in names])
    finally:
        await run.close()


def _table(results: list[CaseResult]) -> str:
    rows = [("case", "result", "request", "expected", "got")]
    for r in results:
        exp = " | ".join(r.expected or []) if r.status == "fail" else ""
        got = " | ".join(r.got or ["(nothing)"]) if r.status == "fail" else r.detail
        rows.append((r.case, r.status.upper(), r.request, _clip(exp), _clip(got)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + "  ".join(row[3:]))
    return "\n".join(line.rstrip() for line in lines)


def _clip(text: str, width: int = 100) -> str:
    text = text.replace("\r\n", "\\r\\n")
    return text if len(text) <= width else text[: width - 3] + "..."


def main(args: argparse.Namespace) -> int:
    target = "spawn-real" if args.spawn_real else "spawn-jsemu" if args.spawn_jsemu else args.url
    binary = args.nats_server or shutil.which("nats-server") or str(Path(sys.executable).parent / "nats-server")
    if target == "spawn-real" and not os.path.exists(binary) and not shutil.which(binary):
        print(f"nats-server not found ({binary}); give --nats-server", file=sys.stderr)
        return 2
    results = asyncio.run(run_all(target, binary, args.case))
    failed = sum(r.status in ("fail", "error") for r in results)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=1))
    else:
        print(_table(results))
        counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "error", "skip")}
        print(
            f"\n{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors, {counts['skip']} skipped"
            f" ({len(results)} cases)"
        )
    return 1 if failed else 0
