"""Stream action advisories: ``$JS.EVENT.ADVISORY.STREAM.CREATED|UPDATED|DELETED.<stream>``.

nats-server 2.15.1 sends ``io.nats.jetstream.advisory.v1.stream_action`` (``JSStreamActionAdvisory``:
type, id, timestamp, stream, action) after a stream is created (not when a create finds the same
stream already there), after every successful update (even one that changes nothing) and after
a delete; a failed request sends none. ``domain`` follows ``action`` when the server has one.
Like ``sendAdvisory``, nothing is encoded while nobody listens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .advisories import send_action

if TYPE_CHECKING:
    from ..context import Advising

__all__ = ["CREATE", "DELETE", "MODIFY", "send_stream_action"]

_TYPE = "io.nats.jetstream.advisory.v1.stream_action"
CREATE = "create"
MODIFY = "modify"
DELETE = "delete"
#: ``JSAdvisoryStreamCreatedPre`` and its siblings, by action.
_PREFIX = {
    CREATE: "$JS.EVENT.ADVISORY.STREAM.CREATED.",
    MODIFY: "$JS.EVENT.ADVISORY.STREAM.UPDATED.",
    DELETE: "$JS.EVENT.ADVISORY.STREAM.DELETED.",
}


def send_stream_action(js: Advising, stream: str, action: str) -> None:
    """``sendCreateAdvisory`` / ``sendUpdateAdvisoryLocked`` / ``sendDeleteAdvisoryLocked``."""
    subject = f"{_PREFIX[action]}{stream}".encode()
    send_action(js, subject, _TYPE, {"stream": stream, "action": action})
