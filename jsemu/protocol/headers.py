"""Header-block helpers with nats-server's exact lookup rules (``client.go``).

Keys match case-sensitively and only at the start of a line; values lose leading spaces.
The quirks of ``getHeaderKeyIndex`` are kept on purpose: the server's answers depend on them.
"""

from __future__ import annotations

__all__ = [
    "EMPTY_HDR",
    "api_level_too_high",
    "parse_uint_header",
    "remove_header",
    "remove_header_status",
    "set_header",
    "slice_header",
]

EMPTY_HDR = b"NATS/1.0\r\n\r\n"
_PREFIX = b"NATS/1.0"


def _key_index(key: bytes, hdr: bytes) -> int:
    """``getHeaderKeyIndex``: index of ``key`` at a line start followed by ``:``, else -1."""
    key_len, hdr_len = len(key), len(hdr)
    offset = 0
    while True:
        index = hdr.find(key, offset)
        # Go compares the position relative to the search offset with 2.
        if index == -1 or index - offset < 2:
            return -1
        if index >= hdr_len - 1 or hdr[index - 1] != 0x0A or hdr[index - 2] != 0x0D:
            offset = index + key_len
            continue
        if index + key_len >= hdr_len:
            return -1
        if hdr[index + key_len] != 0x3A:
            offset = index + key_len
            continue
        return index


def slice_header(key: bytes, hdr: bytes) -> bytes | None:
    """``sliceHeader``: the value of the first ``key`` line, or None."""
    if not hdr:
        return None
    index = _key_index(key, hdr)
    if index == -1:
        return None
    index += len(key) + 1
    hdr_len = len(hdr)
    while index < hdr_len and hdr[index] == 0x20:
        index += 1
    end = hdr.find(b"\r\n", index)
    if end == -1:
        end = hdr_len
    return hdr[index:end]


def parse_uint_header(value: bytes) -> int:
    """``uint64(parseInt64(v))``: ASCII digits only (wrapping like Go's int64 arithmetic);
    anything else is -1, i.e. max-uint64, which never matches."""
    if not value or not all(0x30 <= b <= 0x39 for b in value):
        return (1 << 64) - 1
    return int(value) % (1 << 64)


def remove_header_status(hdr: bytes) -> bytes:
    """``removeHeaderStatusIfPresent``: drop ``503 x`` from ``NATS/1.0 503 x``; a header
    left with nothing else disappears."""
    i = hdr.find(b"\r")
    if not hdr.startswith(_PREFIX) or i <= len(_PREFIX):
        return hdr
    hdr = hdr[: len(_PREFIX)] + hdr[i:]
    if len(hdr) == len(EMPTY_HDR):
        return b""
    return hdr


def remove_header(hdr: bytes, key: bytes) -> bytes:
    """``removeHeaderIfPresent``: remove every ``key`` line; an emptied header disappears."""
    while True:
        start = _key_index(key, hdr) if hdr else -1
        if start < 1 or hdr[start - 1] != 0x0A:
            return hdr
        index = start + len(key)
        if index >= len(hdr) or hdr[index] != 0x3A:
            return hdr
        end = hdr.find(b"\r\n", start)
        if end < 0:
            return hdr
        hdr = hdr[:start] + hdr[end + 2 :]
        if len(hdr) <= len(EMPTY_HDR):
            return b""


def set_header(hdr: bytes, key: bytes, value: bytes) -> bytes:
    """Go's ``setHeader`` function: the first ``key`` line's value replaced where it stands
    (one space after the colon kept), else the line added before the blank line."""
    start = _key_index(key, hdr) if hdr else -1
    if start >= 0:
        val_start = start + len(key) + 1
        if val_start < len(hdr) and hdr[val_start] == 0x20:
            val_start += 1
        val_end = hdr.find(b"\r", val_start)
        if val_end < 0:
            return hdr
        return hdr[:val_start] + value + hdr[val_end:]
    if hdr.endswith(b"\r\n"):
        return hdr[:-2] + key + b": " + value + b"\r\n\r\n"
    return hdr + key + b": " + value + b"\r\n"


def remove_header_prefix(hdr: bytes, prefix: bytes) -> bytes:
    """``removeHeaderIfPrefixPresent``: remove every line whose key starts with ``prefix``
    (case-sensitive); an emptied header disappears."""
    index = 0
    while index < len(hdr):
        start = hdr.find(prefix, index)
        if start < 0:
            return hdr
        if start < 1 or hdr[start - 1] != 0x0A:
            index = start + len(prefix)
            continue
        end = hdr.find(b"\r\n", start + len(prefix))
        if end < 0:
            return hdr
        hdr = hdr[:start] + hdr[end + 2 :]
        index = start
        if len(hdr) <= len(EMPTY_HDR):
            return b""
    return hdr


_API_LEVEL_HDR = b"Nats-Required-Api-Level"


def api_level_too_high(hdr: bytes, level: int) -> bool:
    """``errorOnRequiredApiLevel``: a ``Nats-Required-Api-Level`` header that is not an
    integer (``strconv.Atoi``: optional sign, ASCII digits), or asks for more than ``level``."""
    value = slice_header(_API_LEVEL_HDR, hdr)
    if not value:
        return False
    body = value[1:] if value[:1] in (b"+", b"-") else value
    if not body or not all(0x30 <= b <= 0x39 for b in body):
        return True
    return int(value) > level
