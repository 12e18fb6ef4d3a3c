"""Counter streams (``allow_msg_counter``): ``Nats-Incr`` adds to the subject's last value.

As ``processJetStreamMsg`` does it: a publish carries ``Nats-Incr: <integer>`` and no body;
the stored message's body becomes ``{"val":"<new total>"}`` (arbitrary precision, Go's
``big.Int``) and the PubAck gains ``"val"``. A counter sourced from another counter stream
arrives with its origin's total in the body and ``Nats-Stream-Source``: the increment is the
difference to the last total seen from that origin and subject, and the per-origin totals
are kept in the ``Nats-Counter-Sources`` header (JSON, as Go marshals a map).
"""

from __future__ import annotations

import json
import re

from ...protocol.gojson import dumps
from ...protocol.headers import slice_header
from ..errors import ApiError, ApiErrors, api_error

__all__ = ["INCR", "apply_increment", "incr_header_error", "parse_incr"]

INCR = b"Nats-Incr"
_COUNTER_SOURCES = b"Nats-Counter-Sources"
_STREAM_SOURCE = b"Nats-Stream-Source"
_INTEGER = re.compile(rb"[+-]?[0-9]+")
#: Headers a counter increment may not come with (they would make it conditional).
_INCOMPATIBLE = (
    b"Nats-Rollup",
    b"Nats-Expected-Stream",
    b"Nats-Expected-Last-Msg-Id",
    b"Nats-Expected-Last-Subject-Sequence-Subject",
)
_INCOMPATIBLE_PRESENT = (b"Nats-Expected-Last-Sequence", b"Nats-Expected-Last-Subject-Sequence")


class _Invalid(ValueError):
    pass


def parse_incr(value: bytes) -> int:
    """``big.Int.SetString(v, 10)``; raises ValueError."""
    if not _INTEGER.fullmatch(value):
        raise _Invalid(value)
    return int(value)


def incr_header_error(hdr: bytes, payload: bytes, allowed: bool, sourced: bool) -> ApiError | None:
    """The first header rule of the publish path: an invalid, disallowed or conditional
    increment, or one with a body (a sourced message is stored as it is, once valid)."""
    value = slice_header(INCR, hdr)
    if not value:
        return None
    try:
        parse_incr(value)
    except ValueError:
        return api_error(ApiErrors.JSMessageIncrInvalidErr)
    if sourced:
        return None
    if not allowed:
        return api_error(ApiErrors.JSMessageIncrDisabledErr)
    if payload:
        return api_error(ApiErrors.JSMessageIncrPayloadErr)
    if any(slice_header(key, hdr) for key in _INCOMPATIBLE) or any(
        slice_header(key, hdr) is not None for key in _INCOMPATIBLE_PRESENT
    ):
        return api_error(ApiErrors.JSMessageIncrInvalidErr)
    return None


def set_header(hdr: bytes, key: bytes, value: bytes) -> bytes:
    """Go ``setHeader``: replace the first ``key`` line's value, or add the line at the end."""
    prefix = b"\r\n" + key + b":"
    start = hdr.find(prefix)
    if start >= 0:
        vstart = start + len(prefix)
        if hdr[vstart : vstart + 1] == b" ":
            vstart += 1
        vend = hdr.find(b"\r", vstart)
        if vend < 0:
            return hdr
        return hdr[:vstart] + value + hdr[vend:]
    if hdr.endswith(b"\r\n"):
        return hdr[:-2] + key + b": " + value + b"\r\n\r\n"
    return hdr + key + b": " + value + b"\r\n"


def _value(body: bytes) -> str:
    """The ``val`` of a stored counter (Go unmarshals into ``CounterValue``); ValueError if broken."""
    doc = json.loads(body)
    if not isinstance(doc, dict):
        raise TypeError("not an object")
    val = doc.get("val", "")
    if not isinstance(val, str):
        raise TypeError("val is not a string")
    return val


def _big(text: str) -> int:
    """``initial.SetString(text, 10)`` as Go uses it: an unparsable text leaves 0."""
    try:
        return parse_incr(text.encode())
    except ValueError:
        return 0


def apply_increment(
    last: tuple[bytes, bytes] | None, subject: bytes, hdr: bytes, payload: bytes, incr: int
) -> tuple[bytes, bytes, str] | ApiError:
    """The stored header, body and new total for an increment, given the subject's last
    message ``(hdr, body)``; or the error ack's error."""
    total = 0
    sources: dict[str, dict[str, str]] = {}
    try:
        if last is not None:
            total = _big(_value(last[1]))
            raw = slice_header(_COUNTER_SOURCES, last[0])
            if raw:
                sources = json.loads(raw)
                if not isinstance(sources, dict):
                    raise ValueError("sources")
        origin = slice_header(_STREAM_SOURCE, hdr)
        if origin:
            fields = origin.decode("utf-8", "surrogateescape").split(" ")
            orig_subject = fields[4] if len(fields) >= 5 else subject.decode("utf-8", "surrogateescape")
            sourced_total = _big(_value(payload))
            per_origin = sources.setdefault(fields[0], {})
            previous = _big(per_origin.get(orig_subject, ""))
            per_origin[orig_subject] = str(sourced_total)
            incr = sourced_total - previous
            hdr = set_header(hdr, INCR, str(incr).encode())
    except (ValueError, AttributeError, TypeError):
        return api_error(ApiErrors.JSMessageCounterBrokenErr)
    total += incr
    body = b'{"val":%s}' % dumps(str(total)).encode()
    if sources:
        hdr = set_header(hdr, _COUNTER_SOURCES, _go_map_json(sources))
    return hdr, body, str(total)


def _go_map_json(sources: dict[str, dict[str, str]]) -> bytes:
    """``json.Marshal`` of a ``map[string]map[string]string``: keys sorted, Go escaping."""
    return dumps({k: dict(sorted(v.items())) for k, v in sorted(sources.items())}).encode()
