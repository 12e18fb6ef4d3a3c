"""Monitoring paths as nats-server's Go mux reads them (``jsemu/server/monitor_paths.py``): a
trailing slash, a repeated slash, ``.`` and ``..`` segments, a query, a fragment and percent
escapes around every endpoint of the index page, compared with nats-server by status line,
``Location`` and (for anything but a 200) body."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import RealServer

import jsemu
from jsemu.server.monitor_index import ENTRIES
from jsemu.server.monitor_paths import clean_path
from jsemu.threaded import ThreadedServer

#: Endpoints both serve (or both refuse); nats-server's Go-only pages (/debug/vars, /stacksz,
#: /ipqueuesz) jsemu does not serve.
ENDPOINTS = ["/", "/subscriptionsz", *(path for _, path in ENTRIES if path != "/debug/vars")]
SUFFIXES = [
    "",
    "/",
    "//",
    "/.",
    "/..",
    "/./",
    "/x",
    "/x/..",
    "#f",
    "%2F",
    "?",
    "?a=b",
    "/?a=b",
    "//?a=b",
    "/..?x",
    "%",
    "%zz",
    "/<ä>",
    "/..#f",
]
PREFIXES = ["", "/", "/.", "/x/..", "/%2e"]


@pytest.fixture(scope="module")
def ports() -> Iterator[tuple[int, int]]:
    real = RealServer(config={"http_port": -1})
    with ThreadedServer(jsemu.Server(http_port=-1)) as emu:
        assert emu.server.monitor is not None
        yield emu.server.monitor.port, int(real.monitor_url.rsplit(":", 1)[1])
    real.stop()


def _get(port: int, target: str) -> tuple[str, list[str], bytes]:
    """(status line, the Location header if any, body unless the status is 200)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    location = [line for line in lines[1:] if line.lower().startswith("location:")]
    return lines[0], location, b"" if lines[0].endswith(" 200 OK") else body


def _escaped(path: str, at: int) -> str:
    """``path`` with its character at ``at`` (mod its length) percent-encoded."""
    i = at % len(path)
    return path[:i] + f"%{ord(path[i]):02X}" + path[i + 1 :]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    prefix=st.sampled_from(PREFIXES),
    suffix=st.sampled_from(SUFFIXES) | st.text("/.%2Fe#?<ä!'[z", max_size=6),
    escape_at=st.none() | st.integers(1, 20),
)
def test_monitoring_paths_answer_as_nats_server(
    ports: tuple[int, int], endpoint: str, prefix: str, suffix: str, escape_at: int | None
) -> None:
    path = prefix + endpoint if prefix else endpoint
    if escape_at is not None and len(path) > 1:
        path = path[0] + _escaped(path[1:], escape_at)
    target = path + suffix
    emu_port, real_port = ports
    assert _get(emu_port, target) == _get(real_port, target), target


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("/varz", "200 OK"),
        ("/varz?a=b", "200 OK"),
        ("/var%7a", "200 OK"),
        ("/varz/", "404 Not Found"),
        ("/varz/?a=b", "404 Not Found"),
        ("/varz#f", "404 Not Found"),
        ("/%2e/varz", "404 Not Found"),
        ("//varz?a=b", "307 Temporary Redirect"),
        ("/varz/..", "307 Temporary Redirect"),
    ],
)
def test_a_path_is_exact(ports: tuple[int, int], target: str, status: str) -> None:
    """The cases named in the module docstring, on both servers."""
    for port in ports:
        assert _get(port, target)[0] == f"HTTP/1.1 {status}", (port, target)


def test_clean_path_is_gos() -> None:
    cases = {"": "/", "/": "/", "//": "/", "/a//b/": "/a/b/", "/a/./b": "/a/b", "/a/../../b": "/b", "/..": "/"}
    for path, cleaned in cases.items():
        assert clean_path(path) == cleaned, path
