"""JetStream advisories and metrics: the JSON nats-server publishes on ``$JS.EVENT.…``.

Each builder returns the bytes of Go's ``json.Marshal`` of the server's event struct: the
``TypedEvent`` fields (``type``, ``id``, ``timestamp``) first, then the struct's fields in
declaration order, ``omitempty`` ones left out when empty. The sender publishes one only
while someone listens (``sendAdvisory`` checks the subject's interest before encoding).
Add further events here, in the same shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...ids import new_event_id
from ...protocol.gojson import dumps
from ...timefmt import format_ns

if TYPE_CHECKING:
    from ..context import Advising

__all__ = [
    "ACK_METRIC",
    "MAX_DELIVERIES",
    "MSG_TERMINATED",
    "ack_metric",
    "max_deliveries",
    "msg_terminated",
    "next_id",
    "send_action",
]

#: Subject prefixes (``.<stream>.<consumer>`` follows).
MAX_DELIVERIES = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
MSG_TERMINATED = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED"
ACK_METRIC = "$JS.EVENT.METRIC.CONSUMER.ACK"

_MAX_DELIVER_TYPE = "io.nats.jetstream.advisory.v1.max_deliver"
_TERMINATED_TYPE = "io.nats.jetstream.advisory.v1.terminated"
_ACK_METRIC_TYPE = "io.nats.jetstream.metric.v1.consumer_ack"


def next_id() -> str:
    """The next event id (``nuid.Next``'s shape, shared with the other advisories)."""
    return new_event_id()


def send_action(js: Advising, subject: bytes, kind: str, fields: dict[str, Any]) -> None:
    """An action advisory (``stream_action``, ``consumer_action``) on ``subject``: the typed
    event's type, id and time, then ``fields`` in the struct's order, then the domain when the
    server has one; encoded only while someone listens."""
    out = js.out
    if not out.has_interest(subject):
        return
    event = {"type": kind, "id": new_event_id(), "timestamp": format_ns(js.clock.now_ns()), **fields}
    if js.domain:
        event["domain"] = js.domain
    out.send(subject, -1, dumps(event).encode())


def _event(kind: str, event_id: str, now_ns: int, fields: list[tuple[str, Any]]) -> bytes:
    parts = [f'"type":{dumps(kind)}', f'"id":{dumps(event_id)}', f'"timestamp":{dumps(format_ns(now_ns))}']
    parts += [f'"{key}":{dumps(value)}' for key, value in fields]
    return ("{" + ",".join(parts) + "}").encode()


def _domain(domain: str) -> list[tuple[str, Any]]:
    return [("domain", domain)] if domain else []


def max_deliveries(
    event_id: str, now_ns: int, stream: str, consumer: str, sseq: int, deliveries: int, domain: str = ""
) -> bytes:
    """``JSConsumerDeliveryExceededAdvisory``."""
    fields = [("stream", stream), ("consumer", consumer), ("stream_seq", sseq), ("deliveries", deliveries)]
    return _event(_MAX_DELIVER_TYPE, event_id, now_ns, fields + _domain(domain))


def msg_terminated(
    event_id: str,
    now_ns: int,
    stream: str,
    consumer: str,
    dseq: int,
    sseq: int,
    deliveries: int,
    reason: str,
    domain: str = "",
) -> bytes:
    """``JSConsumerDeliveryTerminatedAdvisory`` (``reason`` omitted when empty)."""
    fields: list[tuple[str, Any]] = [
        ("stream", stream),
        ("consumer", consumer),
        ("consumer_seq", dseq),
        ("stream_seq", sseq),
        ("deliveries", deliveries),
    ]
    if reason:
        fields.append(("reason", reason))
    return _event(_TERMINATED_TYPE, event_id, now_ns, fields + _domain(domain))


def ack_metric(
    event_id: str,
    now_ns: int,
    stream: str,
    consumer: str,
    dseq: int,
    sseq: int,
    ack_time: int,
    deliveries: int,
    domain: str = "",
) -> bytes:
    """``JSConsumerAckMetric``: ``ack_time`` is the nanoseconds since the delivery."""
    fields: list[tuple[str, Any]] = [
        ("stream", stream),
        ("consumer", consumer),
        ("consumer_seq", dseq),
        ("stream_seq", sseq),
        ("ack_time", ack_time),
        ("deliveries", deliveries),
    ]
    return _event(_ACK_METRIC_TYPE, event_id, now_ns, fields + _domain(domain))
