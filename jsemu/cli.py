"""``jsemu serve``: run the server, accepting nats-server's common flags.

Harnesses that spawn ``nats-server`` wait for its log lines, so the same two lines
(``Listening for client connections on HOST:PORT`` and ``Server is ready``) are printed
on stderr in nats-server's log format. Start-up failures are one line in nats-server's
wording (``startup_errors``), bad flags the sub-command's usage and Go's flag message.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from .app import Server
from .config.cluster import ClusterConfigError, add_cluster_flags, apply_cluster_flags
from .config.digest import config_digest
from .config.server_config import ConfigError, load_config
from .config.startup_errors import StartupError, check_store_dir, listen_error, monitor_error
from .config.tls import check_files
from .conformance import command as conformance_command
from .go_flags import FlagError, FlagKind, GoFlagSet
from .jetstream.limits.storage import accounts_fit
from .nats_server_help import TLS_HELP, USAGE
from .pipeline import command as pipeline_command
from .process_signals import SIGNAL_NAMES, process_signal
from .server.advertise import AdvertiseError
from .server.auth import Auth, User
from .server.interfaces import interface_ips
from .server.options import SYSTEM_JETSTREAM, ServerOptions
from .server.reload import ReloadRefused, apply_options, diff_options
from .server.tls import TlsOptions
from .version import NATS_VERSION, __version__

__all__ = ["add_server_flags", "build_parser", "main", "parse_stand_in", "serve_options", "stand_in_options"]

#: nats-server's client port, which ``-p 0`` also means (``setBaselineOptions``).
DEFAULT_PORT = 4222


#: ``-l FILE``: the log file written instead of stderr (reopened on SIGUSR1), while serving.
_log_path: str | None = None
_log_file: TextIO | None = None


#: ``-T``/``--logtime`` (time stamps, nats-server's default) and ``--logtime_utc``.
_log_time = True
_log_utc = False


def _log(level: str, text: str) -> None:
    if _log_time:
        now = time.time()
        clock = time.gmtime(now) if _log_utc else time.localtime(now)
        stamp = time.strftime("%Y/%m/%d %H:%M:%S", clock) + f".{int(now % 1 * 1e6):06d} "
    else:
        stamp = ""
    line = f"[{os.getpid()}] {stamp}[{level}] {text}"
    if _log_file is not None:
        _log_file.write(line + "\n")
        _log_file.flush()
        return
    try:
        print(line, file=sys.stderr, flush=True)
    except BrokenPipeError:
        _die_of_sigpipe()


def _open_log(path: str | None) -> None:
    """Send log lines to ``path`` (appended, as nats-server's file logger), None: stderr."""
    global _log_path, _log_file
    if _log_file is not None:
        _log_file.close()
    _log_path = path
    _log_file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115 (kept open while serving)


def _reopen_log() -> None:
    """SIGUSR1 (``ReOpenLogFile``): a new file at the same path, for log rotation."""
    if _log_path is None:
        _log("INF", "File log re-open ignored, not a file logger")
        return
    _open_log(_log_path)
    _log("INF", "File log re-opened")


def _die_of_sigpipe() -> None:
    """Go's runtime, on a write to a broken pipe on standard error: the process dies of
    SIGPIPE, whatever it was doing, a signal's shutdown included (nats-server whose stderr lost
    its reader exits so on SIGTERM or SIGINT, at its first log line). Python ignores SIGPIPE
    and raises instead, which would leave a signal handler half done and the server running:
    so the default action comes back and the signal is raised."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    os._exit(1)  # no SIGPIPE on this platform: still do not live on without a log


_LEVELS = {logging.DEBUG: "DBG", logging.INFO: "INF", logging.WARNING: "WRN", logging.ERROR: "ERR"}


class _ServerLog(logging.Handler):
    """jsemu's own log records (a damaged store, a restored stream) as nats-server log lines."""

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        level = getattr(record, "nats_level", None) or _LEVELS.get(record.levelno, "ERR")
        _log(level, text.replace("\n", " "))


def _log_to_stderr() -> None:
    logger = logging.getLogger("jsemu")
    if not any(isinstance(h, _ServerLog) for h in logger.handlers):
        logger.addHandler(_ServerLog(logging.INFO))
        logger.setLevel(logging.INFO)
        logger.propagate = False


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


def _go_flag_set(parser: argparse.ArgumentParser) -> GoFlagSet:
    """The stand-in's flags (``add_server_flags``) as Go's ``FlagSet`` defines them."""
    flags = GoFlagSet()
    for action in parser._actions:
        if isinstance(action, (argparse._StoreTrueAction, argparse._HelpAction)) or action.const is True:
            kind = FlagKind.BOOL
        elif action.type is int:
            kind = FlagKind.INT
        else:
            kind = FlagKind.STRING
        for option in action.option_strings:
            flags.define(option.lstrip("-"), kind, "help" if isinstance(action, argparse._HelpAction) else action.dest)
    return flags


def parse_stand_in(argv: Sequence[str]) -> argparse.Namespace:
    """``jsemu nats-server ARGV`` read as nats-server reads it (Go's ``flag``, see
    :mod:`jsemu.go_flags`) into the namespace ``serve`` uses; a refused command line exits as
    nats-server's (Go's line on stderr, the usage on stdout, status 0)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    stand_in: argparse.ArgumentParser = commands.choices["nats-server"]
    args = argparse.Namespace()
    stand_in.parse_args([], args)
    try:
        values, visited, rest = _go_flag_set(stand_in).parse(argv)
    except FlagError as exc:
        stand_in.error(str(exc))
    for dest, value in values.items():
        setattr(args, dest, value)
    args.help = values.get("help", False)
    args.subcommand = rest
    args.flags_given = visited
    args.command = "nats-server"
    return args


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
    conformance_command.add_arguments(conformance)
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
    start-up with one line (``_refused_flags``) rather than ignore."""
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


#: Flags jsemu cannot honour: (dest, flag, why); given (not their zero value), start-up stops.
_REFUSED_FLAGS = (
    ("syslog", "syslog", "jsemu logs to stderr or the -l file"),
    ("remote_syslog", "remote_syslog", "jsemu logs to stderr or the -l file"),
    ("profile", "profile", "no Go profiler to serve"),
)


def _refused_flags(args: argparse.Namespace) -> None:
    """:class:`StartupError` for the first flag jsemu refuses (see ``_REFUSED_FLAGS``)."""
    for dest, flag, why in _REFUSED_FLAGS:
        if getattr(args, dest, None):
            raise StartupError(f"--{flag}: not supported by jsemu ({why})", fatal=False)
    if getattr(args, "log_size_limit", None) and args.log:
        raise StartupError("--log_size_limit: not supported by jsemu (the -l file is not rotated)", fatal=False)


def reload_config(server: Server, config: str | None, read: Callable[[], ServerOptions]) -> str | None:
    """SIGHUP (``Server.Reload``): the file again, the flags on top; the error or None."""
    if not config:
        return "can only reload config when a file is provided using -c or --config"
    try:
        new = read()
        lines = diff_options(server.options, new)
    except (StartupError, ReloadRefused) as exc:
        return str(exc)
    apply_options(server, new, lines, lambda line: _log("INF", f"Reloaded: {line}"))
    return None


def _on_signal(
    sig: signal.Signals, server: Server, stop: asyncio.Event, config: str | None, read: Callable[[], ServerOptions]
) -> None:
    """nats-server's ``handleSignal``."""
    _log("INF", f'Trapped "{SIGNAL_NAMES[sig]}" signal')
    if sig == signal.SIGINT or (sig == signal.SIGTERM and not server.lame_duck):
        stop.set()  # SIGTERM during lame duck mode: the lame duck run goes on
    elif sig == signal.SIGUSR1:
        _reopen_log()
    elif sig == signal.SIGUSR2:
        server.enter_lame_duck()
    elif sig == signal.SIGHUP:
        error = reload_config(server, config, read)
        if error is None:
            digest = config_digest(config) if config else "sha256:"
            _log("INF", f"Reloaded server configuration ({digest})")
        else:
            _log("ERR", f"Failed to reload server configuration: {error}")


def _quit(signum: int, frame: object) -> None:
    """SIGQUIT, which nats-server leaves to Go's runtime: every goroutine's stack on stderr,
    exit status 2. Here: every thread's Python stack."""
    import faulthandler

    try:
        sys.stderr.write("SIGQUIT: quit\n")
        sys.stderr.flush()
        faulthandler.dump_traceback(all_threads=True)
    except (BrokenPipeError, ValueError, OSError):
        pass
    os._exit(2)


def _write_pid_file(path: str) -> None:
    try:
        Path(path).write_text(str(os.getpid()))
    except OSError as exc:
        raise StartupError(f"Could not write pidfile: open {path}: {_os_reason(exc)}") from None


#: Go's ``syscall.Errno`` texts for a file that cannot be written.
_ERRNO_TEXT = {2: "no such file or directory", 13: "permission denied", 20: "not a directory", 21: "is a directory"}


def tune_gc() -> None:
    """Collection thresholds for a server process (``serve`` only; an in-process server
    leaves its host's settings alone). A busy stream keeps a long-lived index object per
    subject; with Python's defaults (a young collection every 700 allocations) the
    collector then takes a quarter to a third of the time. Young objects are collected
    every 50,000 allocations instead, and what exists at start-up is left out."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


async def _start(options: ServerOptions) -> Server:
    """Start the server or raise :class:`StartupError` with nats-server's fatal line."""
    server = Server(options)
    try:
        await server.start()
    except OSError as exc:
        if server.monitor is None:
            raise listen_error(options.host, options.port, exc) from None
        await server.stop()
        raise monitor_error(options.host, max(options.http_port or 0, 0), exc) from None
    except AdvertiseError as exc:  # nats-server's [FTL] line for an advertise it cannot read
        await server.stop()
        raise StartupError(str(exc)) from None
    return server


async def serve(
    options: ServerOptions,
    config: str | None = None,
    pid_file: str | None = None,
    read: Callable[[], ServerOptions] | None = None,
    ports_file: Path | None = None,
) -> None:
    _log_to_stderr()
    server = await _start(options)
    tune_gc()
    _log("INF", "Starting nats-server")
    _log("INF", f"  Version:  {NATS_VERSION} (jsemu)")
    _log("INF", f"  Name:     {server.server_name}")
    _log("INF", f"  ID:       {server.server_id}")
    if pid_file:
        try:
            _write_pid_file(pid_file)
        except StartupError:
            await server.stop()
            raise
    if options.jetstream:
        _log("INF", "Starting JetStream")
        if options.cluster_size > 1:
            peers = ", ".join(server.jetstream.peer_names) if server.jetstream else ""
            _log("INF", f"  Simulated cluster {options.cluster_name or 'jsemu'!r}: {peers}")
    _log("INF", "  Control plane on $JSEMU.API.> (see jsemu.control)")
    if server.monitor is not None:
        _log("INF", f"Starting http monitor on {options.host}:{server.monitor.port}")
    _log("INF", f"Listening for client connections on {options.host}:{server.port}")
    for i, node in enumerate(server.nodes[1:], 1):  # a simulated cluster's other servers
        _log("INF", f"  Node {node.name} ({node.server_id}) takes clients on {options.host}:{node.port}")
        if i < len(server.monitors):
            _log("INF", f"  Node {node.name} monitoring on {options.host}:{server.monitors[i].port}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in SIGNAL_NAMES:
        loop.add_signal_handler(sig, _on_signal, sig, server, stop, config, read or (lambda: options))
    signal.signal(signal.SIGQUIT, _quit)
    _log("INF", "Server is ready")
    if ports_file is not None:
        _write_ports_file(ports_file, server, options)
    stopped = asyncio.ensure_future(stop.wait())
    lame_duck_over = asyncio.ensure_future(server.lame_duck_done.wait())
    await asyncio.wait({stopped, lame_duck_over}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    lame_duck_over.cancel()
    _log("INF", "Initiating Shutdown...")
    await server.stop()
    if ports_file is not None:
        try:
            ports_file.unlink()
        except OSError as exc:
            _log("ERR", f"Error cleaning up ports file {ports_file}: remove {ports_file}: {_os_reason(exc)}")
    _log("INF", "Server Exiting..")


def _ports_file_path(directory: str | None, command: str) -> Path | None:
    """``--ports_file_dir``: ``DIR/<executable>_<pid>.ports``; the stand-in's executable is the
    ``nats-server`` script (the shim execs Python, so the pid is the script's), serve's ``jsemu``."""
    if not directory:
        return None
    return Path(directory) / f"{'nats-server' if command == 'nats-server' else 'jsemu'}_{os.getpid()}.ports"


def _listener_urls(scheme: str, host: str, port: int) -> list[str]:
    """nats-server's ``formatURL``: a wildcard listener as every interface address."""
    hosts = interface_ips() if host in ("0.0.0.0", "::", "") else [host]
    return [f"{scheme}://[{h}]:{port}" if ":" in h else f"{scheme}://{h}:{port}" for h in hosts]


def _write_ports_file(path: Path, server: Server, options: ServerOptions) -> None:
    """nats-server's ``logPorts``: the listeners' URLs as compact JSON (no newline), written
    once the server listens; a failure is an ``[ERR]`` line, the server goes on."""
    ports: dict[str, list[str]] = {"nats": _listener_urls("tls" if options.tls else "nats", options.host, server.port)}
    if server.monitor is not None:
        ports["monitoring"] = _listener_urls("http", options.host, server.monitor.port)
    cluster = getattr(server, "cluster", None)
    if cluster is not None and options.cluster is not None:
        ports["cluster"] = _listener_urls("nats", options.cluster.host, cluster.port)
    try:
        path.write_text(json.dumps(ports, separators=(",", ":")))
    except OSError as exc:
        _log("ERR", f"Error writing ports file ({path}): open {path}: {_os_reason(exc)}")


def _os_reason(exc: OSError) -> str:
    return _ERRNO_TEXT.get(exc.errno or 0, (exc.strerror or str(exc)).lower())


def write_shim(directory: Path) -> Path:
    """A ``nats-server`` executable that runs ``jsemu nats-server`` with the same arguments
    (with this Python, so it works outside the virtualenv too): nats-server's flags and
    defaults, so a harness that starts nats-server without ``-js`` gets no JetStream.

    Why a sub-command and not a flag of ``serve``: the stand-in differs in more than one
    default (its flags are nats-server's only, its flag errors are Go's, a word after the
    flags is a command), and one name that says "behave as nats-server" keeps ``serve``'s
    parser and help free of a mode switch that every option would have to consult."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "nats-server"
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m jsemu nats-server "$@"\n')
    path.chmod(0o755)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["nats-server"]:
        return _run_stand_in(parse_stand_in(argv[1:]))
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # the sub-command's usage, not the top level's
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    if args.command == "conformance":
        return conformance_command.main(args)
    if args.command == "pipeline":
        return pipeline_command.main(args)
    if args.command == "shim":
        print(write_shim(Path(args.directory)))
        return 0
    if args.command != "serve":
        parser.print_help()
        return 2
    if args.version:
        print(f"nats-server: v{NATS_VERSION}")  # stdout as nats-server's, for harnesses that parse it
        print(f"jsemu: v{__version__}", file=sys.stderr)
        return 0
    return _serve(args, lambda: serve_options(args))


def _run_stand_in(args: argparse.Namespace) -> int:
    """``jsemu nats-server``: what nats-server's ``main`` does before it serves, then serve."""
    code = _stand_in_command(args)
    if code is not None:
        return code
    return _serve(args, lambda: serve_options(args, stand_in=True))


def _stand_in_command(args: argparse.Namespace) -> int | None:
    """What nats-server's ``ConfigureOptions`` and ``main`` do before a server exists: ``-v``,
    ``-h``, ``--help_tls``, a word after the flags (a command: ``version``, ``help``, or
    refused), ``-t``: the exit status; None to serve."""
    command = args.subcommand[0].lower() if args.subcommand else ""
    if args.version or command == "version":
        print(f"nats-server: v{NATS_VERSION}")
        return 0
    if args.help or command == "help":
        sys.stdout.write(USAGE)
        return 0
    if args.help_tls:
        sys.stdout.write(TLS_HELP)
        return 0
    if command:
        print(f'nats-server: unrecognized command: "{args.subcommand[0]}"', file=sys.stderr)
        return 1
    if args.check_config:
        return _check_config(args)
    return None


def _check_config(args: argparse.Namespace) -> int:
    """``-t``: the file parsed and checked (not the flags over it), nats-server's verdict."""
    if args.signal:
        return 0 if _send_signal(args.signal) else 1
    if not args.config:
        print("nats-server: must specify [-c, --config] option to check configuration file syntax", file=sys.stderr)
        return 1
    try:
        load_config(args.config, ServerOptions(host="0.0.0.0", port=DEFAULT_PORT, jetstream=False))
        digest = config_digest(args.config)
    except ConfigError as exc:
        print(f"nats-server: {exc}", file=sys.stderr)
        return 1
    print(f"nats-server: configuration file {args.config} is valid ({digest})", file=sys.stderr)
    return 0


def stand_in_options(argv: Sequence[str]) -> ServerOptions:
    """The options ``jsemu nats-server ARGV`` would serve with; ``SystemExit`` (its status, its
    lines written) where it would not start. For tests, which start the server themselves."""
    args = parse_stand_in(argv)
    code = _stand_in_command(args)
    if code is not None:
        raise SystemExit(code)
    try:
        return serve_options(args, stand_in=True)
    except StartupError as exc:
        _report(exc)
        raise SystemExit(1) from None


def _report(exc: StartupError) -> None:
    if exc.fatal:
        _log("FTL", str(exc))
    else:
        print(f"nats-server: {exc}", file=sys.stderr)


def _serve(args: argparse.Namespace, resolve: Callable[[], ServerOptions]) -> int:
    """Serve (or, with ``--signal``, signal a running server) as nats-server's ``main``."""
    if args.signal:
        return 0 if _send_signal(args.signal) else 1
    global _log_time, _log_utc
    try:
        _refused_flags(args)
        options = resolve()
        _log_time = args.logtime is not False
        _log_utc = bool(args.logtime_utc)
        _open_log(args.log)
        ports_file = _ports_file_path(args.ports_file_dir, args.command)
        asyncio.run(serve(options, args.config, args.pid_file, resolve, ports_file))
    except StartupError as exc:
        _report(exc)
        return 1
    return 0


def _send_signal(command: str) -> bool:
    """``--signal``: sent, or nats-server's line on stderr and False."""
    error = process_signal(command)
    if error is not None:
        print(f"nats-server: {error}", file=sys.stderr)
        return False
    return True


def serve_options(args: argparse.Namespace, stand_in: bool = False) -> ServerOptions:
    """The options of ``jsemu serve`` (``stand_in``: of ``jsemu nats-server``, JetStream off
    unless ``-js`` or the file's ``jetstream`` turns it on), combined as nats-server's
    ``ConfigureOptions`` does: the flags are read, then the file over them (so a ``store_dir``
    of the file next to ``-sd`` is a duplicate), then the flags again, so every flag given
    wins, an empty one too (``-n ""`` clears the file's name, ``-p 0`` is the default port);
    :class:`StartupError` for what nats-server refuses before it starts."""
    options = ServerOptions(host="0.0.0.0", port=DEFAULT_PORT, jetstream=not stand_in)
    if args.config:
        options.store_dir = args.store_dir or None
        try:
            load_config(args.config, options)
        except ConfigError as exc:
            raise StartupError(str(exc), fatal=False) from None
    _flags_over_file(args, options)
    if not options.host:
        options.host = "0.0.0.0"  # setBaselineOptions
    _https_monitor(args, options)
    try:
        apply_cluster_flags(args, options)
    except ClusterConfigError as exc:
        raise StartupError(str(exc), fatal=False) from None
    if options.system_jetstream():
        raise StartupError(SYSTEM_JETSTREAM)  # an [FTL] line, as nats-server's
    try:
        options.validate()
    except ValueError as exc:
        raise StartupError(str(exc), fatal=False) from None
    if options.jetstream and options.store_dir:
        check_store_dir(options.store_dir)
    if options.jetstream:
        no_room = accounts_fit(options)
        if no_room is not None:
            raise StartupError(
                "Can't start JetStream: Error enabling jetstream on configured accounts: "
                f"{no_room.description} ({no_room.err_code})"
            )
    return options


def _https_monitor(args: argparse.Namespace, options: ServerOptions) -> None:
    """``-ms``: nats-server's refusals (``StartMonitoring``); with TLS, jsemu's (no HTTPS monitor)."""
    https_port = getattr(args, "https_port", None)
    if not https_port:
        return
    if options.http_port:
        raise StartupError(
            f"Can't start monitoring: can't specify both HTTP ({options.http_port}) and HTTPs ({https_port}) ports"
        )
    if options.tls is None:
        raise StartupError("Can't start monitoring: TLS cert and key required for HTTPS")
    raise StartupError("--https_port: not supported by jsemu (no HTTPS monitor)", fatal=False)


def _flags_over_file(args: argparse.Namespace, options: ServerOptions) -> None:
    """Each flag given over what the file set (Go's second ``fs.Parse``)."""
    if args.port is not None:
        options.port = {0: DEFAULT_PORT, -1: 0}.get(args.port, args.port)  # ServerOptions' 0: random
    if args.host is not None:
        options.host = args.host
    if args.server_name is not None:
        options.server_name = args.server_name or None  # empty: the server id, as no name
    if args.jetstream:
        options.jetstream = True
    if getattr(args, "no_jetstream", False):
        options.jetstream = False
    if args.store_dir is not None:
        options.store_dir = args.store_dir or None
    if args.http_port is not None:
        options.http_port = args.http_port
    if getattr(args, "client_advertise", None):
        options.client_advertise = args.client_advertise
    if getattr(args, "max_payload", None):
        options.max_payload = args.max_payload
    if getattr(args, "cluster_size", None) is not None:
        options.cluster_size = args.cluster_size
    if getattr(args, "cluster_name", None):
        options.cluster_name = args.cluster_name
    if args.user is not None or args.password is not None or args.token is not None:
        options.auth = _auth_flags(args, options.auth)
    if args.tls or args.tlsverify or args.tlscert or args.tlskey or args.tlscacert:
        options.tls = _tls_flags(args, options.tls)


def _auth_flags(args: argparse.Namespace, auth: Auth | None) -> Auth | None:
    """``--user``/``--pass``/``--auth`` over the file's ``authorization`` user, password and
    token, as nats-server's fields: a user is required only with a name (``--pass`` alone, or
    ``--user ""`` over the file's user, leaves the server open), a token only when not empty."""
    auth = auth if auth is not None else Auth()
    if args.user is not None or args.password is not None:
        base = auth.user or User("")
        name = args.user if args.user is not None else base.name
        password = args.password if args.password is not None else base.password
        auth.user = User(name, password) if name else None
    if args.token is not None:
        auth.token = args.token
    if not (auth.token or auth.user or auth.users or auth.nkeys or auth.no_auth_user):
        return None
    return auth


def _tls_flags(args: argparse.Namespace, base: TlsOptions | None) -> TlsOptions:
    """``--tls*`` over the file's ``tls`` block, checked as nats-server checks them."""
    tls = base if base is not None else TlsOptions()
    tls.cert_file = args.tlscert or tls.cert_file
    tls.key_file = args.tlskey or tls.key_file
    tls.ca_file = args.tlscacert or tls.ca_file
    tls.verify = tls.verify or args.tlsverify
    if not tls.cert_file:
        raise StartupError("TLS Server certificate must be present and valid", fatal=False)
    if not tls.key_file:
        raise StartupError("TLS Server private key must be present and valid", fatal=False)
    error = check_files(tls)
    if error is not None:
        raise StartupError(error, fatal=False)
    return tls
