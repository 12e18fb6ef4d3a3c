"""``jsemu record``: a transparent TCP proxy that writes a session file.

Theory of operation
-------------------
Each client that connects to ``--listen`` gets its own connection to the upstream server; two
pumps copy bytes as they are read, one each way, unchanged, and every read is also written to
the one session file as a record (:mod:`jsemu.sessions.format`) with the time since the
recording started. Nothing is parsed on the way through, so the proxy can not change what the
client and the server say to each other (the client sees the proxy's address, nothing else).
The file is only written to, a line per read, flushed at once, so a recording cut short keeps
everything up to its last whole line; credentials are redacted in the file, not on the wire
(:mod:`jsemu.sessions.redact`). When one side closes, the other is closed after what was
read from it has gone through, and the record says which side closed first.

TLS to the upstream (``tls://`` or ``--tls-ca``): nats-server sends INFO in clear and then
expects the handshake, so the proxy reads INFO, upgrades its upstream socket, and shows the
client that INFO without ``tls_required`` (the client talks plainly to the proxy); the file
records the INFO the client saw.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Self
from urllib.parse import urlsplit

from ..version import __version__
from .format import encode_record, header
from .redact import ConnectRedactor

__all__ = ["Recorder", "parse_hostport", "tls_context"]

_READ = 1 << 20


def parse_hostport(text: str, default_port: int = 4222) -> tuple[str, int]:
    """``host:port``, ``nats://host:port`` or ``tls://host:port`` into (host, port)."""
    url = urlsplit(text if "://" in text else f"nats://{text}")
    try:
        port = url.port
    except ValueError:
        raise ValueError(f"bad port in {text!r}") from None
    return url.hostname or "127.0.0.1", default_port if port is None else port


def tls_context(ca: str | None, cert: str | None, key: str | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


def _open_for_writing(path: Path) -> IO[str]:
    return open(path, "w", encoding="utf-8")  # open until Recorder.stop()


class Recorder:
    """The proxy: ``await start()``, clients connect to ``port``, ``await stop()``."""

    def __init__(
        self,
        upstream: str,
        out: Path,
        listen: str = "127.0.0.1:0",
        redact: bool = True,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.upstream = upstream
        self.upstream_host, self.upstream_port = parse_hostport(upstream)
        self.tls = (
            tls if tls is not None else (tls_context(None, None, None) if upstream.startswith("tls://") else None)
        )
        self.listen_host, self.listen_port = parse_hostport(listen, 4222)
        self.redact = redact
        self.out = out
        self.port = 0
        self.connections = 0
        self._file: IO[str] | None = None
        self._server: asyncio.Server | None = None
        self._start = 0.0
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._stopping = False

    async def start(self) -> None:
        self._file = _open_for_writing(self.out)  # small writes, one per read: not worth a thread
        self._start = time.monotonic()
        created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        self._write(header(self.upstream, self.redact, created, __version__))
        self._server = await asyncio.start_server(self._accept, self.listen_host, self.listen_port)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"nats://{self.listen_host}:{self.port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        self._stopping = True  # what is still open is closed on the client's side of the wire
        for writer in list(self._writers):  # the pumps see their sockets close and end
            writer.close()
        if self._tasks:
            _, late = await asyncio.wait(self._tasks, timeout=2.0)
            for task in late:
                task.cancel()
        if self._file is not None:
            self._file.close()
            self._file = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _write(self, record: dict[str, object]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            self._file.flush()

    def _now(self) -> float:
        return round(time.monotonic() - self._start, 6)

    def _record(self, conn: int, direction: str, data: bytes) -> None:
        if data:
            self._write(encode_record(conn, self._now(), direction, data))

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        conn = self.connections
        peer = client_w.get_extra_info("peername")
        self._write({"conn": conn, "t": self._now(), "ev": "open", "peer": f"{peer[0]}:{peer[1]}" if peer else ""})
        closed: list[str] = []
        try:
            up_r, up_w = await asyncio.open_connection(self.upstream_host, self.upstream_port)
        except OSError:
            self._write({"conn": conn, "t": self._now(), "ev": "close", "by": "server"})
            client_w.close()
            self._tasks.discard(task)
            return
        self._writers.update((up_w, client_w))
        try:
            if self.tls is not None:
                up_r, up_w = await self._upgrade(conn, up_r, up_w, client_w)
            redactor = ConnectRedactor() if self.redact else None
            await asyncio.gather(
                self._pump(conn, "c2s", client_r, up_w, closed, redactor),
                self._pump(conn, "s2c", up_r, client_w, closed, None),
            )
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        finally:
            if not closed:
                self._write({"conn": conn, "t": self._now(), "ev": "close", "by": "server"})
            for w in (up_w, client_w):
                w.close()
                self._writers.discard(w)
            self._tasks.discard(task)

    async def _upgrade(
        self,
        conn: int,
        up_r: asyncio.StreamReader,
        up_w: asyncio.StreamWriter,
        client_w: asyncio.StreamWriter,
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Read the upstream's INFO, start TLS with it, show the client the INFO without
        ``tls_required``."""
        line = await up_r.readuntil(b"\r\n")
        assert self.tls is not None
        await up_w.start_tls(self.tls, server_hostname=self.upstream_host)
        op, _, body = line.partition(b" ")
        if op.upper() == b"INFO":
            try:
                info = json.loads(body)
            except ValueError:
                info = None
            if isinstance(info, dict):
                info.pop("tls_required", None)
                info.pop("tls_verify", None)
                info.pop("tls_available", None)
                line = b"INFO " + json.dumps(info, separators=(",", ":")).encode() + b" \r\n"
        self._record(conn, "s2c", line)
        client_w.write(line)
        await client_w.drain()
        return up_r, up_w

    async def _pump(
        self,
        conn: int,
        direction: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        closed: list[str],
        redactor: ConnectRedactor | None,
    ) -> None:
        try:
            while data := await reader.read(_READ):
                self._record(conn, direction, redactor.feed(data) if redactor else data)
                writer.write(data)
                await writer.drain()
        except (OSError, ssl.SSLError):
            pass
        if redactor is not None:
            self._record(conn, direction, redactor.flush())
        if not closed:
            closed.append(direction)
            by = "client" if direction == "c2s" or self._stopping else "server"
            self._write({"conn": conn, "t": self._now(), "ev": "close", "by": by})
        try:
            if writer.can_write_eof():
                writer.write_eof()
            else:
                writer.close()
        except OSError:
            pass
