"""The command lines of ``jsemu record`` and ``jsemu replay``, apart from the code that runs
them (``command.py``), as the conformance runner's: the whole parser is built at every start."""

from __future__ import annotations

import argparse


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listen", default="127.0.0.1:4223", help="where clients connect (default 127.0.0.1:4223)")
    parser.add_argument("--upstream", required=True, help="the server to record: nats://host:port (tls://: TLS)")
    parser.add_argument("-o", "--output", required=True, help="the session file to write (JSON lines)")
    parser.add_argument("--no-redact", action="store_true", help="keep CONNECT's pass, auth_token, sig and jwt")
    parser.add_argument("--tls-ca", help="TLS to the upstream, trusting this CA file")
    parser.add_argument("--tls-cert", help="client certificate for the upstream's TLS")
    parser.add_argument("--tls-key", help="its private key")


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a session file written by `jsemu record`")
    add_target_arguments(parser, required=False)
    parser.add_argument(
        "--pace",
        choices=["fast", "recorded"],
        default="fast",
        help="fast: each client chunk once the answers before it came (default); recorded: also at its recorded time",
    )
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for an expected frame (default 5)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--save-case", metavar="DIR", help="when nothing differs, copy the session into DIR as a conformance case"
    )


def add_target_arguments(parser: argparse.ArgumentParser, required: bool) -> None:
    where = parser.add_mutually_exclusive_group(required=required)
    where.add_argument("--against", metavar="URL", help="a running server, nats://host:port")
    where.add_argument("--spawn-jsemu", action="store_true", help="a fresh in-process jsemu (the default)")
    where.add_argument("--spawn-real", action="store_true", help="a fresh nats-server -js process")
    parser.add_argument("--nats-server", default=None, help="the nats-server binary for --spawn-real")
