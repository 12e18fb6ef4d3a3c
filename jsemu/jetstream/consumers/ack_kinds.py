"""The bodies a client sends to a consumer's ``$JS.ACK`` subjects (``processAck``'s kinds),
defined once for the two readers of acks: ``Consumer.process_ack`` (any ack) and the
run-of-acks loop in :mod:`.fast` (plain acks). An empty body is a plain ack too."""

from __future__ import annotations

from ...protocol.go_duration import parse_duration
from ...protocol.gojson import T_DURATION, GoJSONError, GoStruct
from ..requests import decode_request

__all__ = ["ACK_ACK", "ACK_NAK", "ACK_NEXT", "ACK_OK", "ACK_PROGRESS", "ACK_TERM", "nak_delay"]

ACK_ACK = b"+ACK"
ACK_OK = b"+OK"
ACK_NAK = b"-NAK"  # optionally followed by a delay (a duration or ``{"delay": ...}``)
ACK_PROGRESS = b"+WPI"  # in progress: the ack wait starts again
ACK_NEXT = b"+NXT"  # ack, then the rest of the body is a pull request
ACK_TERM = b"+TERM"  # optionally followed by a reason

_NAK_OPTIONS = GoStruct("ConsumerNakOptions", {"delay": T_DURATION})


def nak_delay(body: bytes) -> int | None:
    """The redelivery delay a ``-NAK`` body asks for, in nanoseconds; None: redeliver now
    (no delay given, or one the server cannot read)."""
    arg = body[len(ACK_NAK) :].strip()
    if not arg:
        return None
    try:
        if arg[:1] == b"{":
            values = decode_request(arg, _NAK_OPTIONS, strict=False)
            delay: int = values.get("delay") or 0
            return delay
        return parse_duration(arg.decode("utf-8", "replace"))
    except (GoJSONError, ValueError):
        return None
