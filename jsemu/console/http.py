"""The console's side of the monitoring port's HTTP: one request in, one response out.

The monitor (``server/monitor.py``) reads a request head and hands any target under
``/console`` (and ``/``) to the console with the stream it came on. This module reads the
rest of what the console needs of a request (the method, a query, a small JSON body of a
``POST``) and writes a response: JSON, a static asset, or a stream of server-sent events.
Like the monitor it speaks ``Connection: close`` HTTP/1.1 only: one request per connection,
no keep-alive, no chunking, so no HTTP state machine is needed.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["MAX_BODY", "Request", "Response", "json_response", "read_request", "text_response"]

#: The largest request body the console reads (a control action's arguments).
MAX_BODY = 64 * 1024


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""


@dataclass
class Response:
    status: str
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        extra = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        return (
            f"HTTP/1.1 {self.status}\r\nContent-Type: {self.content_type}\r\n"
            f"Content-Length: {len(self.body)}\r\n{extra}Connection: close\r\n\r\n"
        ).encode() + self.body


def json_response(value: Any, status: str = "200 OK") -> Response:
    body = json.dumps(value, ensure_ascii=False).encode()
    return Response(status, "application/json", body, {"Cache-Control": "no-store"})


def text_response(status: str, text: str) -> Response:
    return Response(status, "text/plain; charset=utf-8", text.encode())


def parse_head(head: bytes) -> Request | None:
    """The request line and headers of a head read up to its blank line; None if malformed."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split()
    if len(parts) != 3:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    url = urlsplit(parts[1])
    query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
    return Request(parts[0].upper(), url.path, query, headers)


async def read_request(head: bytes, reader: asyncio.StreamReader) -> Request | Response:
    """The request of ``head``, with its body when it declares one (at most ``MAX_BODY``);
    or the error response to send instead."""
    request = parse_head(head)
    if request is None:
        return text_response("400 Bad Request", "400 Bad Request\n")
    length_text = request.headers.get("content-length", "0") or "0"
    if not length_text.isdigit():
        return text_response("400 Bad Request", "bad Content-Length\n")
    length = int(length_text)
    if length > MAX_BODY:
        return text_response("413 Request Entity Too Large", "request body too large\n")
    if length:
        request.body = await asyncio.wait_for(reader.readexactly(length), timeout=10)
    return request
