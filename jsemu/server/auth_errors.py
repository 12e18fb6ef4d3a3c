"""Authentication-error events: what nats-server publishes when it refuses a login.

Theory of operation
-------------------
Every refused login (nats-server's ``authViolation``: a wrong password, token or nkey
signature, a bad JWT, the auth callout's refusal, a first op that is not a CONNECT, a reload
whose credentials no longer let a client in) is answered ``-ERR 'Authorization Violation'``
and, as nats-server 2.15.1 does, announced as ``io.nats.server.advisory.v1.client_disconnect``
events with reason ``Authentication Failure``, in this order:

1. ``$SYS.ACCOUNT.CLIENT.AUTH.ERR`` (no account token) *in the account the login was refused
   in*, for that account's own users (``sendAccountAuthErrorEvent``): the global account
   ``$G`` (a client belongs to it until it logs in, whoever it claimed to be), or the auth
   callout's account when the callout refused it. Sent even when no system account is
   configured. Its reason, for a callout's refusal, is the refusal's text (what the server
   logs: ``Auth callout service returned an error: ...``), empty when the service did not
   answer in time. Not sent for a first op that is not a CONNECT, nor on a reload (those never
   reach ``processClientOrLeafAuthentication``).
2. ``$SYS.SERVER.<server id>.CLIENT.AUTH.ERR`` in the system account (``sendAuthErrorEvent``).
3. ``$SYS.ACCOUNT.$G.DISCONNECT`` in the system account: the refused client leaves ``$G``
   as any client leaves its account.

A client whose credentials a reload (or a claim update) no longer accepts gets the second,
its ``acc`` and ``name_tag`` its own account's, and leaves that account through the ordinary
``DISCONNECT`` event, reason ``Authentication Failure`` too (``server/closed.py``).

The ``client`` of these events is what the client claimed, not who it is: ``user`` is the
raw name it sent (its nkey, its user name, ``[REDACTED]`` for a token; nothing for a JWT
whose signature failed), ``jwt`` the JWT it sent, ``acc`` and ``name_tag`` ``$G`` (``acc``
is the event's account in the account-scoped event). Every event is built only when somebody
listens, so a refused login that nobody watches costs a match per subject.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..ids import new_event_id
from ..protocol.gojson import dumps
from ..timefmt import format_ns
from .auth_callout import raw_user
from .client_info import event_client
from .routing import GLOBAL_ACCOUNT

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .routing import Router

__all__ = ["AUTHENTICATION_FAILURE", "announce_dropped", "announce_refusal"]

#: Go's ``AuthenticationViolation`` ``ClosedState``: the reason of all three events.
AUTHENTICATION_FAILURE = "Authentication Failure"
_ACCOUNT_SUBJECT = b"$SYS.ACCOUNT.CLIENT.AUTH.ERR"


def announce_refusal(conn: ClientConnection, account: Router | None, callout_reason: str | None = None) -> None:
    """The events of a refused login (see the module's docstring); ``account``: where the
    account-scoped event goes (None: none); ``callout_reason``: the auth callout refused it,
    for this reason (the account-scoped event's, as nats-server's ``errStr``)."""
    server = conn.server
    if account is not None:
        reason = AUTHENTICATION_FAILURE if callout_reason is None else callout_reason
        _send(conn, account, _ACCOUNT_SUBJECT, account.name, reason)
    system = server.system
    if system is not None:
        router = system.router
        subject = f"$SYS.SERVER.{server.server_id}.CLIENT.AUTH.ERR".encode()
        _send(conn, router, subject, GLOBAL_ACCOUNT, AUTHENTICATION_FAILURE)
        subject = f"$SYS.ACCOUNT.{GLOBAL_ACCOUNT}.DISCONNECT".encode()
        _send(conn, router, subject, GLOBAL_ACCOUNT, AUTHENTICATION_FAILURE)


def announce_dropped(conn: ClientConnection) -> None:
    """``$SYS.SERVER.<id>.CLIENT.AUTH.ERR`` for a logged-in client whose credentials no longer
    let it in (its ``DISCONNECT`` follows when it closes)."""
    system = conn.server.system
    if system is not None:
        subject = f"$SYS.SERVER.{conn.server.server_id}.CLIENT.AUTH.ERR".encode()
        name = conn.account.name
        _send(conn, system.router, subject, name, AUTHENTICATION_FAILURE, name)


def _send(
    conn: ClientConnection, router: Router, subject: bytes, account: str, reason: str, tag: str = GLOBAL_ACCOUNT
) -> None:
    if not router.outbound.has_interest(subject):
        return
    now = time.time_ns()
    event: dict[str, Any] = {
        "type": "io.nats.server.advisory.v1.client_disconnect",
        "id": new_event_id(),
        "timestamp": format_ns(now),
        "server": conn.server.envelope.server_info(),
        "client": _client(conn, account, tag, now),
        # The client's view: what it sent is what the server received from it.
        "sent": {"msgs": conn.in_msgs, "bytes": conn.in_bytes},
        "received": {"msgs": conn.out_msgs, "bytes": conn.out_bytes},
        "reason": reason,
    }
    router.outbound.send_via_sendq(subject, -1, dumps(event).encode())


def _client(conn: ClientConnection, account: str, tag: str, stop_ns: int) -> dict[str, Any]:
    """``ClientInfo`` of a refused client: what it claimed (``getRawAuthUser``, the JWT it
    sent), not who it is."""
    jwt = conn.opts.get("jwt")
    return event_client(
        conn.opts,
        conn.start_ns,
        conn.client_ip,
        conn.cid,
        account,
        raw_user(conn.opts),
        tag,
        stop_ns,
        int(conn.rtt * 1e9) if conn.rtt else 0,
        jwt if isinstance(jwt, str) else "",
        "websocket" if conn.info_base is not None else "nats",
    )
