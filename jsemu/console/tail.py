"""The live tail: a subject's messages, as they are published, sent to a browser as
server-sent events (``text/event-stream``) on the monitoring port.

A tail is an internal subscription on the subject (in the account's subject space, like any
subscriber, so it sees what a client subscribed there would see). Its callback runs inside
the publisher's routing, so it does the least possible: append the message to a bounded
queue and wake the writer. The writer, a coroutine of the HTTP connection, turns queued
messages into events and waits for the browser's socket to take them. A browser that reads
slowly only fills its own queue: past ``MAX_QUEUED`` messages the newest are dropped and
counted (the next event says how many), so a tail never slows the server or its publishers.
The subscription leaves when the browser goes away, or when the server stops.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from ..jetstream.internal import InternalSubscriber
from ..server.sublist import Subscription
from ..subjects import is_valid_sub_subject
from ..timefmt import format_ns
from .browse import render_payload
from .views import ViewError

if TYPE_CHECKING:
    from ..server.sublist import Sublist

__all__ = ["MAX_QUEUED", "Tail"]

#: Messages a tail keeps for a browser that has not read them yet.
MAX_QUEUED = 1000
#: A comment line this often keeps proxies and the browser from timing the stream out.
KEEPALIVE_S = 15.0
_ids = itertools.count(1)


class Tail:
    """One browser's tail of one subject."""

    def __init__(self, sublist: Sublist, subject: str, max_queued: int = MAX_QUEUED) -> None:
        if not subject or not is_valid_sub_subject(subject):
            raise ViewError(f"not a valid subject to tail: {subject!r}")
        self.sublist = sublist
        self.subject = subject
        self.max_queued = max_queued
        self.queue: deque[tuple[bytes, bytes | None, int, bytes, int]] = deque()
        self.dropped = 0
        self.wake = asyncio.Event()
        self.closed = False
        sid = f"$CONSOLE.TAIL.{next(_ids)}".encode()
        self.sub = Subscription(InternalSubscriber(self._on_msg, self), subject.encode(), None, sid)

    def _on_msg(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        if len(self.queue) >= self.max_queued:
            self.dropped += 1
            return
        self.queue.append((subject, reply, hdr, msg, time.time_ns()))
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()

    async def run(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Stream events until the browser leaves or the tail is closed."""
        self.sublist.insert(self.sub)
        gone = asyncio.ensure_future(reader.read(1))  # the browser sends nothing more: EOF is its leaving
        try:
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                b"Connection: close\r\n\r\n" + _event("ready", {"subject": self.subject})
            )
            await writer.drain()
            while not self.closed:
                woken = asyncio.ensure_future(self.wake.wait())
                done, _ = await asyncio.wait({woken, gone}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                if gone in done:
                    break
                self.wake.clear()
                chunks = [b": keepalive\n\n"] if not done else []
                while self.queue:
                    chunks.append(_event("message", _shown(*self.queue.popleft())))
                if self.dropped:
                    chunks.append(_event("dropped", {"dropped": self.dropped}))
                    self.dropped = 0
                if chunks:
                    writer.write(b"".join(chunks))
                    await writer.drain()
        finally:
            gone.cancel()
            self.sub.closed = True
            self.sublist.remove(self.sub)


def _shown(subject: bytes, reply: bytes | None, hdr: int, msg: bytes, ts: int) -> dict[str, Any]:
    headers: list[list[str]] = []
    data = msg
    if hdr > 0:
        for line in msg[:hdr].split(b"\r\n")[1:]:
            name, colon, value = line.partition(b":")
            if colon:
                headers.append([name.decode("latin-1"), value.strip().decode("utf-8", "replace")])
        data = msg[hdr:]
    return {
        "subject": subject.decode("utf-8", "replace"),
        "reply": reply.decode("utf-8", "replace") if reply else "",
        "received": format_ns(ts),
        "headers": headers,
        "size": len(data),
    } | render_payload(data)


def _event(name: str, value: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(value, ensure_ascii=False)}\n\n".encode()
