"""The ``websocket {}`` block's start-up errors: ``jsemu serve`` and nats-server given the same
file fail with the same one line and exit status 1; the keys jsemu does not implement yet
are refused with one line of their own; a good block opens the port and logs the line the
clients' harnesses read (``Listening for websocket clients on ws://HOST:PORT``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.servers import RealServer

from .test_cli_errors import _assert_one_line, _jsemu, _real

BAD = {
    "no tls": "websocket { port: -1 }",
    "unknown key": "websocket { port: -1, no_tls: true, foo: 1 }",
    "ftp origin": 'websocket { port: -1, no_tls: true, allowed_origins: ["ftp://x"] }',
    "origin without host": 'websocket { port: -1, no_tls: true, allowed_origins: ["http://"] }',
    "reserved header": 'websocket { port: -1, no_tls: true, headers: { "Upgrade": "x" } }',
    "sec- header": 'websocket { port: -1, no_tls: true, headers: { "Sec-WebSocket-Foo": "x" } }',
    "header not a string": "websocket { port: -1, no_tls: true, headers: { X-A: 1 } }",
    "compression not a bool": 'websocket { port: -1, no_tls: true, compression: "x" }',
    "bad handshake timeout": 'websocket { port: -1, no_tls: true, handshake_timeout: "x" }',
    "port not a number": 'websocket { port: "x", no_tls: true }',
    "not a map": "websocket: 5",
    "ws spelling": "ws { port: -1 }",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_websocket_block_as_nats_server(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(BAD[name] + "\n")
    real, emu = _real("-p", "-1", "-c", str(conf)), _jsemu("-p", "-1", "-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]


@pytest.mark.parametrize("key", ["ping_interval: 1s"])
def test_keys_not_implemented_are_refused_with_one_line(key: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(f"websocket {{\n  port: -1\n  no_tls: true\n  {key}\n}}\n")
    emu = _jsemu("-p", "-1", "-c", str(conf))
    assert emu.returncode == 1
    line = _assert_one_line(emu)
    assert re.fullmatch(rf'nats-server: {re.escape(str(conf))}:4:3: "\w+": not supported by jsemu yet', line), line


def test_no_port_no_listener_as_nats_server(tmp_path: Path) -> None:
    """Without a port nats-server opens nothing and checks nothing else (not even TLS)."""
    conf = tmp_path / "server.conf"
    conf.write_text("websocket { compression: true }\n")
    for process in (False, True):
        server = RealServer(jetstream=False, jsemu_process=process, conf_text="websocket { compression: true }")
        try:
            assert server.ws_url == ""
        finally:
            server.stop()


def test_startup_log_lines_as_nats_server() -> None:
    """The line the harnesses read, then the TLS warning, before the client port's line."""
    lines = {}
    for process in (False, True):
        server = RealServer(jetstream=False, jsemu_process=process, websocket='listen: "127.0.0.1:-1", no_tls: true')
        try:
            lines[process] = server.ws_url
        finally:
            server.stop()
    assert all(re.fullmatch(r"ws://127\.0\.0\.1:\d+", url) for url in lines.values()), lines


AUTH_BAD = {
    "no_auth_user without users": "websocket { port: -1, no_tls: true, no_auth_user: x }",
    "no_auth_user not a user": "authorization { users: [{user: a, password: b}] }\n"
    "websocket { port: -1, no_tls: true, no_auth_user: x }",
    "username with users": "authorization { users: [{user: a, password: b}] }\n"
    "websocket { port: -1, no_tls: true, authorization { user: u, password: p } }",
    "token with users": "authorization { users: [{user: a, password: b}] }\n"
    "websocket { port: -1, no_tls: true, authorization { token: t } }",
    "unknown authorization key": "websocket { port: -1, no_tls: true, authorization { user: u, password: p, foo: 1 } }",
    "authorization not a map": "websocket { port: -1, no_tls: true, authorization: 5 }",
    "jwt_cookie without operator": "websocket { port: -1, no_tls: true, jwt_cookie: jwt }",
    "jwt_cookie with users": "authorization { users: [{user: a, password: b}] }\n"
    'websocket { port: -1, no_tls: true, jwt_cookie: "my jwt" }',
    "jwt_cookie not a string": "websocket { port: -1, no_tls: true, jwt_cookie: 5 }",
}


@pytest.mark.parametrize("name", sorted(AUTH_BAD))
def test_bad_websocket_authorization_as_nats_server(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(AUTH_BAD[name] + "\n")
    real, emu = _real("-p", "-1", "-c", str(conf)), _jsemu("-p", "-1", "-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]
