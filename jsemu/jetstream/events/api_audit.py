"""The JetStream API audit advisory: ``$JS.EVENT.ADVISORY.API`` (``api_audit``).

nats-server 2.15.1 sends ``io.nats.jetstream.advisory.v1.api_audit`` (``JSAPIAudit``: type,
id, timestamp, server, client, subject, request when not empty, response, domain when set)
for each API request it answers through its API response path (``sendAPIResponse`` /
``sendAPIErrResponse``, the ones counted in the account's API statistics), errors included,
after the reply. Direct Gets, pull requests (``CONSUMER.MSG.NEXT``) and subjects without an
endpoint send none. ``client`` is the requesting client (``ClientInfo.forAdvisory``).

The hot path pays nothing: Direct Gets and pull requests never reach the API dispatch, and
the dispatch asks for the requester only while somebody listens on the subject.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ...ids import new_event_id
from ...protocol.gojson import dumps
from ...timefmt import format_ns
from ..context import Advising, HasServerName

if TYPE_CHECKING:
    from ...server.client_info import ClientInfo

__all__ = ["AUDIT_SUBJECT", "send_api_audit"]

AUDIT_SUBJECT = b"$JS.EVENT.ADVISORY.API"
_TYPE = "io.nats.jetstream.advisory.v1.api_audit"


class _Auditing(Advising, HasServerName, Protocol):
    """What the audit needs: an advisory's services and the server's name."""


def send_api_audit(
    js: _Auditing, client: ClientInfo | dict[str, Any] | None, subject: str, request: bytes, response: bytes
) -> None:
    """``sendJetStreamAPIAuditAdvisory`` (the caller has checked the subject's interest);
    ``client`` as given when it is no ``ClientInfo`` (the system account's ``{}`` or ``null``)."""
    event: dict[str, Any] = {
        "type": _TYPE,
        "id": new_event_id(),
        "timestamp": format_ns(js.clock.now_ns()),
        "server": js.server_name,
        "client": client if client is None or isinstance(client, dict) else client.as_json(),
        "subject": subject,
    }
    if request:
        event["request"] = request.decode("utf-8", "replace")
    event["response"] = response.decode("utf-8", "replace")
    if js.domain:
        event["domain"] = js.domain
    js.out.send_via_sendq(AUDIT_SUBJECT, -1, dumps(event).encode())
