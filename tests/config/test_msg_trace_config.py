"""An account's ``msg_trace`` (``trace_dest``) value: nats-server 2.15.1's start-up error for
each bad one, word for word and at the same position (jsemu's configuration is read in this
process, nats-server runs); good ones give the destination and sampling tracing uses."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from support.servers import nats_server_binary

import jsemu
from jsemu.config.parser import ConfigError
from jsemu.config.server_config import load_config

USERS = "users: [{user: t, password: t}]"
BAD = {
    "invalid dest": '"bad.*"',
    "sampling 0": '{dest: "x.y", sampling: 0}',
    "sampling 101": '{dest: "x.y", sampling: 101}',
    "sampling text": '{dest: "x.y", sampling: "abc"}',
    "sampling 0%": '{dest: "x.y", sampling: "0%"}',
    "sampling bool": '{dest: "x.y", sampling: true}',
    "unknown field": '{dest: "x.y", foo: 1}',
    "a number": "123",
    "dest not a string": "{dest: 5}",
    "dest wildcard": '{dest: "x.>"}',
}
GOOD = {
    '"x.y"': ("x.y", 100),
    '{dest: "x.y"}': ("x.y", 100),
    '{dest: "x.y", sampling: 50}': ("x.y", 50),
    '{DEST: "x.y", Sampling: "25%"}': ("x.y", 25),
    "{sampling: 50}": ("", 0),
}


def _conf(tmp_path: Path, value: str, key: str = "msg_trace") -> Path:
    conf = tmp_path / "server.conf"
    conf.write_text(f"accounts {{ T: {{ {USERS}, {key}: {value} }} }}\n")
    return conf


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_msg_trace_as_nats_server(name: str, tmp_path: Path) -> None:
    conf = _conf(tmp_path, BAD[name])
    real = subprocess.run(
        [nats_server_binary(), "-c", str(conf), "-p", "-1"], check=False, capture_output=True, text=True, timeout=10
    )
    assert real.returncode == 1, real.stderr
    with pytest.raises(ConfigError) as info:
        load_config(conf, jsemu.ServerOptions())
    assert "nats-server: " + str(info.value) == real.stderr.strip().splitlines()[0]


@pytest.mark.parametrize("value", sorted(GOOD))
def test_good_msg_trace(value: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="jsemu.config"):
        options = load_config(_conf(tmp_path, value), jsemu.ServerOptions())
    (account,) = options.accounts
    assert (account.msg_trace_dest, account.msg_trace_sampling) == GOOD[value]
    ignored = [r.getMessage() for r in caplog.records if "sampling ignored" in r.getMessage()]
    # nats-server warns, at the value's position, and starts.
    assert ignored == (
        [f"{tmp_path}/server.conf:1:49: Trace destination sampling ignored since no destination was set"]
        if not GOOD[value][0]
        else []
    )


def test_trace_dest_is_the_same_setting(tmp_path: Path) -> None:
    options = load_config(_conf(tmp_path, '"x.y"', key="trace_dest"), jsemu.ServerOptions())
    assert (options.accounts[0].msg_trace_dest, options.accounts[0].msg_trace_sampling) == ("x.y", 100)
