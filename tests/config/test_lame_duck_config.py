"""``lame_duck_duration`` and ``lame_duck_grace_period``, side by side with nats-server 2.15.1:
Go duration strings only (a number is a conversion error), a duration of at least 30 s, a
grace period not negative and strictly shorter than the duration (``validateOptions``); each
refusal is nats-server's one line and exit status 1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.servers import nats_server_binary

from jsemu.cli import build_parser, serve_options
from jsemu.config.startup_errors import StartupError

S = 10**9

BAD = [
    'lame_duck_duration: "10s"',
    "lame_duck_duration: 30",
    'lame_duck_duration: "abc"',
    'lame_duck_duration: "30s"\nlame_duck_grace_period: "30s"',
    'lame_duck_grace_period: "-1s"',
    "lame_duck_grace_period: 0",
    'lame_duck_duration: "2m"\nlame_duck_grace_period: "3m"',
]


def _jsemu_error(conf: Path) -> str:
    args = build_parser().parse_args(["serve", "-c", str(conf)])
    with pytest.raises(StartupError) as exc:
        serve_options(args)
    return f"nats-server: {exc.value}"


@pytest.mark.parametrize("text", BAD)
def test_refused_as_nats_server(text: str, tmp_path: Path) -> None:
    conf = tmp_path / "c.conf"
    conf.write_text(text + "\n")
    real = subprocess.run(
        [nats_server_binary(), "-c", str(conf), "-p", "-1"], capture_output=True, text=True, timeout=10, check=False
    )
    assert real.returncode == 1
    assert _jsemu_error(conf) == real.stderr.strip()


@pytest.mark.parametrize(
    ("text", "duration", "grace"),
    [
        ("", 120 * S, 10 * S),
        ('lame_duck_duration: "30s"\nlame_duck_grace_period: "100ms"', 30 * S, S // 10),
        ('lame_duck_grace_period: "0s"', 120 * S, 10 * S),
        ("lame_duck_duration: 1m30s", 90 * S, 10 * S),
    ],
)
def test_accepted(text: str, duration: int, grace: int, tmp_path: Path) -> None:
    conf = tmp_path / "c.conf"
    conf.write_text(text + "\n")
    options = serve_options(build_parser().parse_args(["serve", "-c", str(conf)]))
    assert (options.lame_duck_duration, options.lame_duck_grace_period) == (duration, grace)
