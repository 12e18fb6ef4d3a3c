"""``resolver: {type: full | cache, dir, ...}`` in the configuration file, side by side with
nats-server 2.15.1: the same one-line refusals at start (no ``dir``, a file for ``dir``, options
one type does not take, bad durations, an unknown type), and the directory made and filled with
the preloaded accounts (``<key>.jwt``) by the forms both accept."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.servers import KINDS, RealServer

from jsemu.config.server_config import load_config
from jsemu.server.operator_auth import OperatorAuth
from jsemu.server.options import ServerOptions
from jsemu.testing.operator import OperatorSetup

from .test_cli_errors import _assert_one_line, _jsemu, _real

SETUP = OperatorSetup()
SYS = SETUP.accounts["SYS"]


def _conf(block: str) -> str:
    return (
        f"port: -1\noperator: {SETUP.operator_jwt}\nsystem_account: {SYS.public_key}\n"
        f"resolver: {{ {block} }}\nresolver_preload: {{ {SYS.public_key}: {SYS.jwt} }}\n"
    )


REFUSED = {
    "no-dir": "type: full",
    "dir-is-a-file": "type: full, dir: {file}",
    "cache-allow-delete": "type: cache, dir: {dir}, allow_delete: true",
    "cache-hard-delete": "type: cache, dir: {dir}, hard_delete: true",
    "cache-interval": 'type: cache, dir: {dir}, interval: "2m"',
    "cache-interval-and-delete": 'type: cache, dir: {dir}, interval: "1m", allow_delete: true',
    "full-ttl": 'type: full, dir: {dir}, ttl: "2m"',
    "full-hard-delete-alone": "type: full, dir: {dir}, hard_delete: true",
    "bad-interval": 'type: full, dir: {dir}, interval: "soon"',
    "bad-timeout": 'type: full, dir: {dir}, timeout: "5"',
    "unknown-type": "type: other, dir: {dir}",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_nats_server(name: str, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    conf = tmp_path / "server.conf"
    conf.write_text(_conf(REFUSED[name].format(dir=tmp_path / "jwt", file=tmp_path / "afile")))
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    # nats-server lists every error it found, the first after "nats-server: "; jsemu says the first.
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]


@pytest.mark.parametrize("block", ["type: full, dir: {dir}, allow_delete: true, limit: 5", "type: cache, dir: {dir}"])
def test_directory_made_with_the_preloads(block: str, tmp_path: Path) -> None:
    listing = {}
    for kind in KINDS:
        directory = tmp_path / kind / "nested" / "jwt"
        server = RealServer(
            conf_text=_conf(block.format(dir=directory))[len("port: -1\n") :], jsemu_process=kind == "jsemu"
        )
        server.stop()
        listing[kind] = sorted(p.name for p in directory.iterdir())
        assert (directory / f"{SYS.public_key}.jwt").read_text() == SYS.jwt
    assert listing["jsemu"] == listing["real"] == [f"{SYS.public_key}.jwt"]


def test_settings_loaded(tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(_conf(f'type: full, dir: "{tmp_path / "jwt"}", allow_delete: true, hard_delete: true, limit: 3'))
    options = load_config(conf, ServerOptions())
    assert isinstance(options.auth, OperatorAuth) and options.auth.resolver_store is not None
    settings = options.auth.resolver_store.settings
    assert (settings.full, settings.delete, settings.limit) == (True, "hard", 3)
    assert SYS.public_key in options.auth.accounts
