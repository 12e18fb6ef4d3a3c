"""The ``jsemu conformance`` command line, apart from the runner: ``jsemu serve`` builds the whole
parser at start-up, and importing the runner (its cases, fixtures and client) just to describe
the sub-command's flags cost a restart about a tenth of its time."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("url", nargs="?", help="a running server, nats://host:port")
    where.add_argument("--spawn-real", action="store_true", help="a fresh nats-server per scenario")
    where.add_argument("--spawn-jsemu", action="store_true", help="a fresh in-process jsemu per scenario")
    parser.add_argument("--nats-server", default=None, help="the nats-server binary for --spawn-real")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--case", action="append", default=[], help="run only this scenario (repeatable)")
    parser.add_argument(
        "--sessions", metavar="DIR", help="run the recorded sessions DIR/*.jsonl (`jsemu replay --save-case`) instead"
    )
