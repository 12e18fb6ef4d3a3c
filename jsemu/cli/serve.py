"""The serving process (``jsemu serve``, ``jsemu nats-server``): start, signals, reload, files, exit.

``run_process`` is nats-server's ``main`` after the options are known: ``--signal`` (signal a
running server and exit, :mod:`jsemu.cli.process_signals`), the refused flags, the log
format and file, then ``serve`` in ``asyncio.run``. A :class:`StartupError` is reported as
nats-server reports it (``report_startup_error``) with exit status 1.

``serve`` prints nats-server's start-up lines in its order (the server is started first, so a
port in use is the same one ``[FTL]`` line; the pid file is written after the ``ID`` line,
the ports file after ``Server is ready``), then waits for a stop signal or the end of lame
duck mode and prints the shutdown lines.

The signal table is nats-server's ``handleSignal`` (``_on_signal``): SIGINT stops; SIGTERM
stops, except during lame duck mode, which then runs to its end; SIGUSR1 reopens the log
file; SIGUSR2 enters lame duck mode; SIGHUP reloads (the file again with the flags over it,
``reload_config``, one ``Reloaded: ...`` line per change, then the configuration's digest or
the error). SIGQUIT is Go's runtime's: stacks on stderr, exit status 2 (``_quit``). Each
trapped signal is logged first (``Trapped "..." signal``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from ..app import Server
from ..config.digest import config_digest
from ..config.startup_errors import StartupError, listen_error, monitor_error
from ..server.advertise import AdvertiseError
from ..server.interfaces import interface_ips
from ..server.options import ServerOptions
from ..server.reload import NO_CONFIG_FILE, ReloadRefused, apply_options, diff_options
from ..version import NATS_VERSION
from .log import log_line, log_to_stderr, open_log, reopen_log, set_format
from .options import refused_flags
from .process_signals import SIGNAL_NAMES, process_signal

__all__ = ["reload_config", "report_startup_error", "run_process", "send_signal", "serve", "tune_gc"]


def reload_config(server: Server, config: str | None, read: Callable[[], ServerOptions]) -> str | None:
    """SIGHUP (``Server.Reload``): the file again, the flags on top; the error or None."""
    if not config:
        return NO_CONFIG_FILE
    try:
        new = read()
        lines = diff_options(server.options, new)
    except (StartupError, ReloadRefused) as exc:
        return str(exc)
    apply_options(server, new, lines, lambda line: log_line("INF", f"Reloaded: {line}"))
    return None


def _on_signal(
    sig: signal.Signals, server: Server, stop: asyncio.Event, config: str | None, read: Callable[[], ServerOptions]
) -> None:
    """nats-server's ``handleSignal``."""
    log_line("INF", f'Trapped "{SIGNAL_NAMES[sig]}" signal')
    if sig == signal.SIGINT or (sig == signal.SIGTERM and not server.lame_duck):
        stop.set()  # SIGTERM during lame duck mode: the lame duck run goes on
    elif sig == signal.SIGUSR1:
        reopen_log()
    elif sig == signal.SIGUSR2:
        server.enter_lame_duck()
    elif sig == signal.SIGHUP:
        error = _reload_logged(server, config, read)
        if error is not None:
            log_line("ERR", f"Failed to reload server configuration: {error}")


def _reload_logged(server: Server, config: str | None, read: Callable[[], ServerOptions]) -> str | None:
    """``reload_config`` and, done, nats-server's line with the file's digest (SIGHUP and
    ``$SYS.REQ.SERVER.<id>.RELOAD``; only SIGHUP logs a failure)."""
    error = reload_config(server, config, read)
    if error is None:
        digest = config_digest(config) if config else "sha256:"
        log_line("INF", f"Reloaded server configuration ({digest})")
    return error


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
    every 50,000 allocations instead, and what exists at start-up is left out. The
    collector is on from here (``python -m jsemu`` starts with it off)."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    gc.enable()


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
    log_to_stderr()
    server = await _start(options)
    tune_gc()
    log_line("INF", "Starting nats-server")
    log_line("INF", f"  Version:  {NATS_VERSION} (jsemu)")
    log_line("INF", f"  Name:     {server.server_name}")
    log_line("INF", f"  ID:       {server.server_id}")
    if pid_file:
        try:
            _write_pid_file(pid_file)
        except StartupError:
            await server.stop()
            raise
    if options.jetstream:
        log_line("INF", "Starting JetStream")
        if options.cluster_size > 1:
            peers = ", ".join(server.jetstream.peer_names) if server.jetstream else ""
            log_line("INF", f"  Simulated cluster {options.cluster_name or 'jsemu'!r}: {peers}")
    log_line("INF", "  Control plane on $JSEMU.API.> (see jsemu.control)")
    if server.monitor is not None:
        log_line("INF", f"Starting http monitor on {options.host}:{server.monitor.port}")
        log_line("INF", f"  Console on {server.monitor_urls[0]}/console (see docs/guides/console.md)")
    if server.websocket is not None:
        ws = server.websocket
        log_line("INF", f"Listening for websocket clients on {ws.scheme}://{ws.options.host}:{ws.port}")
        if ws.scheme == "ws":
            log_line("WRN", "Websocket not configured with TLS. DO NOT USE IN PRODUCTION!")
    log_line("INF", f"Listening for client connections on {options.host}:{server.port}")
    for i, node in enumerate(server.nodes[1:], 1):  # a simulated cluster's other servers
        log_line("INF", f"  Node {node.name} ({node.server_id}) takes clients on {options.host}:{node.port}")
        if i < len(server.monitors):
            log_line("INF", f"  Node {node.name} monitoring on {options.host}:{server.monitors[i].port}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    reread = read or (lambda: options)
    if config:  # without a file, the system account's RELOAD answers the server's own error
        server.reload_config = lambda: _reload_logged(server, config, reread)
    for sig in SIGNAL_NAMES:
        loop.add_signal_handler(sig, _on_signal, sig, server, stop, config, reread)
    signal.signal(signal.SIGQUIT, _quit)
    log_line("INF", "Server is ready")
    if ports_file is not None:
        _write_ports_file(ports_file, server, options)
    stopped = asyncio.ensure_future(stop.wait())
    lame_duck_over = asyncio.ensure_future(server.lame_duck_done.wait())
    await asyncio.wait({stopped, lame_duck_over}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    lame_duck_over.cancel()
    log_line("INF", "Initiating Shutdown...")
    await server.stop()
    if ports_file is not None:
        try:
            ports_file.unlink()
        except OSError as exc:
            log_line("ERR", f"Error cleaning up ports file {ports_file}: remove {ports_file}: {_os_reason(exc)}")
    log_line("INF", "Server Exiting..")


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
        log_line("ERR", f"Error writing ports file ({path}): open {path}: {_os_reason(exc)}")


def _os_reason(exc: OSError) -> str:
    return _ERRNO_TEXT.get(exc.errno or 0, (exc.strerror or str(exc)).lower())


def report_startup_error(exc: StartupError) -> None:
    if exc.fatal:
        log_line("FTL", str(exc))
    else:
        print(f"nats-server: {exc}", file=sys.stderr)


def run_process(args: argparse.Namespace, resolve: Callable[[], ServerOptions]) -> int:
    """Serve (or, with ``--signal``, signal a running server) as nats-server's ``main``."""
    if args.signal:
        return 0 if send_signal(args.signal) else 1
    try:
        refused_flags(args)
        options = resolve()
        _log_time = args.logtime is not False
        set_format(stamps=_log_time, utc=bool(args.logtime_utc))
        open_log(args.log)
        ports_file = _ports_file_path(args.ports_file_dir, args.command)
        asyncio.run(serve(options, args.config, args.pid_file, resolve, ports_file))
    except StartupError as exc:
        report_startup_error(exc)
        return 1
    return 0


def send_signal(command: str) -> bool:
    """``--signal``: sent, or nats-server's line on stderr and False."""
    error = process_signal(command)
    if error is not None:
        print(f"nats-server: {error}", file=sys.stderr)
        return False
    return True
