"""Pull requests (``$JS.API.CONSUMER.MSG.NEXT``): the request forms, the checks that refuse
one before it waits, and the status messages the server answers with.

``parse_next_request`` is Go's ``nextReqFromMsg`` (empty: one message; a number: that batch;
JSON: the request struct); ``check_request_limits`` the start of ``processNextMsgRequest``.
A refusal is the header block of the status to send back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...protocol import texts
from ...protocol.go_duration import format_duration
from ...protocol.gojson import T_BOOL, T_DURATION, T_INT, T_INT64, T_STRING, GoJSONError, GoStruct, unmarshal_request

if TYPE_CHECKING:
    from .config import ConsumerConfig

__all__ = ["NextRequest", "PullRequest", "check_request_limits", "parse_next_request"]

# Decoded through a pointer to a pointer, so Go's error texts name the struct "".
NEXT_REQUEST = GoStruct(
    "",
    {
        "expires": T_DURATION,
        "batch": T_INT,
        "max_bytes": T_INT,
        "no_wait": T_BOOL,
        "idle_heartbeat": T_DURATION,
        "group": T_STRING,
        "min_pending": T_INT64,
        "min_ack_pending": T_INT64,
        "id": T_STRING,
        "priority": T_INT,
    },
)


def _bad(reason: str) -> bytes:
    return texts.PULL_BAD_REQUEST % reason.encode()


@dataclass(slots=True)
class NextRequest:
    batch: int = 1
    expires: int = 0  # nanoseconds from now, 0: never
    max_bytes: int = 0
    no_wait: bool = False
    heartbeat: int = 0
    group: dict[str, Any] | None = None  # the priority-group fields of a JSON request


def parse_next_request(payload: bytes) -> NextRequest | bytes:
    """``nextReqFromMsg``; a JSON error is the server's 400 status."""
    req = payload.strip()
    if not req:
        return NextRequest()
    if req[:1] == b"{":
        try:
            values = unmarshal_request(req, NEXT_REQUEST)
        except GoJSONError as exc:
            return _bad(str(exc))
        out = NextRequest(
            batch=values.get("batch") or 0,
            expires=values.get("expires") or 0,
            max_bytes=values.get("max_bytes") or 0,
            no_wait=bool(values.get("no_wait")),
            heartbeat=max(values.get("idle_heartbeat") or 0, 0),  # Go arms it only when > 0
            group=values,
        )
        if out.heartbeat > 0 and out.heartbeat * 2 > out.expires:
            return _bad(texts.PULL_BAD_HEARTBEAT)
        return out
    try:
        return NextRequest(batch=int(req))
    except ValueError:
        return NextRequest()


def check_request_limits(req: NextRequest, cfg: ConsumerConfig) -> bytes | None:
    """The consumer's request limits and priority-group checks, in the server's order."""
    if cfg.max_batch > 0 and req.batch > cfg.max_batch:
        return texts.PULL_EXCEEDED_MAX_REQUEST_BATCH % cfg.max_batch
    if req.expires and cfg.max_expires > 0 and req.expires > cfg.max_expires:
        return texts.PULL_EXCEEDED_MAX_REQUEST_EXPIRES % format_duration(cfg.max_expires).encode()
    if req.max_bytes > 0 and cfg.max_bytes > 0 and req.max_bytes > cfg.max_bytes:
        return texts.PULL_EXCEEDED_MAX_REQUEST_MAX_BYTES % cfg.max_bytes
    group = req.group
    if group is not None:
        if (group.get("min_pending") or group.get("min_ack_pending")) and cfg.priority_policy != "overflow":
            return _bad(texts.PULL_BAD_NOT_OVERFLOW)
        if group.get("id") and cfg.priority_policy != "pinned_client":
            return _bad(texts.PULL_BAD_NOT_PINNED)
        priority = group.get("priority") or 0
        if priority < 0 or priority > 9:
            return _bad(texts.PULL_BAD_PRIORITY)
    return None


class PullRequest:
    """A waiting pull request (Go's ``waitingRequest``)."""

    __slots__ = (
        "bytes_left",
        "delivered",
        "expires",
        "group",
        "heartbeat",
        "heartbeat_due",
        "no_wait",
        "remaining",
        "reply",
    )

    def __init__(self, reply: bytes, batch: int, max_bytes: int, no_wait: bool, expires: int) -> None:
        self.reply = reply
        self.remaining = batch  # messages still to deliver (Go's n)
        self.delivered = 0  # d
        self.bytes_left = max_bytes  # b: of max_bytes (0: no limit)
        self.no_wait = no_wait
        self.expires = expires  # clock ns, 0: never
        self.heartbeat = 0  # hb: idle heartbeat interval, 0: none
        self.heartbeat_due = 0  # hbt: clock ns when the next heartbeat is due
        self.group: dict[str, Any] | None = None  # the priority-group fields of a JSON request
