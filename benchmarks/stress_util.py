"""Helpers of ``benchmarks/stress.py``: a server process on loopback (``nats-server -js`` or
``jsemu serve``) with its resource figures, and a small non-blocking raw-socket client."""

from __future__ import annotations

import json
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.servers import nats_server_binary  # type: ignore[import-not-found]

from jsemu.protocol.frames import Frame, FrameReader

CONNECT = b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,"protocol":1}\r\n'
_TICK = os.sysconf("SC_CLK_TCK")


def raise_nofile() -> int:
    """Raise this process's (and so its children's) open-file soft limit to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProc:
    """``nats-server`` (kind ``real``) or ``jsemu serve`` (kind ``jsemu``) as its own process,
    on loopback, with JetStream on ``store`` and the monitoring port; stderr goes to a log file."""

    def __init__(self, kind: str, store: str | None = None, config: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.tmp = tempfile.TemporaryDirectory(prefix=f"stress-{kind}-")
        self.store = store or str(Path(self.tmp.name) / "store")
        self.config = config
        self.log_path = Path(self.tmp.name) / "server.log"
        self.port = free_port()
        self.http_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def label(self) -> str:
        return "nats-server" if self.kind == "real" else "jsemu"

    def start(self) -> None:
        program = [sys.executable, "-m", "jsemu", "serve"] if self.kind == "jsemu" else [nats_server_binary()]
        args = [*program, "-a", "127.0.0.1", "-p", str(self.port), "-m", str(self.http_port), "-js", "-sd", self.store]
        if self.config:
            conf = Path(self.tmp.name) / "server.conf"
            conf.write_text("".join(f"{k}: {v}\n" for k, v in self.config.items()))
            args += ["-c", str(conf)]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log)
        self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until a ``$JS.API.INFO`` request is answered."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.label} exited:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as sock:
                    sock.settimeout(1.0)
                    c = BlockingClient(sock)
                    c.request("$JS.API.INFO", b"")
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"{self.label} not ready in {timeout}s:\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def peak_rss(self) -> int:
        """VmHWM: the process's peak resident set, bytes."""
        for line in Path(f"/proc/{self.pid()}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid()}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK

    def varz(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/varz", timeout=5) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def internal_errors(self) -> list[str]:
        """Log lines telling of an internal error: a Python traceback, an exception or a
        handler's failure (jsemu); a panic (nats-server: its ``[ERR]`` lines about bad input,
        such as ``processPub Parse Error``, are answers, not internal errors)."""
        if self.kind == "real":
            bad = re.compile(r"panic:|fatal error:|goroutine \d+ \[")
        else:
            bad = re.compile(
                r"Traceback|handler failed|failed to store|could not save|could not restore|"
                r"[A-Z]\w*(Error|Exception): |exception was never retrieved|Exception in callback"
            )
        return [line for line in self.log_text().splitlines() if bad.search(line)]

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def close(self) -> None:
        self.stop()
        self.tmp.cleanup()


class BlockingClient:
    """Requests one at a time and pipelined Direct Gets on a blocking socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = FrameReader()
        self.next()  # INFO
        sock.sendall(CONNECT + b"SUB _R.* 1\r\nPING\r\n")
        while self.next().op != b"PONG":
            pass
        self.n = 0

    @classmethod
    def connect(cls, port: int, timeout: float = 10.0) -> BlockingClient:
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        sock.settimeout(timeout)
        return cls(sock)

    def next(self) -> Frame:
        frame = self.reader.next_from(self.sock.recv)
        if frame.op == b"PING":
            self.sock.sendall(b"PONG\r\n")
        return frame

    def request_frame(self, subject: str, payload: bytes, header: bytes = b"") -> Frame:
        self.n += 1
        reply = b"_R.%d" % self.n
        if header:
            self.sock.sendall(
                b"HPUB %s %s %d %d\r\n%s%s\r\n"
                % (subject.encode(), reply, len(header), len(header) + len(payload), header, payload)
            )
        else:
            self.sock.sendall(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), reply, len(payload), payload))
        while True:
            frame = self.next()
            if frame.is_msg and frame.subject == reply:
                return frame
            if frame.op == b"-ERR":
                raise RuntimeError(frame.line.decode())

    def request(self, subject: str, payload: bytes, header: bytes = b"") -> dict[str, Any]:
        return json.loads(self.request_frame(subject, payload, header).payload)  # type: ignore[no-any-return]

    def direct_get_many(self, stream: str, seqs: list[int], window: int = 500) -> dict[int, Frame]:
        """Direct Get of each sequence, pipelined; the reply frame by sequence."""
        out: dict[int, Frame] = {}
        subject = b"$JS.API.DIRECT.GET.%s" % stream.encode()
        for start in range(0, len(seqs), window):
            part = seqs[start : start + window]
            self.sock.sendall(
                b"".join(
                    b"PUB %s _R.g%d %d\r\n%s\r\n" % (subject, s, len(body), body)
                    for s in part
                    for body in [b'{"seq":%d}' % s]
                )
            )
            left = len(part)
            while left:
                frame = self.next()
                if frame.is_msg and frame.subject.startswith(b"_R.g"):
                    out[int(frame.subject[4:])] = frame
                    left -= 1
        return out


def header_value(header: bytes, name: bytes) -> bytes | None:
    for line in header.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return None


def status_of(frame: Frame) -> bytes:
    """The status code of an HMSG (``b"404"``), ``b""`` when it has none."""
    if frame.op != b"HMSG":
        return b""
    first = frame.header.split(b"\r\n", 1)[0].split()
    return first[1] if len(first) > 1 else b""


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
