"""Fixtures and hooks of the whole suite: every wire test runs against jsemu and against the
real nats-server (``support.servers``), and fails if jsemu logged an internal error.

``tests/`` is the import root of the test packages (pytest's ``pythonpath``): helpers are
imported from ``support``, never from a ``conftest.py``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from hypothesis import Phase, settings
from support.servers import KINDS, Handle, RealServer, real_config

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


@pytest.fixture(params=KINDS)
async def server_factory(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Awaitable[Handle]]]:
    """Start servers with options (see ``support.servers.REAL_KEYS``) of the parametrised kind."""
    started: list[Any] = []

    async def start(process: bool = False, **options: Any) -> Handle:
        """``process``: run jsemu as its own process (``jsemu serve -c``), as the real
        server runs, for tests that need a server not sharing the test's CPU time."""
        if request.param == "jsemu":
            if process:
                proc = RealServer(real_config(options), jsemu_process=True)
                started.append(proc)
                return Handle("jsemu", "127.0.0.1", proc.port)
            srv = jsemu.Server(**options)
            await srv.start()
            started.append(srv)
            return Handle("jsemu", "127.0.0.1", srv.port, srv)
        config = real_config(options)
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
