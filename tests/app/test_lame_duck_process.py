"""Lame duck mode, signals and configuration reload of a server process, side by side with
nats-server 2.15.1 (``jsemu serve`` given the same flags and file): the log lines from the
signal on, what clients see (the ``ldm`` INFO, a silent close), the exit status, the pid
file, ``--signal``'s messages, ``-l`` and SIGUSR1, and a reload's lines and its effect on a
client's permissions. nats-server accepts no ``lame_duck_duration`` under 30 s, so the runs use
a 1 s grace period and few clients (closed at most 1 s apart): a few seconds each."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.servers import nats_server_binary

PROGRAMS = {
    "real": [nats_server_binary()],
    "jsemu": [sys.executable, "-m", "jsemu", "serve"],
}
_PREFIX = re.compile(r"^\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[(\w+)\] ")
_LISTEN = re.compile(r"Listening for client connections on [^ ]+:(\d+)")


class Proc:
    """A server process whose log lines are collected (prefix stripped, level kept)."""

    def __init__(self, kind: str, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [*PROGRAMS[kind], "-a", "127.0.0.1", "-p", "-1", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.port = 0
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for raw in self.proc.stderr:
                m = _PREFIX.match(raw)
                line = f"[{m.group(1)}] {raw[m.end() :].rstrip()}" if m else raw.rstrip()
                self.lines.append(line)
                listen = _LISTEN.search(raw)
                if listen:
                    self.port = int(listen.group(1))
                if "Server is ready" in raw:
                    ready.set()
            ready.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        assert ready.wait(15) and self.port, self.lines

    def since(self, mark: int) -> list[str]:
        """The lines from ``mark`` on; once the process has exited, every line it wrote (the
        reader may still be behind when ``wait`` returns)."""
        if self.proc.poll() is not None:
            self._reader.join(5)
        return self.lines[mark:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in started:
        p.stop()


def _client(port: int, connect: dict[str, object]) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    _read(sock)  # INFO
    sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
    _read(sock, until=b"PONG\r\n")
    return sock


def _read(sock: socket.socket, until: bytes = b"\r\n", timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while until not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _read_to_close(sock: socket.socket, timeout: float = 10.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _wait_line(proc: Proc, text: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not any(text in line for line in proc.lines) and time.monotonic() < deadline:
        time.sleep(0.02)


def _lame_duck_run(kind: str, tmp: Path, procs: list[Proc]) -> dict[str, object]:
    conf = tmp / f"{kind}.conf"
    conf.write_text('lame_duck_duration: "30s"\nlame_duck_grace_period: "1s"\n')
    pid_file = tmp / f"{kind}.pid"
    proc = Proc(kind, ["-c", str(conf), "-js", "-sd", str(tmp / f"{kind}-js"), "-P", str(pid_file)])
    procs.append(proc)
    assert pid_file.read_text() == str(proc.proc.pid)
    clients = [_client(proc.port, {"protocol": p, "verbose": False, "headers": True}) for p in (1, 1, 0)]
    for c in clients[:2]:
        _read(c)  # the INFO after the first PONG
    mark = len(proc.lines)
    started = time.monotonic()
    proc.proc.send_signal(signal.SIGUSR2)
    infos = [json.loads(_read(c)[5:]) for c in clients[:2]]
    try:
        socket.create_connection(("127.0.0.1", proc.port), timeout=1).close()
        refused = False
    except OSError:
        refused = True
    closed = [_read_to_close(c).replace(b"PING\r\n", b"") for c in clients]
    elapsed = time.monotonic() - started
    status = proc.proc.wait(10)
    return {
        "info_keys": [list(i)[-5:] for i in infos],
        "ldm": [i.get("ldm") for i in infos],
        "refused": refused,
        "closed": closed,
        "spread": 1.0 <= elapsed < 3.5,
        "status": status,
        "pid_file_left": pid_file.exists(),
        "lines": proc.since(mark),
    }


def test_lame_duck_as_nats_server(tmp_path: Path, procs: list[Proc]) -> None:
    got = {kind: _lame_duck_run(kind, tmp_path, procs) for kind in PROGRAMS}
    assert got["jsemu"] == got["real"]
    assert got["real"]["lines"] == [
        '[INF] Trapped "user defined signal 2" signal',
        "[INF] Entering lame duck mode, stop accepting new clients",
        "[INF] Initiating JetStream Shutdown...",
        "[INF] JetStream Shutdown",
        "[INF] Closing existing clients",
        "[INF] Initiating Shutdown...",
        "[INF] Server Exiting..",
    ]


def _signals_run(kind: str, tmp: Path, procs: list[Proc]) -> dict[str, object]:
    first = Proc(kind, [])
    procs.append(first)
    out: dict[str, object] = {}
    for sig in (signal.SIGUSR1, signal.SIGHUP):
        mark = len(first.lines)
        first.proc.send_signal(sig)
        _wait_line(first, "signal", 5)
        time.sleep(0.3)
        out[sig.name] = first.since(mark)
    return out


def test_signals_as_nats_server(tmp_path: Path, procs: list[Proc]) -> None:
    got = {kind: _signals_run(kind, tmp_path, procs) for kind in PROGRAMS}
    assert got["jsemu"] == got["real"]
    assert got["real"]["SIGHUP"] == [
        '[INF] Trapped "hangup" signal',
        (
            "[ERR] Failed to reload server configuration: can only reload config when a file is provided "
            "using -c or --config"
        ),
    ]


def _signal_command(kind: str, *args: str) -> tuple[int, str, str]:
    r = subprocess.run([*PROGRAMS[kind], *args], capture_output=True, text=True, timeout=30, check=False)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize(
    "spec",
    ["ldm=999999999", "bogus=999999999", "ldm=abc", "ldm=1=2", "reload=1x"],
)
def test_signal_command_errors_as_nats_server(spec: str) -> None:
    assert _signal_command("jsemu", "--signal", spec) == _signal_command("real", "--signal", spec)


def test_signal_command_reaches_a_server_by_pid_and_pid_file(tmp_path: Path, procs: list[Proc]) -> None:
    for kind in PROGRAMS:
        pid_file = tmp_path / f"{kind}.pid"
        proc = Proc(kind, ["-P", str(pid_file)])
        procs.append(proc)
        assert _signal_command(kind, "--signal", f"reopen={pid_file}") == (0, "", "")
        _wait_line(proc, "re-open")
        assert proc.lines[-2:] == [
            '[INF] Trapped "user defined signal 1" signal',
            "[INF] File log re-open ignored, not a file logger",
        ]
        assert _signal_command(kind, "-sl", f"quit={proc.proc.pid}") == (0, "", "")
        assert proc.proc.wait(10) == 0
        assert pid_file.exists()  # nats-server leaves it


def test_log_file_and_reopen(tmp_path: Path, procs: list[Proc]) -> None:
    for kind, program in PROGRAMS.items():
        log_file = tmp_path / f"{kind}.log"
        proc = subprocess.Popen(
            [*program, "-a", "127.0.0.1", "-p", "-1", "-l", str(log_file)],
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "Server is ready" not in (
            log_file.read_text() if log_file.exists() else ""
        ):
            time.sleep(0.05)
        moved = tmp_path / f"{kind}.log.1"
        os.rename(log_file, moved)
        proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not log_file.exists():
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        assert (proc.returncode, out, err) == (0, "", ""), kind
        strip = [_PREFIX.sub("", line) for line in log_file.read_text().splitlines()]
        assert strip == [
            "File log re-opened",
            'Trapped "interrupt" signal',
            "Initiating Shutdown...",
            "Server Exiting..",
        ], kind
        assert _PREFIX.sub("", moved.read_text().splitlines()[-1]) == 'Trapped "user defined signal 1" signal'


_USERS = (
    'authorization {{ users = [ {{user: a, password: a, permissions: {{publish: ">", subscribe: {subs}}}}}{more} ] }}\n'
)


def _reload_run(kind: str, tmp: Path, procs: list[Proc]) -> dict[str, object]:
    (tmp / kind).mkdir()
    conf = tmp / kind / "reload.conf"
    conf.write_text(_USERS.format(subs='["x", "y"]', more=", {user: b, password: b}") + "max_payload: 1000\n")
    proc = Proc(kind, ["-c", str(conf)])
    procs.append(proc)
    a = _client(proc.port, {"user": "a", "pass": "a", "verbose": False})
    b = _client(proc.port, {"user": "b", "pass": "b", "verbose": False})
    a.sendall(b"SUB x 1\r\nSUB y 2\r\nPING\r\n")
    _read(a, until=b"PONG\r\n")
    out: dict[str, object] = {}

    def reload(text: str, label: str) -> None:
        _settle(proc)  # the previous step's log lines (a violation) are in before the mark
        conf.write_text(text)
        mark = len(proc.lines)
        proc.proc.send_signal(signal.SIGHUP)
        _wait_line(proc, "reload" if label != "ok" else "Reloaded server configuration")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any("eload" in x and "Trapped" not in x for x in proc.since(mark)):
            time.sleep(0.02)
        time.sleep(0.2)
        out[label] = [re.sub(r"/\S+/reload\.conf", "…", x) for x in proc.since(mark)]

    reload(_USERS.format(subs='["x"]', more="") + "max_payload: 2000\n", "ok")
    out["a"] = _read(a, until=b"'\r\n").replace(b"PING\r\n", b"")  # the server's PINGs: timing
    a.sendall(b"PUB x 1\r\nz\r\nSUB y 3\r\nPING\r\n")
    out["a after"] = _read(a, until=b"PONG\r\n").replace(b"PING\r\n", b"")
    out["b"] = _read_to_close(b, 5).replace(b"PING\r\n", b"")
    reload(_USERS.format(subs='["x"]', more="") + 'max_payload: 2000\nserver_name: "foo"\n', "refused")
    reload(_USERS.format(subs='["x"]', more="") + 'max_payload: 2000\nlame_duck_duration: "40s"\n', "refused ldm")
    reload(_USERS.format(subs='["x"]', more="") + "max_payload: 2000\nbogus: 1\n", "unknown")
    reload("authorization { users = [ {user: a, password: other} ] }\n", "password")
    out["a closed"] = _read_to_close(a, 5).replace(b"PING\r\n", b"")
    out["last lines"] = [re.sub(r"127\.0\.0\.1:\d+ - cid:\d+", "ADDR", x) for x in out.pop("password")]  # type: ignore[union-attr]
    return out


def _settle(proc: Proc, quiet: float = 0.3, most: float = 5.0) -> None:
    """Until the process has logged nothing new for ``quiet`` seconds (a loaded machine delays
    the reader thread, and a line of the step before must not fall after the next mark)."""
    deadline = time.monotonic() + most
    seen = -1
    while time.monotonic() < deadline and seen != len(proc.lines):
        seen = len(proc.lines)
        time.sleep(quiet)


def test_reload_as_nats_server(tmp_path: Path, procs: list[Proc]) -> None:
    got = {kind: _reload_run(kind, tmp_path, procs) for kind in PROGRAMS}
    assert got["jsemu"] == got["real"]  # the configuration digests too (sha256 of the parsed map)
    assert [re.sub(r"sha256:[0-9a-f]{64}", "sha256:…", x) for x in got["real"]["ok"]] == [
        '[INF] Trapped "hangup" signal',
        "[INF] Reloaded: authorization users",
        "[INF] Reloaded: accounts",
        "[INF] Reloaded: max_payload = 2000",
        '[INF] Removed sub "y" (sid "2") for User "a" - not authorized',
        "[INF] Reloaded server configuration (sha256:…)",
    ]


def _sigterm_run(kind: str, tmp: Path, procs: list[Proc]) -> tuple[object, ...]:
    conf = tmp / f"{kind}-term.conf"
    conf.write_text('lame_duck_duration: "30s"\nlame_duck_grace_period: "1s"\n')
    proc = Proc(kind, ["-c", str(conf), "-js", "-sd", str(tmp / f"{kind}-term")])
    procs.append(proc)
    client = _client(proc.port, {"verbose": False})
    mark = len(proc.lines)
    proc.proc.send_signal(signal.SIGUSR2)
    _wait_line(proc, "Entering lame duck mode")
    proc.proc.send_signal(signal.SIGTERM)
    time.sleep(0.4)
    running = proc.proc.poll() is None
    closed = _read_to_close(client).replace(b"PING\r\n", b"")
    return running, closed, proc.proc.wait(10), proc.since(mark)


def test_sigterm_in_lame_duck_mode(tmp_path: Path, procs: list[Proc]) -> None:
    """SIGTERM during lame duck mode is logged and otherwise ignored: the run goes on."""
    got = {kind: _sigterm_run(kind, tmp_path, procs) for kind in PROGRAMS}
    assert got["jsemu"] == got["real"]
    assert got["real"][:3] == (True, b"", 0)


def _consumer_after_lame_duck(kind: str, tmp: Path, procs: list[Proc]) -> list[bytes]:
    conf = tmp / f"{kind}-c.conf"
    conf.write_text('lame_duck_duration: "30s"\nlame_duck_grace_period: "5s"\n')
    proc = Proc(kind, ["-c", str(conf), "-js", "-sd", str(tmp / f"{kind}-cjs")])
    procs.append(proc)
    c = _client(proc.port, {"verbose": False, "headers": True, "no_responders": True, "protocol": 1})
    c.sendall(b"SUB in.> 1\r\n")

    def answer(subject: bytes, body: bytes, reply: bytes) -> bytes:
        """The one message (``MSG`` or ``HMSG``) that comes to ``reply``."""
        c.sendall(b"PUB %b %b %d\r\n%b\r\n" % (subject, reply, len(body), body))
        c.settimeout(5)
        data = b""
        while True:
            m = re.search(rb"(?:^|\n)(H?MSG %b 1 (?:(\d+) )?(\d+)\r\n)" % re.escape(reply), data)
            if m and len(data) >= m.end() + int(m.group(3)) + 2:
                return data[m.start(1) : m.end() + int(m.group(3)) + 2]
            chunk = c.recv(65536)
            assert chunk, data
            data += chunk

    stream = json.dumps({"name": "S", "subjects": ["s"]}).encode()
    consumer = json.dumps({"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}).encode()
    c.sendall(b"PUB $JS.API.STREAM.CREATE.S in.s %d\r\n%b\r\n" % (len(stream), stream))
    _read(c, until=b"stream_create_response")
    c.sendall(b"PUB $JS.API.CONSUMER.DURABLE.CREATE.S.D in.c %d\r\n%b\r\n" % (len(consumer), consumer))
    _read(c, until=b"consumer_create_response")
    proc.proc.send_signal(signal.SIGUSR2)
    _wait_line(proc, "JetStream Shutdown")
    next_req = b'{"batch":1,"expires":300000000}'
    return [
        answer(b"$JS.API.CONSUMER.MSG.NEXT.S.D", next_req, b"in.n"),
        answer(b"$JS.ACK.S.D.1.1.1.1.0", b"", b"in.a"),
    ]


def test_lame_duck_stops_consumers(tmp_path: Path, procs: list[Proc]) -> None:
    """nats-server's ``shutdownJetStream`` stops every consumer: a pull request or an ack with a
    reply then hears no responders, like a publish to the stream."""
    got = {kind: _consumer_after_lame_duck(kind, tmp_path, procs) for kind in PROGRAMS}
    assert got["jsemu"] == got["real"]
    assert got["real"] == [
        b"HMSG in.n 1 61 61\r\nNATS/1.0 503\r\nNats-Subject: $JS.API.CONSUMER.MSG.NEXT.S.D\r\n\r\n\r\n",
        b"HMSG in.a 1 53 53\r\nNATS/1.0 503\r\nNats-Subject: $JS.ACK.S.D.1.1.1.1.0\r\n\r\n\r\n",
    ]
