"""``jsemu nats-server`` (the stand-in) and ``jsemu shim``, which writes a ``nats-server`` script
that runs it: nats-server's command line, read and answered as nats-server's ``main`` does.

Reading: Go's ``flag`` package (:mod:`jsemu.cli.go_flags`) over the flags that
``parser.add_server_flags(stand_in=True)`` defines (``_go_flag_set`` turns the argparse
actions into Go's flag kinds), so ``-js false``, ``-p 0x10`` and ``--`` mean what they mean
to nats-server; a refused command line is Go's line on stderr, the usage on stdout, status 0.

Before serving (``_stand_in_command``, the order of nats-server's ``ConfigureOptions`` and
``main``): ``-v``/``version``, ``-h``/``help`` (:mod:`jsemu.cli.nats_server_help`, verbatim),
``--help_tls``, any other word after the flags (an unrecognized command), ``-t`` (the file
checked, its digest printed, or ``--signal`` sent). Then the options (:mod:`jsemu.cli.options`,
JetStream off unless ``-js`` or the file turns it on) and the process (:mod:`jsemu.cli.serve`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from ..config.digest import config_digest
from ..config.server_config import ConfigError, load_config
from ..config.startup_errors import StartupError
from ..server.options import ServerOptions
from ..version import NATS_VERSION
from .go_flags import FlagError, FlagKind, GoFlagSet
from .nats_server_help import TLS_HELP, USAGE
from .options import DEFAULT_PORT, serve_options
from .parser import build_parser
from .serve import report_startup_error, run_process, send_signal

__all__ = ["parse_stand_in", "run_stand_in", "stand_in_options", "write_shim"]


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
    :mod:`jsemu.cli.go_flags`) into the namespace ``serve`` uses; a refused command line exits as
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


def run_stand_in(args: argparse.Namespace) -> int:
    """``jsemu nats-server``: what nats-server's ``main`` does before it serves, then serve."""
    code = _stand_in_command(args)
    if code is not None:
        return code
    return run_process(args, lambda: serve_options(args, stand_in=True))


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
        return 0 if send_signal(args.signal) else 1
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
        report_startup_error(exc)
        raise SystemExit(1) from None


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
