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
import logging
import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .app import Server
from .config.cluster import ClusterConfigError, add_cluster_flags, apply_cluster_flags
from .config.server_config import ConfigError, load_config
from .config.startup_errors import StartupError, check_store_dir, listen_error, monitor_error
from .config.tls import check_files
from .conformance import command as conformance_command
from .jetstream.limits.storage import accounts_fit
from .pipeline import command as pipeline_command
from .server.auth import Auth, User
from .server.options import SYSTEM_JETSTREAM, ServerOptions
from .server.tls import TlsOptions
from .version import NATS_VERSION, __version__

__all__ = ["build_parser", "main"]


def _log(level: str, text: str) -> None:
    now = time.time()
    stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    try:
        print(f"[{os.getpid()}] {stamp} [{level}] {text}", file=sys.stderr, flush=True)
    except BrokenPipeError:
        _die_of_sigpipe()


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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jsemu", description="In-process NATS JetStream emulator")
    parser.add_argument(
        "--version", action="version", version=f"jsemu {__version__} (follows nats-server v{NATS_VERSION})"
    )
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    serve = commands.add_parser("serve", help="run a server (accepts nats-server's common flags)")
    serve.set_defaults(command_parser=serve)
    # nats-server (Go's flag package) accepts -flag and --flag alike; so do we.
    serve.add_argument("-p", "--port", "-port", type=int, default=None, help="port (default 4222; -1: a random one)")
    serve.add_argument(
        "-a", "--addr", "-addr", "--net", "-net", dest="host", default=None, help="host (default 0.0.0.0)"
    )
    serve.add_argument("-n", "--server_name", "-server_name", "--name", "-name", dest="server_name", help="server name")
    serve.add_argument(
        "-js", "--jetstream", "-jetstream", action="store_true", help="accepted; JetStream is on by default"
    )
    serve.add_argument("--no-jetstream", dest="no_jetstream", action="store_true", help="run core NATS only")
    serve.add_argument(
        "-sd", "--store_dir", "-store_dir", dest="store_dir", help="keep file streams in DIR/jetstream across restarts"
    )
    serve.add_argument(
        "-m", "--http_port", "-http_port", dest="http_port", type=int, help="monitoring port (-1: a random one)"
    )
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
    logging.add_argument("-l", "--log", metavar="FILE", help="log file")
    serve.add_argument(
        "-v",
        "--version",
        "-version",
        dest="version",
        action="store_true",
        help="print nats-server's version line (stdout) and jsemu's (stderr), then exit",
    )
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


def _trap(stop: asyncio.Event, name: str) -> None:
    _log("INF", f'Trapped "{name}" signal')
    stop.set()


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
    return server


async def serve(options: ServerOptions) -> None:
    _log_to_stderr()
    server = await _start(options)
    tune_gc()
    _log("INF", "Starting nats-server")
    _log("INF", f"  Version:  {NATS_VERSION} (jsemu)")
    _log("INF", f"  Name:     {server.server_name}")
    _log("INF", f"  ID:       {server.server_id}")
    if options.jetstream:
        _log("INF", "Starting JetStream")
        if options.cluster_size > 1:
            peers = ", ".join(server.jetstream.peer_names) if server.jetstream else ""
            _log("INF", f"  Simulated cluster {options.cluster_name or 'jsemu'!r}: {peers}")
    _log("INF", "  Control plane on $JSEMU.API.> (see jsemu.control)")
    if server.monitor is not None:
        _log("INF", f"Starting http monitor on {options.host}:{server.monitor.port}")
    _log("INF", f"Listening for client connections on {options.host}:{server.port}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig, name in ((signal.SIGTERM, "terminated"), (signal.SIGINT, "interrupt")):
        loop.add_signal_handler(sig, _trap, stop, name)
    _log("INF", "Server is ready")
    await stop.wait()
    _log("INF", "Initiating Shutdown...")
    await server.stop()
    _log("INF", "Server Exiting..")


def write_shim(directory: Path) -> Path:
    """A ``nats-server`` executable that runs ``jsemu serve`` with the same arguments (with
    this Python, so it works outside the virtualenv too)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "nats-server"
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m jsemu serve "$@"\n')
    path.chmod(0o755)
    return path


def main(argv: Sequence[str] | None = None) -> int:
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
    try:
        options = serve_options(args)
        asyncio.run(serve(options))
    except StartupError as exc:
        if exc.fatal:
            _log("FTL", str(exc))
        else:
            print(f"nats-server: {exc}", file=sys.stderr)
        return 1
    return 0


def serve_options(args: argparse.Namespace) -> ServerOptions:
    """The options of ``jsemu serve``: the configuration file, then the flags (which win, as with
    nats-server); :class:`StartupError` for what nats-server refuses before it starts."""
    options = ServerOptions(host="0.0.0.0", port=4222)
    if args.config:
        try:
            load_config(args.config, options)
        except ConfigError as exc:
            raise StartupError(str(exc), fatal=False) from None
    if args.port is not None:
        options.port = 0 if args.port == -1 else args.port
    if args.host is not None:
        options.host = args.host
    if args.server_name:
        options.server_name = args.server_name
    if args.no_jetstream:
        options.jetstream = False
    if args.store_dir:
        options.store_dir = args.store_dir
    if args.http_port is not None:
        options.http_port = args.http_port
    if args.max_payload:
        options.max_payload = args.max_payload
    if args.cluster_size is not None:
        options.cluster_size = args.cluster_size
    if args.cluster_name:
        options.cluster_name = args.cluster_name
    if args.user is not None or args.password is not None or args.token is not None:
        auth = options.auth if options.auth is not None else Auth()
        if args.user is not None or args.password is not None:
            base = auth.user or User("")
            auth.user = User(
                args.user if args.user is not None else base.name,
                args.password if args.password is not None else base.password,
            )
        if args.token is not None:
            auth.token = args.token
        options.auth = auth
    if args.tls or args.tlsverify or args.tlscert or args.tlskey or args.tlscacert:
        options.tls = _tls_flags(args, options.tls)
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
