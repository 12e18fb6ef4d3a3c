"""The headers that ask nats-server 2.15.1 to trace a message (ADR-41), read as it reads them.

``genHeaderMapIfTraceHeadersPresent`` (``server/msgtrace.go``) walks the header block once:
lines with an empty key or value are skipped, keys keep their case (so the trace event's
``request.header`` shows them as sent, sorted as Go marshals a map), ``Nats-Trace-Dest`` must
match exactly (a lower-case ``nats-trace-dest`` is an ordinary header) and its first value
counts; ``traceparent`` matches in any case, and only when its flags field (the fourth
``-``-separated token, two hex digits) has the *sampled* bit. ``Nats-Trace-Dest: trace
disabled`` (not a valid subject) is how a server marks a message it must not trace again:
such a block is not a trace request at all. Sans-I/O: bytes in, values out.
"""

from __future__ import annotations

__all__ = [
    "TRACE_DEST",
    "TRACE_DISABLED",
    "TRACE_ONLY",
    "TRACE_ORIGIN_ACCOUNT",
    "is_trace_only",
    "trace_headers",
]

TRACE_DEST = b"Nats-Trace-Dest"
#: The value that turns tracing off for servers further on (``MsgTraceDestDisabled``).
TRACE_DISABLED = b"trace disabled"
TRACE_ONLY = "Nats-Trace-Only"
#: A header of old servers: a message carrying it is delivered but never traced.
TRACE_ORIGIN_ACCOUNT = "Nats-Trace-Origin-Account"
_TRACE_PARENT = b"traceparent"
_HDR_LINE = b"NATS/1.0\r\n"
#: What Go's ``ParseInt(.., 16, 8)`` reads (Python's ``int`` also takes spaces and ``_``).
_HEX_SIGNED = frozenset(b"+-0123456789abcdefABCDEF")


def _sampled(value: bytes) -> bool:
    """W3C ``traceparent``: ``version-traceid-parentid-flags``, bit 0 of flags = sampled."""
    tokens = value.split(b"-")
    if len(tokens) != 4 or len(tokens[3]) != 2 or not set(tokens[3]) <= _HEX_SIGNED:
        return False
    try:
        flags = int(tokens[3], 16)
    except ValueError:
        return False
    # Go's ParseInt(.., 16, 8) refuses values above 127; a sign is allowed there too.
    return -128 <= flags <= 127 and flags & 1 == 1


def trace_headers(block: bytes) -> tuple[dict[str, list[str]], bool] | None:
    """The header block as a map if it asks for a trace, and whether only ``traceparent``
    asked (the account's ``msg_trace`` destination then applies); None otherwise."""
    if not block.startswith(_HDR_LINE):
        return None
    keys: list[bytes] = []
    vals: list[bytes] = []
    dest_found = parent_found = False
    i = len(_HDR_LINE)
    n = len(block)
    while i < n:
        colon = block.find(b":", i)
        if colon < 0:
            break
        key = block[i:colon]
        i = colon + 1
        while i < n and block[i] in (0x20, 0x09):
            i += 1
        nl = block.find(b"\r\n", i)
        if nl < 0:
            break
        end = nl
        while end > i and block[end - 1] in (0x20, 0x09):
            end -= 1
        val = block[i:end]
        if key and val:
            vals.append(val)
            if not parent_found and key.lower() == _TRACE_PARENT:
                parent_found = _sampled(val)
            elif not dest_found and key == TRACE_DEST:
                if val == TRACE_DISABLED:
                    return None
                dest_found = True
            keys.append(key)
        i = nl + 2
    if not dest_found and not parent_found:
        return None
    headers: dict[str, list[str]] = {}
    for key, val in zip(keys, vals, strict=True):
        headers.setdefault(key.decode("utf-8", "replace"), []).append(val.decode("utf-8", "replace"))
    return dict(sorted(headers.items())), not dest_found


def is_trace_only(value: str) -> bool:
    """``Nats-Trace-Only``: ``1``, ``true`` or ``on`` in any case; anything else delivers."""
    return value.lower() in ("1", "true", "on")
