"""The generated reference pages of the documentation site (``docs/reference/``) are current
(``python -m jsemu.tools.docs_reference --write`` rewrites them), follow the registries they
are written from, and come out the same on every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jsemu.config import server_config
from jsemu.config.tls import TlsConfigError, parse_tls
from jsemu.control.plane import ControlPlane, remote
from jsemu.tools import docs_reference
from jsemu.tools.docs_reference import PAGES, REFERENCE, TLS_KEYS, main, stale


def test_the_generated_pages_are_current() -> None:
    assert stale() == [], "run python -m jsemu.tools.docs_reference --write"


def test_every_page_is_generated_the_same_twice() -> None:
    assert all(make() == make() for make in PAGES.values())
    assert all(str(Path.home()) not in make() for make in PAGES.values())  # no machine paths


def test_write_makes_missing_pages_and_check_fails_until_then(tmp_path: Path) -> None:
    assert main(["--check", "--dir", str(tmp_path)]) == 1
    assert main(["--write", "--dir", str(tmp_path)]) == 0
    assert main(["--check", "--dir", str(tmp_path)]) == 0
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {n: (REFERENCE / n).read_text() for n in PAGES}


def test_a_new_remote_method_makes_the_control_plane_page_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    def shake(self: Any, stream: str, times: int = 2) -> int:
        """Shake the stream ``times`` times."""
        return times

    monkeypatch.setattr(ControlPlane, "shake", remote(shake), raising=False)
    page = docs_reference.control_plane_page()
    assert "| [`shake`](#shake) | `$JSEMU.API.SHAKE` |" in page
    assert "`shake(stream: str, times: int = 2) -> int`\n\nShake the stream `times` times." in page
    assert stale() == ["control-plane.md"]


def test_angle_brackets_outside_code_are_shown_not_taken_for_tags() -> None:
    page = docs_reference.cli_page()
    assert "| `--msg-id` | send &lt;stream&gt;:&lt;seq&gt; as Nats-Msg-Id (safe re-runs) |" in page
    assert docs_reference._prose("a <b> `c <d>`") == "a &lt;b&gt; `c <d>`"


def test_a_new_top_level_key_needs_a_description(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_config, "_TOP_LEVEL_KEYS", server_config._TOP_LEVEL_KEYS | {"gossip"})
    with pytest.raises(ValueError, match="gossip"):
        docs_reference.configuration_page()


@pytest.mark.parametrize("key", TLS_KEYS)
def test_the_listed_tls_keys_are_the_ones_the_parser_reads(key: str) -> None:
    with pytest.raises(TlsConfigError) as caught:
        parse_tls({key: [1]})  # a value of the wrong type for every key: read, then refused
    assert "unknown field" not in caught.value.message and "not supported" not in caught.value.message


def test_a_tls_key_outside_the_list_is_unknown_to_the_parser() -> None:
    with pytest.raises(TlsConfigError, match='unknown field "ciphers"'):
        parse_tls({"ciphers": [1]})
