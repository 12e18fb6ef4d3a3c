"""Start-up failures a user can cause: ``jsemu serve`` and nats-server, run side by side with
the same arguments, fail with the same one line (after the log prefix) and exit status 1; no
traceback. Bad flags: Go's flag message after ``serve``'s usage (nats-server prints its whole
usage and exits 0 there; jsemu exits 2, as a bad command line should)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.servers import nats_server_binary

import jsemu
from jsemu.cli import main

_PREFIX = re.compile(r"^\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[(\w+)\] ")


def _run(program: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*program, *args], capture_output=True, text=True, timeout=30, check=False)


def _jsemu(*args: str) -> subprocess.CompletedProcess[str]:
    """``jsemu serve ARGS`` in this process (``main`` is the console script's entry point; a
    process per case would cost a second of imports each): exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["serve", *args])
        except SystemExit as exc:  # argparse's exits
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["jsemu", "serve", *args], code, out.getvalue(), err.getvalue())


def _jsemu_process(*args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "jsemu", "serve"], list(args))


def _real(*args: str) -> subprocess.CompletedProcess[str]:
    return _run([nats_server_binary()], list(args))


def _fatal(proc: subprocess.CompletedProcess[str]) -> str:
    """The ``[FTL]`` line's text (nats-server logs start-up lines before it)."""
    lines = [line for line in proc.stderr.splitlines() if "[FTL]" in line]
    assert len(lines) == 1, proc.stderr
    return _PREFIX.sub("", lines[0])


def _assert_one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on (all interfaces, as both servers bind by default)."""
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _same_fatal(*args: str) -> str:
    """Run both servers; they exit 1 with the same [FTL] line, jsemu with nothing else."""
    real, emu = _real(*args), _jsemu(*args)
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr + emu.stderr
    line = _assert_one_line(emu)
    assert _PREFIX.match(line) and _PREFIX.match(line).group(1) == "FTL", line  # type: ignore[union-attr]
    assert _fatal(emu) == _fatal(real)
    return _fatal(emu)


def test_console_script_fails_with_one_line(busy_port: int) -> None:
    """The real entry point, in its own process: one [FTL] line, exit status 1."""
    proc = _jsemu_process("-p", str(busy_port))
    assert proc.returncode == 1
    assert _fatal(proc) == _assert_one_line(proc).split("[FTL] ", 1)[1]


def test_client_port_in_use(busy_port: int) -> None:
    text = _same_fatal("-p", str(busy_port))
    assert (
        text
        == f'Error listening on port: 0.0.0.0:{busy_port}, "listen tcp 0.0.0.0:{busy_port}: bind: address already in use"'
    )


def test_client_port_in_use_with_jetstream_and_store_dir(busy_port: int, tmp_path: Path) -> None:
    _same_fatal("-js", "-sd", str(tmp_path), "-p", str(busy_port))


def test_monitor_port_in_use(busy_port: int) -> None:
    text = _same_fatal("-p", "-1", "-m", str(busy_port))
    assert text.startswith("Can't start monitoring: can't listen to the monitor port: listen tcp 0.0.0.0:")


def test_address_not_on_this_machine() -> None:
    text = _same_fatal("-a", "192.0.2.1", "-p", "-1")  # TEST-NET-1: never a local address
    assert "cannot assign requested address" in text


def test_store_dir_is_a_file(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    assert (
        _same_fatal("-js", "-p", "-1", "-sd", str(plain))
        == "Can't start JetStream: storage directory is not a directory"
    )
    assert _same_fatal("-js", "-p", "-1", "-sd", str(plain / "below")).endswith("is not a directory")
    (tmp_path / "jetstream").write_text("")  # the directory nats-server keeps its streams in
    assert _same_fatal("-js", "-p", "-1", "-sd", str(tmp_path)).endswith("is not a directory")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_store_dir_cannot_be_created() -> None:
    text = _same_fatal("-js", "-p", "-1", "-sd", "/proc/jsemu-cannot-exist")
    assert text == (
        "Can't start JetStream: could not create storage directory - mkdir /proc/jsemu-cannot-exist: "
        "no such file or directory"
    )


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write anywhere")
def test_store_dir_not_writable(tmp_path: Path) -> None:
    (tmp_path / "jetstream").mkdir()
    (tmp_path / "jetstream").chmod(0o500)
    try:
        assert _same_fatal("-js", "-p", "-1", "-sd", str(tmp_path)).endswith("storage directory is not writable")
    finally:
        (tmp_path / "jetstream").chmod(0o700)


def test_no_store_dir_check_without_jetstream(tmp_path: Path) -> None:
    """A store dir is only looked at when JetStream runs (nats-server without -js ignores it)."""
    plain = tmp_path / "plain"
    plain.write_text("")
    from jsemu.cli import build_parser, serve_options

    options = serve_options(build_parser().parse_args(["serve", "--no-jetstream", "-sd", str(plain)]))
    assert options.store_dir == str(plain) and not options.jetstream


CONFIGS = {
    "port-string": 'port: "abc"\n',
    "port-float": "port: 1.5\n",
    "port-bool": "port: true\n",
    "indented-on-line-3": "# a comment\n\n    max_payload: x\n",
    "server-name-number": "server_name: 5\n",
    "ping-interval": "ping_interval: abc\n",
    "write-deadline-word": 'write_deadline: "abc"\n',
    "write-deadline-no-unit": 'write_deadline: "5"\n',
    "write-deadline-float": "write_deadline: 1.5\n",
    "write-deadline-bool": "write_deadline: true\n",
    "http-port": 'http: "localhost:x"\n',
    "jetstream-word": "jetstream: maybe\n",
    "jetstream-size": 'jetstream {\n  store_dir: "/tmp/x"\n  max_memory_store: "abc"\n}\n',
    "unclosed-block": "port: 4222\njetstream {\n",
    "system-account-number": "port: -1\nsystem_account: 5\n",
    "system-account-missing": "port: -1\naccounts { A: {} }\nsystem_account: NOPE\n",
    "system-account-alias-missing": "port: -1\nsystem: NOPE\n",
}


def test_jetstream_on_the_system_account_is_fatal(tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text("port: -1\njetstream: enabled\naccounts { SYS: { jetstream: enabled } }\nsystem_account: SYS\n")
    assert _same_fatal("-c", str(conf)) == "Not allowed to enable JetStream on the system account"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_bad_config_file(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(CONFIGS[name])
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1)
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]
    assert emu.stderr.startswith("nats-server: ")


def test_config_file_missing_or_a_directory(tmp_path: Path) -> None:
    for path in (tmp_path / "nope.conf", tmp_path):
        real, emu = _real("-c", str(path)), _jsemu("-c", str(path))
        assert (real.returncode, emu.returncode) == (1, 1)
        assert _assert_one_line(emu) == real.stderr.strip()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "flag provided but not defined: -bogus"),
        (["-bogus=1"], "flag provided but not defined: -bogus"),
        (["-p", "abc"], 'invalid value "abc" for flag -p: parse error'),
        (["-p"], "flag needs an argument: -p"),
    ],
)
def test_bad_flag_prints_serve_usage_and_go_message(args: list[str], message: str) -> None:
    real, emu = _real(*args), _jsemu(*args)
    assert real.stderr.strip().splitlines()[0] == message  # nats-server's own words
    assert emu.returncode == 2
    assert emu.stderr.startswith("usage: jsemu serve ")
    assert emu.stderr.rstrip().splitlines()[-1] == f"jsemu serve: {message}"
    assert "Traceback" not in emu.stderr


def test_help_lists_every_accepted_flag() -> None:
    out = _jsemu("--help").stdout
    for flag in ("-p", "-a", "-n", "-js", "-sd", "-m", "-c", "-D", "-V", "-VV", "-DV", "-DVV", "--debug", "--trace"):
        assert re.search(rf"(^|[\s,]){re.escape(flag)}([\s,]|$)", out, re.MULTILINE), flag
    for flag in ("-l", "--log", "--no-jetstream", "--cluster-size", "--version", "--max_payload"):
        assert flag in out, flag
    from jsemu.cli import build_parser

    serve = build_parser()._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    assert all(action.help != "==SUPPRESS==" for action in serve._actions)


def test_logging_flags_are_accepted() -> None:
    from jsemu.cli import build_parser

    for flags in (["-D"], ["-V"], ["-DV"], ["-VV"], ["-DVV"], ["--trace"], ["--debug"], ["-l", "x.log"]):
        assert build_parser().parse_args(["serve", *flags]).command == "serve"


def test_versions() -> None:
    top = _run([sys.executable, "-m", "jsemu"], ["--version"])
    assert top.returncode == 0
    assert top.stdout == f"jsemu {jsemu.__version__} (follows nats-server v{jsemu.NATS_VERSION})\n"
    serve = _jsemu("--version")
    assert serve.returncode == 0
    assert serve.stdout == _real("--version").stdout  # harnesses parse this line
    assert serve.stderr == f"jsemu: v{jsemu.__version__}\n"
