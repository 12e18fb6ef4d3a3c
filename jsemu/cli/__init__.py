"""The ``jsemu`` command line: ``serve``, ``nats-server`` (the stand-in), ``shim``,
``conformance``, ``record``, ``replay`` (:mod:`jsemu.sessions`), ``pipeline`` (``python -m jsemu`` and the ``jsemu`` console script run ``main``).

Modules, each one concern of running as a server process:

* ``parser.py``: the argparse parser of the sub-commands and the nats-server flags they accept;
* ``stand_in.py``: ``jsemu nats-server`` (Go's flag rules, nats-server's ``-v``/``-h``/``-t``
  and commands) and ``jsemu shim``; with ``go_flags.py`` (Go's ``flag`` package) and
  ``nats_server_help.py`` (nats-server's help texts, verbatim);
* ``options.py``: flags and configuration file into ``ServerOptions``, in the order of
  nats-server's ``ConfigureOptions``;
* ``serve.py``: the process: start-up lines, signals, reload, pid and ports files, lame duck
  end, exit; with ``process_signals.py`` (``--signal``: signal a running server);
* ``log.py``: log lines in nats-server's format, on stderr or the ``-l`` file.

Dependencies go one way: ``__init__`` > ``stand_in`` > ``serve`` > ``options``/``log``, and
``stand_in`` > ``parser``. The names tests and tools import are re-exported here.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path

from ..pipeline import command as pipeline_command
from ..version import NATS_VERSION, __version__
from .options import serve_options
from .parser import add_server_flags, build_parser
from .serve import run_process
from .stand_in import parse_stand_in, run_stand_in, stand_in_options, write_shim

__all__ = ["add_server_flags", "build_parser", "main", "parse_stand_in", "serve_options", "stand_in_options"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] not in (["serve"], ["nats-server"]):
        gc.enable()  # off while ``python -m jsemu`` starts (``__main__``): only a server keeps it off
    if argv[:1] == ["nats-server"]:
        return run_stand_in(parse_stand_in(argv[1:]))
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # the sub-command's usage, not the top level's
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    if args.command in ("record", "replay") or (args.command == "conformance" and args.sessions):
        from ..sessions import command as sessions_command

        run = {"record": sessions_command.record_main, "replay": sessions_command.replay_main}
        return run.get(args.command, sessions_command.conformance_main)(args)
    if args.command == "conformance":
        from ..conformance import command as conformance_command  # the runner only when it runs

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
    return run_process(args, lambda: serve_options(args))
