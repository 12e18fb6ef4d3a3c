"""Restart to the first answered API request after many publishes to one file stream:
``python -m benchmarks.restart jsemu|real PUBLISHES [MAX_MSGS] [kill] [restarts=N]``
(MAX_MSGS default 1000).

Starts the server with a fresh store dir, creates stream ``S`` (``max_msgs``), publishes
``PUBLISHES`` acknowledged 3-byte messages (5,000 per write), stops it (SIGTERM; ``kill``
for SIGKILL), starts it again on the same store and times spawn to the first
``STREAM.INFO`` answer, ``N`` times (each start stopped the same way; the median and each
figure are printed). Prints the store's size and the restored state. The suite's
``restart`` section (``benchmarks/suite.py``) runs :func:`measure` for both servers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.servers import nats_server_binary


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _connect(port: int) -> socket.socket:
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            time.sleep(0.002)


def _reply(sock: socket.socket) -> bytes:
    """The payload of the next ``MSG _R`` (a request's answer)."""
    buf = b""
    while True:
        buf += sock.recv(65536)
        at = buf.find(b"MSG _R ")
        if at >= 0:
            end = buf.find(b"\r\n", at)
            if end >= 0:
                size = int(buf[at:end].split()[-1])
                if len(buf) >= end + 2 + size:
                    return buf[end + 2 : end + 2 + size]


@dataclass
class Restarts:
    """One publishing run and the restarts after it."""

    published: float
    store_bytes: int
    #: Seconds from spawn to the first ``STREAM.INFO`` answer, one per restart.
    restarts: list[float]
    state: dict[str, Any]


def _env(kind: str, cache: str) -> dict[str, str] | None:
    """jsemu runs with a bytecode cache, as an installed jsemu does (pip compiles its
    ``.pyc`` files at install): without one every start compiles the sources again (about
    0.4 s here), which no user waits for. The cache is the run's own, filled by the first
    start (the publishing one)."""
    if kind != "jsemu":
        return None
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def measure(kind: str, publishes: int, max_msgs: int, restarts: int = 1, kill: bool = False) -> Restarts:
    """Publish, stop (SIGTERM, or SIGKILL with ``kill``), then start on the same store
    ``restarts`` times (each stopped the same way after its answer) and time each start."""
    store = tempfile.mkdtemp(prefix=f"bench-restart-{kind}-")
    port = _free_port()
    program = [sys.executable, "-m", "jsemu", "serve"] if kind == "jsemu" else [nats_server_binary()]
    args = [*program, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", store]
    env = _env(kind, str(Path(store) / "pycache"))
    stop = signal.SIGKILL if kill else signal.SIGTERM

    def spawn() -> subprocess.Popen[bytes]:
        return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    proc = spawn()
    try:
        sock = _connect(port)
        cfg = json.dumps({"name": "S", "subjects": ["s"], "max_msgs": max_msgs}).encode()
        sock.sendall(b'CONNECT {"verbose":false}\r\nSUB _R 1\r\n')
        sock.settimeout(1.0)
        while True:  # JetStream may take a moment after the port opens
            sock.sendall(b"PUB $JS.API.STREAM.CREATE.S _R %d\r\n%s\r\n" % (len(cfg), cfg))
            try:
                _reply(sock)
                break
            except TimeoutError:
                continue
        sock.settimeout(None)
        t0 = time.monotonic()
        sent = acks = 0
        tail = b""
        while acks < publishes:
            if sent < publishes and acks > sent - 20_000:
                k = min(5_000, publishes - sent)
                sock.sendall(b"PUB s _R 3\r\nabc\r\n" * k)
                sent += k
                continue
            data = tail + sock.recv(1 << 20)
            acks += data.count(b'"seq":')
            cut = data.rfind(b'"seq":')
            tail = data[max(len(data) - 5, cut + 6 if cut >= 0 else 0) :]
        published = time.monotonic() - t0
        sock.close()
        proc.send_signal(stop)
        proc.wait()
        size = sum(f.stat().st_size for f in (Path(store) / "jetstream").rglob("*") if f.is_file())
        times = []
        state: dict[str, Any] = {}
        for _ in range(restarts):
            t0 = time.monotonic()
            proc = spawn()
            sock = _connect(port)
            sock.sendall(b'CONNECT {"verbose":false}\r\nSUB _R 1\r\nPUB $JS.API.STREAM.INFO.S _R 0\r\n\r\n')
            state = json.loads(_reply(sock))["state"]
            times.append(time.monotonic() - t0)
            sock.close()
            proc.send_signal(stop)
            proc.wait()
        return Restarts(published, size, times, state)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(store, ignore_errors=True)


def main() -> None:
    kind, publishes = sys.argv[1], int(sys.argv[2])
    max_msgs = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 1000
    rounds = next((int(a.split("=")[1]) for a in sys.argv if a.startswith("restarts=")), 1)
    r = measure(kind, publishes, max_msgs, rounds, "kill" in sys.argv)
    times = " ".join(f"{t:.3f}" for t in r.restarts)
    print(
        f"{kind}: {publishes:,} publishes in {r.published:.1f}s; store {r.store_bytes:,} bytes; restart to the first "
        f"STREAM.INFO answer {statistics.median(r.restarts):.3f}s (median of {times}); "
        f"messages={r.state['messages']:,} last_seq={r.state['last_seq']:,}"
    )


if __name__ == "__main__":
    main()
