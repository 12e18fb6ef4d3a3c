"""Turning a server's trace (``Server.start_trace``) into text for a failed test's report.

The server only stores the parsed op objects and the API request/response bytes; this is
where they become readable, so tracing costs a deque append per op and nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..protocol.ops import Connect, Pub, Sub, Unsub

__all__ = ["format_trace"]

_CLIP = 200


def _clip(data: bytes | str) -> str:
    text = data.decode("utf-8", "backslashreplace") if isinstance(data, bytes) else data
    text = text.replace("\r\n", "\\r\\n")
    return text if len(text) <= _CLIP else text[:_CLIP] + f"... ({len(text)} chars)"


def _op(op: Any) -> str:
    if isinstance(op, tuple):  # the parser's (subject, reply, hdr, msg) for PUB and HPUB
        op = Pub(*op)
        verb = "PUB" if op.hdr < 0 else "HPUB"
        reply = f" {op.reply.decode('utf-8', 'replace')}" if op.reply else ""
        return f"{verb} {op.subject.decode('utf-8', 'replace')}{reply} {len(op.msg)}: {_clip(op.msg)}"
    if isinstance(op, Sub):
        queue = f" {op.queue.decode('utf-8', 'replace')}" if op.queue else ""
        return f"SUB {op.subject.decode('utf-8', 'replace')}{queue} {op.sid.decode('utf-8', 'replace')}"
    if isinstance(op, Unsub):
        return f"UNSUB {op.sid.decode('utf-8', 'replace')}" + (f" {op.max}" if op.max >= 0 else "")
    if isinstance(op, Connect):
        return f"CONNECT {_clip(op.options)}"
    return type(op).__name__.upper()


def format_trace(entries: Iterable[tuple[Any, ...]]) -> str:
    """One line per client op (``cid=5 PUB ...``) or API call (``API ... -> reply``)."""
    lines = []
    for entry in entries:
        if entry[0] == "op":
            lines.append(f"cid={entry[1]} {_op(entry[2])}")
        else:
            _, subject, request, reply = entry
            lines.append(f"API {subject} {_clip(request)} -> {_clip(reply)}")
    return "\n".join(lines)
