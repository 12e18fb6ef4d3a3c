"""Every nats-server 2.15.1 flag on the stand-in (``jsemu nats-server``), side by side with the
binary: Go's flag spellings (``-js=false``, ``-p=4222``, ``--``, parsing stopping at the first
word that is not a flag), ``-h`` and ``--help_tls`` verbatim, ``-t``, ``--ports_file_dir``'s
file, ``-T``/``--logtime_utc``'s log lines, ``-ms`` without TLS; the flags jsemu cannot honour
(syslog, profile) refused with one line, never ignored."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import nats_server_binary
from support.startup import real_outcome, stand_in_outcome

import jsemu
from jsemu.cli import main


def _real(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [nats_server_binary(), *args], capture_output=True, text=True, timeout=20, check=False, env=env
    )


def _stand_in(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``jsemu nats-server ARGS`` in this process, for commands that exit before serving."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["nats-server", *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize("args", [["-h"], ["--help"], ["-help=true"], ["-h=1", "-p", "-1"], ["help"], ["-p=x"]])
def test_usage_verbatim(args: list[str]) -> None:
    real, emu = _real(args), _stand_in(args)
    assert (emu.returncode, emu.stdout, emu.stderr) == (real.returncode, real.stdout, real.stderr)
    assert real.stdout.startswith("\nUsage: nats-server [options]\n")


def test_help_tls_verbatim() -> None:
    """The same text; Go lists the cipher suites from a map, in an order that varies per run."""
    real, emu = _real(["--help_tls"]), _stand_in(["--help_tls"])
    assert (emu.returncode, emu.stderr) == (real.returncode, real.stderr) == (0, "")
    assert sorted(emu.stdout.splitlines()) == sorted(real.stdout.splitlines())
    assert emu.stdout.startswith("\nTLS configuration is specified in the tls section")


@pytest.mark.parametrize(
    "args",
    [
        ["-js=maybe"],
        ["-p=abc"],
        ["-p", "99999999999999999999"],
        ["---p", "1"],
        ["-=1"],
        ["-tl"],
        ["-jet"],
        ["-p", "1", "--", "-js"],
        ["foo", "-p", "1"],
        ["-js", "false", "-p", "1"],
        ["-", "-p", "1"],
        ["-t"],
        ["-t", "-p=-1"],
        ["-s", "-p", "-1"],
        ["-r", "udp://localhost:514", "-p", "-1"],
        ["--profile", "0", "-t"],
        ["-T=nope"],
        ["--client_advertise"],
    ],
)
def test_flag_spellings_and_refusals(args: list[str]) -> None:
    """Exit status and stderr's first line as the binary's, except where jsemu refuses a flag
    nats-server honours (``-s``, ``-r``): then one line of jsemu's, exit status 1."""
    emu = _stand_in(args)
    if args[0] in ("-s", "-r"):  # nats-server logs there (or fails to reach syslog) and serves
        assert emu.returncode == 1 and emu.stderr.count("\n") == 1, emu.stderr
        assert "not supported by jsemu" in emu.stderr
        return
    real = _real(args)
    assert (emu.returncode, emu.stderr.splitlines()[:1]) == (real.returncode, real.stderr.splitlines()[:1])


_BOOLS = ["1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False", "yes", "", "tRuE"]
_INTS = ["-1", "0x10", "+5", "010", "0o7", "0b11", "1_000", "1__0", "_1", "0x", "9" * 20, "-0x8000000000000000", "x"]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    words=st.lists(
        st.one_of(
            st.tuples(st.sampled_from(["-js", "--js", "-jetstream", "--tls", "-D", "-T"]), st.sampled_from(_BOOLS)),
            st.tuples(st.sampled_from(["-p", "--port", "-m", "--log_size_limit"]), st.sampled_from(_INTS)),
            st.sampled_from([("-p", None), ("-js", None), ("word", None), ("--", None), ("---x", None)]),
        ),
        max_size=4,
    )
)
def test_go_flag_parsing_as_nats_server(words: list[tuple[str, str | None]]) -> None:
    """``-t -c FILE`` first, so both exit right after reading the command line: Go's errors,
    the command word, the ``-t`` verdict."""
    args = ["-t", "-c", str(_GOOD)]
    for name, value in words:
        if value is None:
            args.append(name)
        elif name in ("-p", "--port", "-m", "--log_size_limit") and value.startswith(("0", "9")):
            args += [name, value]
        else:
            args.append(f"{name}={value}")
    real, emu = _real(args), _stand_in(args)
    assert (emu.returncode, emu.stderr.splitlines()[:1]) == (real.returncode, real.stderr.splitlines()[:1]), args


_GOOD = Path(__file__).with_name("stand_in_good.conf")


@pytest.mark.parametrize(
    "text",
    ["port: -1\n", "port: -1\nbogus_key: 1\n", "# c\nserver_name: <a&b>\nhttp: 8222\njetstream { max_mem: 1G }\n"],
)
def test_check_config(tmp_path: Path, text: str) -> None:
    """``-t``: the verdict on stderr (the digest is of the parsed file: Go's JSON of its map)."""
    conf = tmp_path / "s.conf"
    conf.write_text(text)
    real, emu = _real(["-t", "-c", str(conf)]), _stand_in(["-t", "-c", str(conf)])
    assert (emu.returncode, emu.stdout, emu.stderr.splitlines()) == (
        real.returncode,
        real.stdout,
        real.stderr.splitlines()[:1],
    )


@pytest.mark.parametrize(
    "args",
    [["-js=false", "-js"], ["-js", "-js=false"], ["-js=0"], ["--jetstream=T"], ["-p=-1", "-a=127.0.0.1"]],
)
def test_bool_and_valued_spellings_serve_as_nats_server(args: list[str]) -> None:
    full = ["-a", "127.0.0.1", "-p", "-1", *args]
    real, emu = real_outcome(full), stand_in_outcome(full)
    assert emu == real


@pytest.mark.parametrize("args", [["-ms", "8443"], ["--https_port=-1"], ["-m", "18222", "-ms", "18443"]])
def test_https_port_without_tls(args: list[str]) -> None:
    """nats-server fails at start-up (an ``[FTL]`` line after its banner); so does jsemu."""
    real = _real(["-p", "-1", *args])
    emu = _stand_in(["-p", "-1", *args])
    last = re.sub(r"^\[\d+\] \S+ \S+ ", "", real.stderr.splitlines()[-1])
    assert (emu.returncode, re.sub(r"^\[\d+\] \S+ \S+ ", "", emu.stderr.splitlines()[-1])) == (real.returncode, last)
    assert last.startswith("[FTL] Can't start monitoring: ")


def _spawn_stand_in(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    path = str(Path(jsemu.__file__).parent.parent)
    return subprocess.Popen(
        [sys.executable, "-m", "jsemu", "nats-server", *args],
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "PYTHONPATH": path},
    )


def _until_ready(proc: subprocess.Popen[str]) -> list[str]:
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line.rstrip("\n"))
        if "Server is ready" in line:
            return lines
    raise AssertionError(lines)


def _stop(proc: subprocess.Popen[str]) -> list[str]:
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    assert proc.stderr is not None
    return proc.stderr.read().splitlines()  # not communicate(): it would skip what readline buffered


def _both_spawned(args: list[str], env: dict[str, str]) -> list[subprocess.Popen[str]]:
    real = subprocess.Popen([nats_server_binary(), *args], stderr=subprocess.PIPE, text=True, env=env)
    return [real, _spawn_stand_in(args, env)]


@pytest.mark.parametrize("flags", [[], ["-T=false"], ["--logtime_utc"], ["-T=false", "--logtime_utc"]])
def test_log_time_stamps(flags: list[str]) -> None:
    """``-T=false``: ``[pid] [INF] text``; ``--logtime_utc``: the time in UTC, same format."""
    env = {**os.environ, "TZ": "America/New_York"}
    shapes = []
    for proc in _both_spawned(["-a", "127.0.0.1", "-p", "-1", *flags], env):
        first = _until_ready(proc)[0]
        _stop(proc)
        m = re.fullmatch(r"\[\d+\] (?:(\d{4}/\d\d/\d\d \d\d):\d\d:\d\d\.\d{6} )?\[INF\] Starting nats-server", first)
        assert m, first
        shapes.append(m.group(1))
    assert shapes[0] == shapes[1]
    if "-T=false" not in flags:
        utc = "--logtime_utc" in flags
        assert shapes[0] == time.strftime("%Y/%m/%d %H", time.gmtime() if utc else time.localtime()) or not utc


def test_ports_file(tmp_path: Path) -> None:
    """``DIR/nats-server_<pid>.ports``: compact JSON of the listeners' URLs (a wildcard host as
    every interface address), written once listening, removed at exit."""
    contents = []
    for proc in _both_spawned(["-p", "-1", "-m", "-1", "--ports_file_dir", str(tmp_path)], dict(os.environ)):
        _until_ready(proc)
        path = tmp_path / f"nats-server_{proc.pid}.ports"
        deadline = time.monotonic() + 5
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        text = path.read_text()
        contents.append(re.sub(r":\d+\"", ':PORT"', text))
        assert not text.endswith("\n") and json.loads(text)["nats"]
        _stop(proc)
        assert not path.exists()
    assert contents[0] == contents[1]


def test_ports_file_dir_missing(tmp_path: Path) -> None:
    """A directory that does not exist: an ``[ERR]`` line, the server runs; another at exit."""
    missing = tmp_path / "none"
    errors = []
    for proc in _both_spawned(["-a", "127.0.0.1", "-p", "-1", "--ports_file_dir", str(missing)], dict(os.environ)):
        lines = _until_ready(proc)
        time.sleep(0.3)
        lines += _stop(proc)
        errors.append(
            [re.sub(r"_\d+\.ports", "_PID.ports", re.sub(r"^.*\[ERR\] ", "", x)) for x in lines if "[ERR]" in x]
        )
    assert errors[0] == errors[1] and len(errors[0]) == 2


@pytest.mark.parametrize("spelling", ["0{:o}", "0x{:x}", "+{}", "{:_}"])
def test_port_in_go_integer_spellings(spelling: str) -> None:
    """``-p`` read as Go's ``ParseInt(s, 0, 64)``: a leading 0 is octal, 0x hex, + and _ allowed."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ["-a", "127.0.0.1", "-p", spelling.format(port)]
    real, emu = real_outcome(args, {port: "P"}), stand_in_outcome(args, {port: "P"})
    assert emu == real and real.info["port"] == "P"
