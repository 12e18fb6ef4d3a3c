"""``jsemu nats-server`` (what ``jsemu shim`` runs) starts as nats-server 2.15.1 starts, side by
side with the binary: JetStream only with ``-js`` or the file's ``jetstream``; a flag given wins
over the file (an empty one too), the file over the defaults; a ``-sd`` with a ``store_dir`` in
the file is a duplicate; a flag nats-server does not know (jsemu's own ``--no-jetstream``...)
gets Go's line on stderr, the usage on stdout and exit status 0; a word after the flags is a
command. Hypothesis draws the combinations from a small space of flags x configuration keys."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cluster import free_port
from support.startup import Outcome, real_outcome, stand_in_outcome


def _both(args: list[str], names: dict[int, str] | None = None) -> tuple[Outcome, Outcome]:
    return real_outcome(args, names), stand_in_outcome(args, names)


_FILE_JETSTREAM = [None, "jetstream: enabled", "jetstream: disabled", "jetstream {}", "jetstream { enabled: false }"]
_FILE_AUTH = [None, "authorization { user: a, password: b }", "authorization { token: s }"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    flag_port=st.sampled_from([None, "-1", "P1", "0x"]),
    file_port=st.sampled_from([None, "port: -1", "port: P2", "listen: 127.0.0.1:P2", "listen: P2"]),
    flag_host=st.sampled_from([None, "127.0.0.1", ""]),
    js_flag=st.booleans(),
    file_js=st.sampled_from(_FILE_JETSTREAM),
    flag_name=st.sampled_from([None, "flagged", ""]),
    file_name=st.booleans(),
    flag_monitor=st.sampled_from([None, "0", "M1"]),
    file_monitor=st.booleans(),
    flag_auth=st.sampled_from([[], ["--user", "u"], ["--pass", "p"], ["--auth", "t"], ["--user", ""]]),
    file_auth=st.sampled_from(_FILE_AUTH),
    store_dir=st.sampled_from([None, "flag", "file"]),
)
def test_flags_and_file_combine_as_nats_server(
    flag_port: str | None,
    file_port: str | None,
    flag_host: str | None,
    js_flag: bool,
    file_js: str | None,
    flag_name: str | None,
    file_name: bool,
    flag_monitor: str | None,
    file_monitor: bool,
    flag_auth: list[str],
    file_auth: str | None,
    store_dir: str | None,
) -> None:
    ports = {"P1": free_port(), "P2": free_port(), "M1": free_port(), "M2": free_port()}
    names = {port: name for name, port in ports.items()}

    def fill(text: str) -> str:
        for name, port in ports.items():
            text = text.replace(name, str(port))
        return text

    with tempfile.TemporaryDirectory(prefix="jsemu-standin-") as tmp:
        lines = [fill(file_port)] if file_port else []
        lines += [file_js] if file_js else []
        lines += ["server_name: from_file"] if file_name else []
        lines += [fill("http_port: M2")] if file_monitor else []
        lines += [file_auth] if file_auth else []
        lines += [f'store_dir: "{tmp}/file"'] if store_dir == "file" else []
        args: list[str] = []
        if flag_port is not None:
            args += ["-p", fill(flag_port.replace("0x", "-1"))]
        if flag_host is not None:
            args += ["-a", flag_host]
        args += ["-js"] if js_flag else []
        if flag_name is not None:
            args += ["-n", flag_name]
        if flag_monitor is not None:
            args += ["-m", fill(flag_monitor)]
        args += flag_auth
        args += ["-sd", f"{tmp}/flag"] if store_dir == "flag" else []
        if lines:
            (Path(tmp) / "server.conf").write_text("\n".join(lines) + "\n")
            args += ["-c", f"{tmp}/server.conf"]
        if flag_port is None and not file_port:
            args += ["-p", "-1"]  # never nats-server's default 4222: another server may have it
        real, emu = _both(args, names)
        assert emu == real, (args, emu, real)


def test_jetstream_only_when_asked() -> None:
    real, emu = _both(["-a", "127.0.0.1", "-p", "-1"])
    assert emu == real and real.info["jetstream"] is False
    real, emu = _both(["-a", "127.0.0.1", "-p", "-1", "-js"])
    assert emu == real and real.info["jetstream"] is True


def test_store_dir_without_jetstream_is_ignored(tmp_path: Path) -> None:
    """nats-server without JetStream neither creates nor checks ``-sd``'s directory."""
    for program, run in (("real", real_outcome), ("jsemu", stand_in_outcome)):
        target = tmp_path / program
        outcome = run(["-a", "127.0.0.1", "-p", "-1", "-sd", str(target)])
        assert outcome.exit is None and outcome.info["jetstream"] is False
        assert not target.exists(), program
        outcome = run(["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", str(target)])
        assert outcome.exit is None and (target / "jetstream").is_dir(), program


def test_store_dir_flag_and_file_is_a_duplicate(tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    for text in (f'jetstream {{ store_dir: "{tmp_path}/a" }}\n', f'store_dir: "{tmp_path}/a"\n'):
        conf.write_text(text)
        real, emu = _both(["-p", "-1", "-js", "-sd", str(tmp_path / "b"), "-c", str(conf)])
        assert emu == real
        assert real.line.endswith("Duplicate 'store_dir' configuration") and real.exit == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus"],
        ["--no-jetstream"],
        ["--max_payload", "5"],
        ["--cluster-size", "3"],
        ["-p", "abc"],
        ["-p"],
        ["-sd"],
        ["-p", "-1", "foo"],
        ["-p", "-1", "version"],
        ["-p", "-1", "help"],
        ["-v"],
    ],
)
def test_command_line_errors_and_commands(args: list[str]) -> None:
    """The first line on stderr and the exit status of nats-server's."""
    real, emu = _both(args)
    assert real.exit is not None
    assert (emu.exit, emu.line) == (real.exit, real.line)
