"""Start-up failures of ``jsemu serve`` as nats-server words them: one line, no traceback.

nats-server logs a fatal ``[FTL]`` line for what goes wrong while starting (a port in use,
an unusable store directory) and prints ``nats-server: <error>`` for a configuration it
cannot load; both exit 1. A harness that spawns either server sees the same line.
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from pathlib import Path

__all__ = ["StartupError", "check_store_dir", "go_errno", "go_hostport", "listen_error", "monitor_error"]


class StartupError(Exception):
    """A start-up failure; ``fatal`` lines are logged as ``[FTL]``, others printed as ``nats-server: ...``."""

    def __init__(self, message: str, fatal: bool = True) -> None:
        super().__init__(message)
        self.fatal = fatal


def go_errno(exc: OSError) -> str:
    """Go's text for an errno (``bind: address already in use``): the C library's, lower case."""
    if exc.errno is None:
        return str(exc)
    return os.strerror(exc.errno).lower()


def go_hostport(host: str, port: int) -> str:
    """``net.JoinHostPort``: IPv6 literals in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _listen_text(host: str, port: int, exc: OSError) -> str:
    """Go's ``net.Listen`` error: ``listen tcp H:P: bind: ...`` or ``listen tcp: lookup H: no such host``."""
    if isinstance(exc, socket.gaierror):
        return f"listen tcp: lookup {host}: no such host"
    if exc.errno is None:
        exc = _bind_once(host, port) or exc
    return f"listen tcp {go_hostport(host, port)}: bind: {go_errno(exc)}"


def _bind_once(host: str, port: int) -> OSError | None:
    """The bind's own error. asyncio (3.13) reports a listener that bound no address as "could
    not bind on any address out of [...]", without the errno Go's text comes from: bind a plain
    socket once more to learn it."""
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        return exc
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                return exc
    return None


def listen_error(host: str, port: int, exc: OSError) -> StartupError:
    """The client port could not be opened (server.go: ``Error listening on port``)."""
    return StartupError(f'Error listening on port: {go_hostport(host, port)}, "{_listen_text(host, port, exc)}"')


def monitor_error(host: str, port: int, exc: OSError) -> StartupError:
    """The monitoring port could not be opened (server.go: ``Can't start monitoring``)."""
    return StartupError(f"Can't start monitoring: can't listen to the monitor port: {_listen_text(host, port, exc)}")


def check_store_dir(store_dir: str) -> None:
    """nats-server's checks on ``<store_dir>/jetstream`` before JetStream starts (jetstream.go):
    created if missing, else it must be a directory jsemu can write to."""
    target = Path(store_dir) / "jetstream"
    prefix = "Can't start JetStream: "
    try:
        is_dir = target.is_dir()
        exists = target.exists() or is_dir
    except OSError:
        exists, is_dir = True, False
    if not exists:
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise StartupError(prefix + "storage directory is not a directory") from None
            raise StartupError(
                f"{prefix}could not create storage directory - mkdir {exc.filename}: {go_errno(exc)}"
            ) from None
        return
    if not is_dir:
        raise StartupError(prefix + "storage directory is not a directory")
    try:
        with tempfile.NamedTemporaryFile(dir=target, prefix="_test_"):
            pass
    except OSError:
        raise StartupError(prefix + "storage directory is not writable") from None
