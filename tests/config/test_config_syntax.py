"""A configuration file read as nats-server 2.15.1 reads it, side by side with the binary:
the same start (INFO's fields) or the same first stderr line (``nats-server: FILE:LINE:COL:
...`` or ``Parse error on line N: '...'``) and exit status 1. Hypothesis puts values of every
kind under the keys jsemu reads.

Malformed files of every kind, generated: tests/config/test_config_lexer.py."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.startup import real_outcome, stand_in_outcome

CASES = {
    "quoted-size-G": 'jetstream { max_mem: "1G" }\n',
    "quoted-size-K-file": 'jetstream { max_file_store: "64K" }\n',
    "quoted-size-two-letters": 'jetstream { max_file_store: "10MB" }\n',
    "quoted-size-lower-case": 'jetstream { max_mem_store: "1g" }\n',
    "quoted-size-empty": 'jetstream { max_mem_store: "" }\n',
    "quoted-size-bool": "jetstream { max_mem_store: true }\n",
    "json-block-ends-at-eof": '{ "port": -1',
    "json-block-blank-at-eof": '{ "port": -1 ',
    "json-block-second-line": '{\n "port": -1',
    "json-block-closed": '{ "port": -1 }',
    "json-block-open-newline": '{ "port": -1\n',
    "plain-key-at-eof": "port: -1",
    "stray-block-end": "port: -1\n}\n",
    "unclosed-quote": 'server_name: "abc\n',
    "unclosed-single-quote": "server_name: 'abc\n",
    "bad-escape": 'server_name: "a\\qb"\n',
    "escapes": 'server_name: "a\\x41\\"b"\n',
    "no-value-after-equals": "port =\n",
    "no-value-after-colon": "server_name:\n",
    "top-level-store-dir": 'store_dir: "/tmp/jsemu-never-made"\n',
    "store-dir-not-a-string": "jetstream { store_dir: 5 }\n",
}


def _compare(text: str) -> None:
    with tempfile.TemporaryDirectory(prefix="jsemu-syntax-") as tmp:
        conf = Path(tmp) / "server.conf"
        conf.write_text(text)
        args = ["-a", "127.0.0.1", "-c", str(conf)]
        if "port" not in text:
            args += ["-p", "-1"]
        real, emu = real_outcome(args), stand_in_outcome(args)
        assert emu == real, (text, emu, real)


@pytest.mark.parametrize("name", sorted(CASES))
def test_read_as_nats_server_reads_it(name: str) -> None:
    _compare(CASES[name])


_KEYS = [
    "server_name",
    "max_payload",
    "max_connections",
    "ping_interval",
    "write_deadline",
    "jetstream.max_mem",
    "jetstream.max_file_store",
    "jetstream",
]
_VALUES = ["1", "-5", "1.5", "true", "no", "1K", "2MB", '"1G"', '"12"', '"abc"', "abc", '"a\\tb"', "'x'"]


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=st.sampled_from(_KEYS), value=st.sampled_from(_VALUES), braces=st.booleans())
def test_values_of_every_kind_under_known_keys(key: str, value: str, braces: bool) -> None:
    if key == "write_deadline" and value == "-5":
        return  # every client cut before its INFO, on both (tests/server/test_write_deadline.py)
    block, _, inner = key.partition(".")
    line = f"{block} {{ {inner}: {value} }}" if inner else f"{key}: {value}"
    _compare(f"{{\n{line}\n}}\n" if braces else line + "\n")
