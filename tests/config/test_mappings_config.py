"""``mappings`` (top level and in an account): nats-server 2.15.1's start-up error for each
bad entry, word for word and at the same position (jsemu's configuration is read in this
process, nats-server runs); good ones are read in the file's order."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.servers import nats_server_binary

import jsemu
from jsemu.config.parser import ConfigError
from jsemu.config.server_config import load_config
from jsemu.server.subject_mapping import MappingDest

BAD = {
    "index without wildcards": '"foo": "bar.$1"',
    "index out of range": '"foo.*": "bar.$2"',
    "wildcard fn out of range": '"foo.*": "bar.{{wildcard(2)}}"',
    "total over 100": '"foo": [{destination: a, weight: 60%},{destination: b, weight: 50%}]',
    "weight 101": '"foo": [{destination: a, weight: 101}]',
    "weight text": '"foo": [{destination: a, weight: "x%"}]',
    "unknown dest field": '"foo": [{destination: a, wait: 3}]',
    "bad source": '"fo o": "bar"',
    "unknown function": '"foo": "{{bogus(1)}}"',
    "a number": '"foo": 3',
    "star in dest": '"foo.>": "bar.*"',
    "fwc source, no fwc dest": '"foo.>": "bar"',
    "fwc dest, no fwc source": '"foo": "bar.>"',
    "duplicate destination": '"foo": [{destination: a, weight: 40%},{destination: a, weight: 50%}]',
    "space in dest": '"foo": "bar baz"',
}


def _conf(tmp_path: Path, body: str, account: bool = False) -> Path:
    conf = tmp_path / "server.conf"
    if account:
        conf.write_text(
            f"accounts {{\n  A: {{\n    users: [{{user: a, password: a}}]\n    mappings {{ {body} }}\n  }}\n}}\n"
        )
    else:
        conf.write_text(f"port: -1\nmappings {{\n  {body}\n}}\n")
    return conf


@pytest.mark.parametrize("account", [False, True], ids=["top", "account"])
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_mapping_as_nats_server(name: str, account: bool, tmp_path: Path) -> None:
    conf = _conf(tmp_path, BAD[name], account)
    real = subprocess.run(
        [nats_server_binary(), "-c", str(conf), "-p", "-1"], check=False, capture_output=True, text=True, timeout=10
    )
    assert real.returncode == 1, real.stderr
    with pytest.raises(ConfigError) as info:
        load_config(conf, jsemu.ServerOptions())
    assert "nats-server: " + str(info.value) == real.stderr.strip().splitlines()[0]


def test_good_mappings_in_order(tmp_path: Path) -> None:
    conf = _conf(tmp_path, '"foo": "bar", "w.*": [{dest: "a.$1", weight: "40%"}, {Destination: "b.$1", weight: 60}]')
    options = load_config(conf, jsemu.ServerOptions())
    assert [(m.src, m.dests) for m in options.mappings] == [
        ("foo", (MappingDest("bar", 100),)),
        ("w.*", (MappingDest("a.$1", 40), MappingDest("b.$1", 60))),
    ]
