"""The API coverage page of the documentation site (``docs/reference/api-coverage.md``) is
written from the ``@api`` registry; it must be current,
and jsemu's own-subscription endpoints must really be subscribed (that the server side
matches the nats-server binary and source: ``test_api_endpoint_list.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import jsemu
from jsemu.jetstream.api import registry as api_registry
from jsemu.tools import api_coverage
from jsemu.tools.api_coverage import PAGE, check, coverage_table, main


def test_the_page_is_current() -> None:
    assert check(PAGE), f"{PAGE.name} is stale: run python -m jsemu.tools.api_coverage --write"


def test_a_changed_registry_makes_the_table_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every 2.15.1 endpoint has a handler now; without one, the table says ``no`` and is stale."""
    assert "| `STREAM.CANCEL_MOVE.*` | `JSApiStreamCancelMove` | account API | yes |" in coverage_table()
    kept = [(tokens, fn) for tokens, fn in api_registry._HANDLERS if tokens != ("STREAM", "CANCEL_MOVE", "*")]
    assert len(kept) == len(api_registry._HANDLERS) - 1
    monkeypatch.setattr(api_registry, "_HANDLERS", kept)
    assert "| `STREAM.CANCEL_MOVE.*` | `JSApiStreamCancelMove` | account API | no |" in coverage_table()
    assert not check(PAGE)


def test_a_refusing_handler_is_listed_as_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """``@api(..., refused=True)`` shows as refused, not as implemented."""
    assert "| `STREAM.SNAPSHOT.*` | `JSApiStreamSnapshot` | account API | yes |" in coverage_table()
    monkeypatch.setattr(api_coverage, "REFUSED", {"STREAM.SNAPSHOT.*"})
    assert "| `STREAM.SNAPSHOT.*` | `JSApiStreamSnapshot` | account API | refused (checks, then a clear error) |" in (
        coverage_table()
    )


def test_an_edited_table_is_stale_and_write_repairs_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "api-coverage.md"
    page.write_text(PAGE.read_text().replace("| `STREAM.LIST` | `JSApiStreamList` | account API | yes |", ""))
    assert main(["--check", "--page", str(page)]) == 1
    assert "stale" in capsys.readouterr().out
    assert main(["--write", "--page", str(page)]) == 0
    assert main(["--check", "--page", str(page)]) == 0
    assert page.read_text() == PAGE.read_text()
    assert main(["--check", "--page", str(tmp_path / "missing.md")]) == 1


def test_an_endpoint_the_server_lacks_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api_registry, "_HANDLERS", [*api_registry._HANDLERS, (("STREAM", "NOPE"), print)])
    with pytest.raises(ValueError, match="STREAM.NOPE"):
        coverage_table()


async def test_own_subscription_endpoints_are_subscribed() -> None:
    """``OWN_SUBSCRIPTIONS`` claims Direct Get answers outside the registry: a stream with
    ``allow_direct`` must have a ``_sys_`` queue subscription on exactly those patterns."""
    assert set(api_registry.OWN_SUBSCRIPTIONS) == {
        "DIRECT.GET.*",
        "DIRECT.GET.*.>",
        "CONSUMER.MSG.NEXT.*.*",
        "CONSUMER.RESET.*.*",
    }
    async with jsemu.Server() as srv:
        assert srv.jetstream_api is not None
        srv.jetstream_api.call("$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "allow_direct": True})
        srv.jetstream_api.call("$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": {"name": "C"}})
        for example in (b"$JS.API.CONSUMER.MSG.NEXT.S.C", b"$JS.API.CONSUMER.RESET.S.C"):
            # the consumer's own subscription, beside the account's $JS.API.> import
            assert len(srv.sublist.match_uncached(example).psubs) == 2, example
        for pattern, example in (
            ("DIRECT.GET.*", b"$JS.API.DIRECT.GET.S"),
            ("DIRECT.GET.*.>", b"$JS.API.DIRECT.GET.S.s.a"),
        ):
            groups = srv.sublist.match_uncached(example).qsubs
            assert [sub.queue for group in groups for sub in group] == [b"_sys_"], pattern
    assert api_coverage.jsemu_endpoints()["DIRECT.GET.*"] == "yes (own subscription)"
