"""``jsemu serve --signal CMD[=PID]``: nats-server's ``-sl``/``--signal`` (``processSignal``,
``ProcessSignal`` in ``server/signal.go``), which signals a running server and exits.

``CMD`` is one of ``stop`` (SIGKILL), ``quit`` (SIGINT), ``reopen`` (SIGUSR1), ``reload``
(SIGHUP), ``ldm`` (SIGUSR2) and ``term`` (SIGTERM). ``PID`` is a process id, a pid file (its
contents are the id) or a prefix ending in ``*`` that signals every running server whose id
starts with it. Without one, the single running server is found by name: nats-server's
``pgrep nats-server``, which here also counts ``jsemu serve`` processes (the stand-in runs as
Python, so its process name is not ``nats-server``); several found is an error listing them.
Errors are nats-server's texts (``nats-server: ...`` on stderr, exit status 1).
"""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

__all__ = ["COMMANDS", "SIGNAL_NAMES", "process_signal", "running_servers"]

#: ``CommandToSignal``.
COMMANDS: dict[str, signal.Signals] = {
    "stop": signal.SIGKILL,
    "quit": signal.SIGINT,
    "reopen": signal.SIGUSR1,
    "reload": signal.SIGHUP,
    "ldm": signal.SIGUSR2,
    "term": signal.SIGTERM,
}

#: Go's ``os.Signal`` names, as the ``Trapped "..." signal`` log line quotes them.
SIGNAL_NAMES: dict[signal.Signals, str] = {
    signal.SIGINT: "interrupt",
    signal.SIGTERM: "terminated",
    signal.SIGUSR1: "user defined signal 1",
    signal.SIGUSR2: "user defined signal 2",
    signal.SIGHUP: "hangup",
}

#: Go's ``syscall.Errno`` texts for what ``kill`` can fail with.
_ERRNO_TEXT = {errno.ESRCH: "no such process", errno.EPERM: "operation not permitted"}


def _is_server(cmdline: list[str], comm: str) -> bool:
    if comm == "nats-server":
        return True
    for i, arg in enumerate(cmdline[:-1]):
        name = os.path.basename(arg)
        if (name == "jsemu" or (arg == "jsemu" and i > 0 and cmdline[i - 1] == "-m")) and cmdline[i + 1] == "serve":
            return True
    return False


def running_servers() -> list[int]:
    """Ids of the running ``nats-server`` and ``jsemu serve`` processes but this one, in
    ascending order (as ``pgrep`` lists them)."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if _is_server([a for a in cmdline if a], comm):
            found.append(int(entry.name))
    return sorted(found)


def process_signal(spec: str) -> str | None:
    """Carry out ``--signal spec``; the error text (after ``nats-server: ``) or None."""
    command, *rest = spec.split("=")
    if len(rest) > 1:
        return f"invalid signal parameters: [{' '.join(rest[1:])}]"
    pid_expr = ""
    if rest:
        pid_expr = rest[0]
        try:
            pid_expr = Path(pid_expr).read_text()
        except (OSError, ValueError):
            pass
    glob = pid_expr.endswith("*")
    pid_text = pid_expr.removesuffix("*")
    pids: list[int] = []
    if pid_text:
        try:
            pids = [_go_atoi(pid_text)]
        except ValueError:
            return f"invalid pid: {pid_text}"
    if not pid_text or glob:
        pids = running_servers()
    if len(pids) > 1 and not glob:
        return "multiple nats-server processes running:" + "".join(f"\n{p}" for p in pids)
    if not pids:
        return "no nats-server processes running"
    signum = COMMANDS.get(command)
    if signum is None:
        return f'unknown signal "{command}"'
    errors = ""
    for pid in pids:
        if pid_text and str(pid) != pid_text and not (glob and str(pid).startswith(pid_text)):
            continue
        try:
            os.kill(pid, signum)
        except OSError as exc:
            text = _ERRNO_TEXT.get(exc.errno or 0, (exc.strerror or str(exc)).lower())
            errors += f'\nsignal "{command}" {pid}: {text}'
    return errors or None


def _go_atoi(text: str) -> int:
    """``strconv.Atoi``: an optional sign and ASCII digits only."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise ValueError(text)
    return int(text)
