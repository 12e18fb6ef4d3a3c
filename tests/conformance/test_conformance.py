"""Direct Get conformance: every scenario of :mod:`.cases` against the recorded fixtures.

* ``test_jsemu``: a fresh ``jsemu.Server`` per scenario must send exactly the frames that
  nats-server sent when the fixtures were recorded.
* ``test_real``: the same scenario live against a fresh nats-server, so drift (a new binary,
  a flaky case, a runner change) shows up here rather than as a jsemu failure.
* ``test_fixtures_current``: the fixture file matches the scenario table (re-record with
  ``python -m tests.conformance.record`` after changing ``cases.py``) and the binary.

A run stops at the first request whose reply differs; the message shows that request, what
was expected and what came.
"""

from __future__ import annotations

from typing import Any

import pytest

import jsemu
from jsemu.conformance.api_cases import API_CASES, ApiCase, load_api_fixtures, run_api_case
from jsemu.conformance.cases import SCENARIOS
from jsemu.conformance.model import Scenario
from jsemu.conformance.runner import run_scenario

from .record import FIXTURES, load, server_version

DATA: dict[str, Any] = load()
#: jsemu runs in the test's own event loop and answers at once: a missing reply costs only this.
JSEMU_FIRST_TIMEOUT = 1.0


def expected_replies(scenario: Scenario) -> list[list[str]]:
    entries = DATA.get(scenario.id)
    if entries is None:
        pytest.fail(f"no fixture for {scenario.id}: run python -m tests.conformance.record {scenario.id}")
    return [e["reply"] for e in entries]


def check(scenario: Scenario, got: list[list[str]], server: str) -> None:
    want = expected_replies(scenario)
    for i, (get, exp) in enumerate(zip(scenario.requests, want, strict=True)):
        if i >= len(got):
            pytest.fail(f"{server}: no reply recorded for request {i} {get.describe()!r}")
        if got[i] != exp:
            lines = [f"{server}: {scenario.id} request {i}: {get.describe()}", "expected:"]
            lines += [f"  {f!r}" for f in exp] or ["  (nothing)"]
            lines += ["got:"] + ([f"  {f!r}" for f in got[i]] or ["  (nothing)"])
            pytest.fail("\n".join(lines), pytrace=False)
    assert len(got) == len(want)


def _params() -> list[Any]:
    return [pytest.param(s, id=s.id) for s in SCENARIOS]


@pytest.mark.parametrize("scenario", _params())
async def test_jsemu(scenario: Scenario) -> None:
    want = expected_replies(scenario)
    srv = jsemu.Server(**scenario.server)
    await srv.start()
    try:
        got = await run_scenario("127.0.0.1", srv.port, scenario, want, first_timeout=JSEMU_FIRST_TIMEOUT)
    finally:
        await srv.stop()
    check(scenario, got, "jsemu")


@pytest.mark.real
@pytest.mark.parametrize("scenario", _params())
async def test_real(scenario: Scenario) -> None:
    from support.servers import RealServer

    want = expected_replies(scenario)
    real = RealServer(scenario.server or None)
    try:
        got = await run_scenario("127.0.0.1", real.port, scenario, want)
    finally:
        real.stop()
    check(scenario, got, "nats-server")


def test_fixtures_current() -> None:
    assert DATA, f"{FIXTURES} missing: run python -m tests.conformance.record"
    assert DATA["_meta"]["server"] == server_version(), "recorded with another nats-server: re-record"
    assert sorted(k for k in DATA if k != "_meta") == sorted(s.id for s in SCENARIOS), "re-record the fixtures"
    for scenario in SCENARIOS:
        recorded = [e["request"] for e in DATA[scenario.id]]
        assert recorded == [g.describe() for g in scenario.requests], f"{scenario.id}: re-record (cases changed)"


# --- the stream API part of the table ---------------------------------------------------

API_DATA: dict[str, Any] = load_api_fixtures()


def _api_expected(case: ApiCase) -> list[str]:
    entries = API_DATA.get(case.id)
    if entries is None:
        pytest.fail(f"no fixture for {case.id}: run python -m tests.conformance.record_api")
    return [e["reply"] for e in entries]


def _api_check(case: ApiCase, got: list[str], server: str) -> None:
    for (subject, _), want, have in zip(case.steps, _api_expected(case), got, strict=True):
        assert have == want, f"{server}: {case.id}: {subject}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in API_CASES])
async def test_api_jsemu(case: ApiCase) -> None:
    async with jsemu.Server() as srv:
        got = await run_api_case("127.0.0.1", srv.port, case)
    _api_check(case, got, "jsemu")


@pytest.mark.real
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in API_CASES])
async def test_api_real(case: ApiCase) -> None:
    from support.servers import RealServer

    real = RealServer()
    try:
        got = await run_api_case("127.0.0.1", real.port, case)
    finally:
        real.stop()
    _api_check(case, got, "nats-server")


def test_api_fixtures_current() -> None:
    assert API_DATA["_meta"]["server"] == server_version(), "recorded with another nats-server: re-record"
    assert sorted(k for k in API_DATA if k != "_meta") == sorted(c.id for c in API_CASES), "re-record"
    for case in API_CASES:
        assert [e["request"] for e in API_DATA[case.id]] == [s for s, _ in case.steps], f"{case.id}: re-record"
