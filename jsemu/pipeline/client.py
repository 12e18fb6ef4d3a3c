"""A small blocking NATS client for Spark tasks: Direct Get batches in, acked publishes out.

Spark runs data source code in plain Python worker processes, one partition at a time, so
a socket with blocking reads is all a task needs (no event loop, no third-party client).
Works against any server: jsemu or nats-server.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import urlparse

from ..protocol.frames import Frame, FrameReader
from ..timefmt import parse_rfc3339_ns

__all__ = ["DG_LINES", "DirectMessage", "JetStreamError", "NatsClient", "split_headers"]

# The lines a Direct Get batch reply appends to the stored header block, in order.
DG_LINES = (
    b"Nats-Stream",
    b"Nats-Subject",
    b"Nats-Sequence",
    b"Nats-Time-Stamp",
    b"Nats-Num-Pending",
    b"Nats-Last-Sequence",
)


class JetStreamError(RuntimeError):
    """The server refused a request or a publish (its JSON error or status is the message)."""


@dataclass(frozen=True, slots=True)
class DirectMessage:
    """One stored message as a Direct Get batch returns it."""

    stream: str
    seq: int
    subject: str
    time_ns: int
    headers: list[tuple[str, str]]  # the stored headers, order and duplicates kept
    data: bytes


def split_headers(block: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """``NATS/1.0[ status]\\r\\nK: V\\r\\n...\\r\\n\\r\\n`` -> (status line, [(key, value), ...])."""
    lines = block.split(b"\r\n")
    pairs = []
    for line in lines[1:]:
        if not line:
            continue
        key, _, value = line.partition(b":")
        pairs.append((key, value.strip()))
    return lines[0], pairs


class NatsClient:
    """One connection; ``with NatsClient(url) as nc: ...``."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        parsed = urlparse(url if "://" in url else f"nats://{url}")
        self.sock = socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 4222), timeout=timeout)
        self.reader = FrameReader()
        self._inbox_n = 0
        # Unique across processes: Spark's workers are forks, where id() values repeat.
        self.inbox = b"_INBOX." + os.urandom(12).hex().encode()
        self._next()  # INFO
        self.sock.sendall(
            b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,"lang":"python",'
            b'"name":"jsemu-pipeline"}\r\nSUB ' + self.inbox + b".* 1\r\nPING\r\n"
        )
        while self._next().op != b"PONG":
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    # --- frames -------------------------------------------------------------------------

    def _next(self) -> Frame:
        return self.reader.next_from(self.sock.recv)

    def next_frame(self) -> tuple[bytes, int, bytes]:
        """The next MSG/HMSG: (subject, header length or -1, payload incl. headers)."""
        frame = self.next_msg()
        hlen = len(frame.header) if frame.op == b"HMSG" else -1
        return frame.subject, hlen, frame.header + frame.payload

    def next_msg(self) -> Frame:
        """The next MSG/HMSG frame (PINGs answered, ``-ERR`` raised)."""
        while True:
            frame = self._next()
            if frame.is_msg:
                return frame
            if frame.op == b"PING":
                self.sock.sendall(b"PONG\r\n")
            elif frame.op == b"-ERR":
                raise JetStreamError(frame.line.decode("utf-8", "replace"))

    def _next_inbox(self) -> bytes:
        self._inbox_n += 1
        return self.inbox + b".%d" % self._inbox_n

    # --- requests -----------------------------------------------------------------------

    def request(self, subject: str, payload: Any = None) -> Any:
        """A JSON request; returns the decoded reply, raising JetStreamError on an error reply."""
        body = b"" if payload is None else json.dumps(payload).encode()
        inbox = self._next_inbox()
        self.sock.sendall(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), inbox, len(body), body))
        while True:
            subj, hlen, msg = self.next_frame()
            if subj != inbox:
                continue
            if hlen >= 0 and not msg[hlen:]:
                raise JetStreamError(split_headers(msg[:hlen])[0].decode())
            reply = json.loads(msg[max(0, hlen) :])
            if isinstance(reply, dict) and "error" in reply:
                raise JetStreamError(json.dumps(reply["error"]))
            return reply

    def stream_info(self, stream: str) -> dict[str, Any]:
        info: dict[str, Any] = self.request(f"$JS.API.STREAM.INFO.{stream}")
        return info

    def send_request(self, subject: str, payload: Any) -> bytes:
        """Publish a JSON request with a fresh inbox as its reply subject; returns the inbox."""
        body = json.dumps(payload).encode()
        inbox = self._next_inbox()
        self.sock.sendall(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), inbox, len(body), body))
        return inbox

    def direct_batch(self, stream: str, request: dict[str, Any]) -> Iterator[DirectMessage]:
        """One Direct Get batch request: the messages, then stop at its end-of-batch status
        (404 ends it too: nothing from that sequence on)."""
        inbox = self.send_request(f"$JS.API.DIRECT.GET.{stream}", request)
        while True:
            subj, hlen, msg = self.next_frame()
            if subj != inbox:
                continue
            if hlen < 0:
                raise JetStreamError("Direct Get reply without headers")
            status, pairs = split_headers(msg[:hlen])
            if status != b"NATS/1.0":
                code = status.split(b" ")[1] if b" " in status else b""
                if code in (b"204", b"404"):
                    return
                raise JetStreamError(status.decode("utf-8", "replace"))
            keys = [k for k, _ in pairs[-len(DG_LINES) :]]
            if tuple(keys) != DG_LINES:
                raise JetStreamError(f"unexpected Direct Get header lines {keys!r}")
            dg = dict(pairs[-len(DG_LINES) :])
            stored = pairs[: -len(DG_LINES)]
            yield DirectMessage(
                dg[b"Nats-Stream"].decode(),
                int(dg[b"Nats-Sequence"]),
                dg[b"Nats-Subject"].decode(),
                parse_rfc3339_ns(dg[b"Nats-Time-Stamp"].decode()),
                [(k.decode("utf-8", "replace"), v.decode("utf-8", "replace")) for k, v in stored],
                msg[hlen:],
            )

    # --- publishing ---------------------------------------------------------------------

    def publish_acked(
        self, messages: Iterator[tuple[str, list[tuple[str, str]] | None, bytes]], window: int = 1000
    ) -> list[dict[str, Any]]:
        """Publish ``(subject, headers, data)`` with replies, ``window`` at a time; returns the
        PubAcks in order and raises JetStreamError on the first refusal (no responders too)."""
        acks: list[dict[str, Any]] = []
        pending: list[bytes] = []

        def drain() -> None:
            if not pending:
                return
            self.sock.sendall(b"".join(pending))
            want = {inbox: k for k, inbox in enumerate(self._window_inboxes)}
            got: list[dict[str, Any] | None] = [None] * len(want)
            left = len(want)
            while left:
                subj, hlen, msg = self.next_frame()
                k = want.get(subj)
                if k is None:
                    continue
                if hlen >= 0 and not msg[hlen:]:
                    raise JetStreamError(f"publish refused: {split_headers(msg[:hlen])[0].decode()}")
                ack = json.loads(msg[max(hlen, 0) :])
                if "error" in ack:
                    raise JetStreamError(f"publish refused: {json.dumps(ack['error'])}")
                got[k] = ack
                left -= 1
            acks.extend(a for a in got if a is not None)
            pending.clear()
            self._window_inboxes.clear()

        self._window_inboxes: list[bytes] = []
        for subject, headers, data in messages:
            inbox = self._next_inbox()
            self._window_inboxes.append(inbox)
            if headers:
                block = (
                    b"NATS/1.0\r\n" + b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers) + b"\r\n"
                )
                pending.append(
                    b"HPUB %s %s %d %d\r\n%s%s\r\n"
                    % (subject.encode(), inbox, len(block), len(block) + len(data), block, data)
                )
            else:
                pending.append(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), inbox, len(data), data))
            if len(pending) >= window:
                drain()
        drain()
        return acks
