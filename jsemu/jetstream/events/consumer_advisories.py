"""Consumer action advisories: ``$JS.EVENT.ADVISORY.CONSUMER.CREATED|DELETED.<stream>.<consumer>``.

nats-server 2.15.1 sends ``io.nats.jetstream.advisory.v1.consumer_action``
(``JSConsumerActionAdvisory``: type, id, timestamp, stream, consumer, action, domain when set)
when a consumer is created, durable or ephemeral (not when a create finds it there, not for
an update, not for a failed request), and when one goes: a delete request, its inactive
threshold, or the delete of its stream (one per consumer, before the stream's own advisory).
Consumers restored at start-up send none. Like ``sendAdvisory``, nothing is encoded while
nobody listens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .advisories import send_action

if TYPE_CHECKING:
    from ..context import Advising

__all__ = ["CREATE", "DELETE", "send_consumer_action"]

_TYPE = "io.nats.jetstream.advisory.v1.consumer_action"
CREATE = "create"
DELETE = "delete"
#: ``JSAdvisoryConsumerCreatedPre`` and ``JSAdvisoryConsumerDeletedPre``, by action.
_PREFIX = {
    CREATE: "$JS.EVENT.ADVISORY.CONSUMER.CREATED.",
    DELETE: "$JS.EVENT.ADVISORY.CONSUMER.DELETED.",
}


def send_consumer_action(js: Advising, stream: str, consumer: str, action: str) -> None:
    """``sendCreateAdvisory`` / the delete advisory of ``stopWithFlags``."""
    subject = f"{_PREFIX[action]}{stream}.{consumer}".encode()
    send_action(js, subject, _TYPE, {"stream": stream, "consumer": consumer, "action": action})
