"""The serving process's log: nats-server's line format, on stderr or the ``-l`` file.

Harnesses that spawn nats-server wait for its log lines (``Listening for client connections
on HOST:PORT``, ``Server is ready``), so every line jsemu's process writes has nats-server's
shape: ``[PID] YYYY/MM/DD HH:MM:SS.UUUUUU [LVL] text`` (no time stamp with ``-T=false``, UTC
with ``--logtime_utc``). Lines go to stderr, or appended to the ``-l`` file, which SIGUSR1
reopens for log rotation. jsemu's own ``logging`` records (a damaged store, a restored
stream) are routed into the same lines by ``log_to_stderr``.

The state is module-level because the process has one log: ``run_process`` sets the format
and the file before the server starts, the signal handlers reopen it. A write to a stderr
whose reader has gone ends the process as Go's runtime ends nats-server (``_die_of_sigpipe``).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from typing import TextIO

__all__ = ["log_line", "log_to_stderr", "open_log", "reopen_log", "set_format"]

#: ``-l FILE``: the log file written instead of stderr (reopened on SIGUSR1), while serving.
_log_path: str | None = None
_log_file: TextIO | None = None


#: ``-T``/``--logtime`` (time stamps, nats-server's default) and ``--logtime_utc``.
_log_time = True
_log_utc = False


def log_line(level: str, text: str) -> None:
    """One line at ``level`` (``INF``, ``ERR``, ``FTL``...) as nats-server writes it."""
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


def open_log(path: str | None) -> None:
    """Send log lines to ``path`` (appended, as nats-server's file logger), None: stderr."""
    global _log_path, _log_file
    if _log_file is not None:
        _log_file.close()
    _log_path = path
    _log_file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115 (kept open while serving)


def reopen_log() -> None:
    """SIGUSR1 (``ReOpenLogFile``): a new file at the same path, for log rotation."""
    if _log_path is None:
        log_line("INF", "File log re-open ignored, not a file logger")
        return
    open_log(_log_path)
    log_line("INF", "File log re-opened")


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
        log_line(level, text.replace("\n", " "))


def log_to_stderr() -> None:
    """jsemu's ``logging`` records into these lines, once per process."""
    logger = logging.getLogger("jsemu")
    if not any(isinstance(h, _ServerLog) for h in logger.handlers):
        logger.addHandler(_ServerLog(logging.INFO))
        logger.setLevel(logging.INFO)
        logger.propagate = False


def set_format(stamps: bool, utc: bool) -> None:
    """``-T``/``--logtime`` (``stamps``) and ``--logtime_utc``, for the lines that follow."""
    global _log_time, _log_utc
    _log_time, _log_utc = stamps, utc
