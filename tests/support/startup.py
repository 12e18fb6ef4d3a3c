"""What a server does at start-up with a command line, reduced to what can be compared.

A server either fails (exit status, first line of stderr without the log prefix) or starts;
then what a client and the log see: INFO's fields (the host, whether the port is the one asked
for or a random one, the name or that it is the id, JetStream, auth and TLS) and the
monitoring port. The real nats-server runs as a process (:func:`real_outcome`); the stand-in
(``jsemu nats-server``) resolves its options in this process and starts a server on a thread
(:func:`stand_in_outcome`), as a process per case would cost a second of imports each.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from support.servers import nats_server_binary

__all__ = ["Outcome", "outcome_from_info", "real_outcome", "stand_in_outcome", "strip_prefix"]

_PREFIX = re.compile(r"^\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[(\w+)\] ")
_LISTEN = re.compile(r"Listening for client connections on (\S+):(\d+)$")
_MONITOR = re.compile(r"Starting http monitor on (\S+):(\d+)$")


def strip_prefix(line: str) -> str:
    """A log line without ``[pid] date time [LVL] `` (the level kept in brackets)."""
    m = _PREFIX.match(line)
    return f"[{m.group(1)}] {line[m.end() :]}" if m else line


@dataclass
class Outcome:
    """``exit`` is None for a server that started; ``line`` is the failure's first stderr line."""

    exit: int | None
    line: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    monitor: str | None = None


def _port_name(port: Any, names: dict[int, str]) -> Any:
    """A port by the name the case gave it, else ``random`` (a port nobody asked for)."""
    return names.get(port, "random") if isinstance(port, int) and port > 0 else port


def outcome_from_info(info: dict[str, Any], names: dict[int, str], monitor: int | None) -> Outcome:
    """The INFO fields both servers set from options; ids and ports reduced to what was asked."""
    reduced = {
        "host": info.get("host"),
        "port": _port_name(info.get("port"), names),
        "server_name": "<id>" if info.get("server_name") == info.get("server_id") else info.get("server_name"),
        "jetstream": info.get("jetstream", False),
        "auth_required": info.get("auth_required", False),
        "tls_required": info.get("tls_required", False),
        "max_payload": info.get("max_payload"),
    }
    return Outcome(None, info=reduced, monitor=None if monitor is None else _port_name(monitor, names))


def _read_info(host: str, port: int) -> dict[str, Any]:
    host = host.strip("[]")
    with socket.create_connection(("127.0.0.1" if host in ("0.0.0.0", "::") else host, port), timeout=5) as sock:
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    line = data.split(b"\r\n", 1)[0]
    assert line.startswith(b"INFO "), data
    info: dict[str, Any] = json.loads(line[5:])
    return info


def real_outcome(args: list[str], names: dict[int, str] | None = None) -> Outcome:
    """Run nats-server with ``args``: its failure, or what it started with (then stopped)."""
    # JetStream without a store dir lives in $TMPDIR/nats/jetstream: one for each run, or two
    # servers running side by side (pytest-xdist) would share it and one would fail.
    tmp = tempfile.TemporaryDirectory(prefix="jsemu-tmpdir-")
    proc = subprocess.Popen(
        [nats_server_binary(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": tmp.name},
    )
    assert proc.stderr is not None
    host, port, monitor, first = "", 0, None, ""
    names = names or {}
    deadline = time.monotonic() + 15
    try:
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            text = strip_prefix(line.rstrip("\n"))
            first = first or text
            if m := _LISTEN.search(text):
                host, port = m.group(1), int(m.group(2))
            if m := _MONITOR.search(text):
                monitor = int(m.group(2))
            if "Server is ready" in text:
                return outcome_from_info(_read_info(host, port), names, monitor)
        code = proc.wait(10)
        return Outcome(code, first)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        tmp.cleanup()


def stand_in_outcome(args: list[str], names: dict[int, str] | None = None) -> Outcome:
    """``jsemu nats-server ARGS``: its options resolved here (the same code as the process'), a
    failure's exit status and first stderr line, or the server started on a thread."""
    from jsemu.app import Server
    from jsemu.cli import stand_in_options

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            options = stand_in_options(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
            return Outcome(code, strip_prefix((err.getvalue().splitlines() or [""])[0]))
    try:
        server = Server.in_thread(options)
    except OSError as exc:  # a port in use: the process' line is checked in test_cli_errors
        return Outcome(1, f"OSError: {exc}")
    try:
        info = _read_info(options.host, server.port)
        monitor = server.server.monitor.port if server.server.monitor is not None else None
        return outcome_from_info(info, names or {}, monitor)
    finally:
        server.stop()
