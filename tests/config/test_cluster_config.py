"""The cluster flags and the ``cluster {}`` block, into ``ServerOptions.cluster``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jsemu.cli import build_parser, serve_options
from jsemu.config.parser import ConfigError
from jsemu.config.server_config import load_config
from jsemu.config.startup_errors import StartupError
from jsemu.server.options import ServerOptions


def _options(*argv: str) -> ServerOptions:
    return serve_options(build_parser().parse_args(["serve", "--no-jetstream", *argv]))


def test_harness_flags() -> None:
    opts = _options(
        "-p", "-1", "--cluster", "nats://127.0.0.1:-1", "--cluster_name", "c",
        "--routes", "nats://127.0.0.1:1,nats://127.0.0.1:2", "--no_advertise", "--connect_retries", "3",
    )  # fmt: skip
    cluster = opts.cluster
    assert cluster is not None
    assert (cluster.host, cluster.port, cluster.name) == ("127.0.0.1", 0, "c")
    assert cluster.routes == ["nats://127.0.0.1:1", "nats://127.0.0.1:2"]
    assert (cluster.no_advertise, cluster.connect_retries) == (True, 3)
    assert _options("-cluster", "nats://0.0.0.0:6333", "-no_advertise=false").cluster.no_advertise is False  # type: ignore[union-attr]


def test_no_cluster_without_a_listen_address() -> None:
    assert _options().cluster is None
    assert _options("--cluster_name", "c").cluster is None
    with pytest.raises(StartupError, match="solicited routes require cluster capabilities, e.g. --cluster"):
        _options("--routes", "nats://127.0.0.1:1")
    with pytest.raises(StartupError, match="missing port in address"):
        _options("--cluster", "foo")


def test_cluster_block(tmp_path: Path) -> None:
    conf = tmp_path / "s.conf"
    conf.write_text(
        'cluster {\n  name: c\n  listen: "127.0.0.1:-1"\n  routes: ["nats://127.0.0.1:1"]\n'
        "  no_advertise: true\n  connect_retries: 2\n  authorization { user: a, password: b, timeout: 1 }\n}\n"
    )
    cluster = load_config(conf, ServerOptions()).cluster
    assert cluster is not None
    assert (cluster.name, cluster.host, cluster.port, cluster.routes) == ("c", "127.0.0.1", 0, ["nats://127.0.0.1:1"])
    assert (cluster.no_advertise, cluster.connect_retries) == (True, 2)
    assert (cluster.user, cluster.password, cluster.auth_timeout) == ("a", "b", 1.0)
    conf.write_text("cluster {\n  port: 6222\n  pools: 3\n}\n")
    with pytest.raises(ConfigError, match='s.conf:3:3: unknown field "pools"'):
        load_config(conf, ServerOptions())


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('ping_interval: "abc"', 'error parsing ping_interval: time: invalid duration "abc"'),
        ("ping_interval: 1.5", 'invalid use of field "ping_interval": ping_interval should be converted to a duration'),
        ('ping_max: "x"', "interface conversion: interface {} is string, not int64"),
        ('port: "x"', "interface conversion: interface {} is string, not int64"),
    ],
)
def test_cluster_ping_settings_refused_as_nats_server(tmp_path: Path, line: str, error: str) -> None:
    conf = tmp_path / "s.conf"
    conf.write_text(f"cluster {{\n  port: 6222\n  {line}\n}}\n")
    with pytest.raises(ConfigError, match=f"s.conf:3:3: {re.escape(error)}"):
        load_config(conf, ServerOptions())


def test_cluster_ping_settings(tmp_path: Path) -> None:
    conf = tmp_path / "s.conf"
    conf.write_text('cluster {\n  port: 6222\n  ping_interval: "250ms"\n  ping_max: 4\n}\n')
    cluster = load_config(conf, ServerOptions()).cluster
    assert cluster is not None and (cluster.ping_interval, cluster.ping_max) == (0.25, 4)
    conf.write_text("cluster {\n  port: 6222\n  ping_interval: 3\n}\n")  # a number: seconds
    cluster = load_config(conf, ServerOptions()).cluster
    assert cluster is not None and (cluster.ping_interval, cluster.ping_max) == (3.0, None)


def test_advertise_flags_and_keys(tmp_path: Path) -> None:
    """``--client_advertise``/``client_advertise`` and ``--cluster_advertise``/the block's
    ``advertise`` (or ``cluster_advertise``) are read, the flags over the file."""
    opts = _options("--client_advertise", "a:1", "--cluster", "nats://127.0.0.1:-1", "--cluster_advertise", "b:2")
    assert opts.client_advertise == "a:1"
    assert opts.cluster is not None and opts.cluster.advertise == "b:2"
    conf = tmp_path / "s.conf"
    for key in ("advertise", "cluster_advertise"):
        conf.write_text(f'client_advertise: "c:3"\ncluster {{\n  listen: "127.0.0.1:-1"\n  {key}: "d:4"\n}}\n')
        opts = load_config(conf, ServerOptions())
        assert opts.client_advertise == "c:3"
        assert opts.cluster is not None and opts.cluster.advertise == "d:4"
    assert _options("--cluster_advertise", "b:2").cluster is None  # no listener: no cluster, as nats-server
