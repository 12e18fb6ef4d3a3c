"""The argparse parser of every ``jsemu`` sub-command, and the flags of nats-server it accepts.

``serve`` and ``nats-server`` (the stand-in) share ``add_server_flags``: nats-server's flags
(``-flag`` and ``--flag`` alike, as Go's flag package), plus, for ``serve`` only, jsemu's own
(``--no-jetstream``, ``--max_payload``, the simulated cluster); the stand-in has nats-server's
alone, so a flag nats-server does not know is refused as nats-server refuses it. The stand-in's
command line is read with Go's rules (:mod:`jsemu.cli.stand_in`); this parser defines its flags,
its help, and the reference page (``python -m jsemu.tools.docs_reference``). A bad flag is the
sub-command's usage and Go's message (``go_flag_message``), status 2; the stand-in's, Go's line
and nats-server's usage on stdout, status 0 (``_GoFlagParser``).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

from ..config.cluster import add_cluster_flags
from ..conformance.arguments import add_arguments as add_conformance_arguments
from ..pipeline import command as pipeline_command
from ..sessions.arguments import add_record_arguments, add_replay_arguments
from ..version import NATS_VERSION, __version__
from .nats_server_help import USAGE

__all__ = ["add_server_flags", "build_parser", "go_flag_message"]


def go_flag_message(message: str) -> str:
    """argparse's complaint in the words of Go's flag package, which nats-server uses."""
    m = re.fullmatch(r"unrecognized arguments: (\S+).*", message)
    if m and m.group(1).startswith("-"):
        return f"flag provided but not defined: -{m.group(1).lstrip('-').split('=', 1)[0]}"
    m = re.fullmatch(r"argument ([^/:]+)[^:]*: invalid (?:int|float) value: '(.*)'", message)
    if m:
        return f'invalid value "{m.group(2)}" for flag {m.group(1)}: parse error'
    m = re.fullmatch(r"argument ([^/:]+)[^:]*: expected one argument", message)
    if m:
        return f"flag needs an argument: {m.group(1)}"
    return message


class _Parser(argparse.ArgumentParser):
    """Errors: this (sub-)command's usage, then one line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: {go_flag_message(message)}\n")


class _GoFlagParser(_Parser):
    """The stand-in's errors as nats-server's (Go's ``flag.ExitOnError`` with nats-server's
    usage function): Go's line on stderr, the usage on stdout, exit status 0."""

    def error(self, message: str) -> NoReturn:
        print(go_flag_message(message), file=sys.stderr)
        sys.stdout.write(USAGE)
        self.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jsemu", description="In-process NATS JetStream emulator")
    parser.add_argument(
        "--version", action="version", version=f"jsemu {__version__} (follows nats-server v{NATS_VERSION})"
    )
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    serve = commands.add_parser("serve", help="run a server (accepts nats-server's common flags)")
    serve.set_defaults(command_parser=serve)
    add_server_flags(serve, stand_in=False)
    commands._parser_class = _GoFlagParser  # add_parser takes no class of its own
    stand_in_command = commands.add_parser(
        "nats-server",
        help="run a server as nats-server starts: its flags only, its defaults (JetStream only with -js); "
        "`jsemu shim` runs this",
    )
    commands._parser_class = _Parser
    stand_in_command.set_defaults(command_parser=stand_in_command)
    add_server_flags(stand_in_command, stand_in=True)
    stand_in_command.add_argument("subcommand", nargs="*", help=argparse.SUPPRESS)
    shim = commands.add_parser(
        "shim", help="write a `nats-server` script that runs jsemu, for harnesses that spawn nats-server by name"
    )
    shim.set_defaults(command_parser=shim)
    shim.add_argument("directory", help="where to write the `nats-server` script (put it first on PATH)")
    conformance = commands.add_parser(
        "conformance", help="run the conformance table against a server (exit 1 on any failure)"
    )
    conformance.set_defaults(command_parser=conformance)
    add_conformance_arguments(conformance)
    record = commands.add_parser("record", help="record a session: a proxy that writes what passes to a file")
    record.set_defaults(command_parser=record)
    add_record_arguments(record)
    replay = commands.add_parser(
        "replay", help="replay a recorded session against a server, show the first difference (exit 1)"
    )
    replay.set_defaults(command_parser=replay)
    add_replay_arguments(replay)
    pipeline = commands.add_parser("pipeline", help="stream data through Spark: export, view, seed (extra: spark)")
    pipeline.set_defaults(command_parser=pipeline)
    pipeline_command.add_arguments(pipeline)
    return parser


def add_server_flags(serve: argparse.ArgumentParser, stand_in: bool) -> None:
    """nats-server's flags, for ``serve`` and for the stand-in; ``serve`` adds jsemu's own
    (``--no-jetstream``, ``--max_payload``, the simulated cluster), the stand-in does not: a
    flag nats-server does not know is refused there as nats-server refuses it."""
    # nats-server (Go's flag package) accepts -flag and --flag alike; so do we.
    serve.add_argument("-p", "--port", "-port", type=int, default=None, help="port (default 4222; -1: a random one)")
    serve.add_argument(
        "-a", "--addr", "-addr", "--net", "-net", dest="host", default=None, help="host (default 0.0.0.0)"
    )
    serve.add_argument("-n", "--server_name", "-server_name", "--name", "-name", dest="server_name", help="server name")
    serve.add_argument(
        "-js",
        "--jetstream",
        "-jetstream",
        action="store_true",
        help="enable JetStream" if stand_in else "accepted; JetStream is on by default",
    )
    if not stand_in:
        serve.add_argument("--no-jetstream", dest="no_jetstream", action="store_true", help="run core NATS only")
    serve.add_argument(
        "-sd", "--store_dir", "-store_dir", dest="store_dir", help="keep file streams in DIR/jetstream across restarts"
    )
    serve.add_argument(
        "-m", "--http_port", "-http_port", dest="http_port", type=int, help="monitoring port (-1: a random one)"
    )
    if not stand_in:
        serve.add_argument("--max_payload", "-max_payload", dest="max_payload", type=int, help="maximum payload bytes")
    serve.add_argument("-c", "--config", "-config", dest="config", help="nats-server configuration file (subset)")
    if not stand_in:
        serve.add_argument(
            "--operator-demo",
            dest="operator_demo",
            metavar="DIR",
            help="operator mode with JWTs minted into DIR (server.conf, app.creds; kept and reused)",
        )
    auth = serve.add_argument_group("authorization options", "as nats-server's; see the documentation (Security)")
    auth.add_argument("--user", "-user", dest="user", metavar="USER", help="user required for connections")
    auth.add_argument("--pass", "-pass", dest="password", metavar="PASSWORD", help="password required for connections")
    auth.add_argument(
        "--auth", "-auth", dest="token", metavar="TOKEN", help="authorization token required for connections"
    )
    tls = serve.add_argument_group("TLS options", "as nats-server's; see the documentation (Security)")
    tls.add_argument("--tls", "-tls", dest="tls", action="store_true", help="enable TLS, do not verify clients")
    tls.add_argument("--tlscert", "-tlscert", dest="tlscert", metavar="FILE", help="server certificate file")
    tls.add_argument("--tlskey", "-tlskey", dest="tlskey", metavar="FILE", help="private key for server certificate")
    tls.add_argument(
        "--tlsverify", "-tlsverify", dest="tlsverify", action="store_true", help="enable TLS, verify clients"
    )
    tls.add_argument("--tlscacert", "-tlscacert", dest="tlscacert", metavar="FILE", help="client certificate CA")
    if not stand_in:
        serve.add_argument(
            "--cluster-size",
            dest="cluster_size",
            type=int,
            default=None,
            help="simulate a JetStream cluster of this many servers (streams up to R<size>); 1 is standalone",
        )
        serve.add_argument("--cluster-name", dest="cluster_name", default=None, help="name of the simulated cluster")
    add_cluster_flags(serve)
    logging = serve.add_argument_group(
        "nats-server logging flags", "accepted so that nats-server command lines work; jsemu logs start-up only"
    )
    for flags, what in (
        (("-D", "--debug"), "debug output"),
        (("-V", "--trace"), "protocol trace"),
        (("-VV",), "verbose trace"),
        (("-DV",), "debug and trace"),
        (("-DVV",), "debug and verbose trace"),
    ):
        logging.add_argument(*flags, action="store_true", help=what)
    logging.add_argument("-l", "--log", "-log", metavar="FILE", help="log file (reopened on SIGUSR1)")
    serve.add_argument(
        "-sl",
        "--signal",
        "-signal",
        dest="signal",
        metavar="CMD[=PID]",
        help="send a signal to a running server (ldm, stop, quit, term, reopen, reload) and exit",
    )
    serve.add_argument("-P", "--pid", "-pid", dest="pid_file", metavar="FILE", help="file to store the process id")
    _add_nats_server_flags(serve)
    serve.add_argument(
        "-v",
        "--version",
        "-version",
        dest="version",
        action="store_true",
        help="print nats-server's version line (stdout) and jsemu's (stderr), then exit",
    )


def _bool_flag(text: str) -> bool:
    """A bool flag's ``=VALUE`` (Go's ``strconv.ParseBool``), for ``serve``'s argparse."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}")


def _add_nats_server_flags(serve: argparse.ArgumentParser) -> None:
    """nats-server's remaining flags: the ones jsemu honours, and the ones it refuses at
    start-up with one line (``options.refused_flags``) rather than ignore."""
    serve.add_argument("-t", dest="check_config", action="store_true", help="test the configuration file and exit")
    serve.add_argument(
        "--ports_file_dir",
        "-ports_file_dir",
        dest="ports_file_dir",
        metavar="DIR",
        help="write DIR/nats-server_<pid>.ports (the listeners' URLs as JSON) once listening; removed at exit",
    )
    serve.add_argument(
        "-ms", "--https_port", "-https_port", dest="https_port", type=int, help="HTTPS monitoring port (not supported)"
    )
    serve.add_argument(
        "--client_advertise", "-client_advertise", dest="client_advertise", help="client URL to advertise"
    )
    logging = serve.add_argument_group("nats-server log format flags")
    for flags, dest, what in (
        (("-T", "--logtime", "-logtime"), "logtime", "time stamps on log lines (default true; -T=false: none)"),
        (("--logtime_utc", "-logtime_utc"), "logtime_utc", "time stamps in UTC"),
        (("-s", "--syslog", "-syslog"), "syslog", "log to syslog (refused: jsemu logs to stderr or -l only)"),
    ):
        logging.add_argument(*flags, dest=dest, nargs="?", const=True, type=_bool_flag, default=None, help=what)
    logging.add_argument(
        "-r", "--remote_syslog", "-remote_syslog", dest="remote_syslog", help="remote syslog (refused)"
    )
    logging.add_argument(
        "--log_size_limit", "-log_size_limit", dest="log_size_limit", type=int, help="log file rotation size (refused)"
    )
    logging.add_argument(
        "--max_traced_msg_len",
        "-max_traced_msg_len",
        dest="max_traced_msg_len",
        type=int,
        help="accepted: jsemu has no protocol trace to shorten",
    )
    serve.add_argument("--profile", "-profile", dest="profile", type=int, help="profiling HTTP port (refused)")
    serve.add_argument("--help_tls", "-help_tls", dest="help_tls", action="store_true", help="nats-server's TLS help")
