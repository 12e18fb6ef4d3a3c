"""Closed client connections, kept for ``/connz?state=closed``, and the reason each closed.

Why keep them: a client the server cut (a slow consumer, a stale connection) is gone from the
open list, and the closed list is where an operator sees why. nats-server keeps the last
10,000 (``DEFAULT_MAX_CLOSED_CLIENTS``) with Go's ``ClosedState`` text as the reason, the
same text as the ``$SYS.ACCOUNT.<acc>.DISCONNECT`` event's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .sublist import Subscription

__all__ = ["MAX_CLOSED_CLIENTS", "READ_ERROR", "WRITE_ERROR", "ClosedClient", "closed_reason"]

MAX_CLOSED_CLIENTS = 10_000
#: The socket failed under a read (a reset) or a write (the peer gone): Go's ``ReadError``
#: and ``WriteError``, which is how nats-server records a client that vanished.
READ_ERROR = "Read Error"
WRITE_ERROR = "Write Error"

#: The error a connection was closed with -> Go's ``ClosedState`` string.
_REASONS = {
    "Stale Connection": "Stale Connection",
    "Authentication Timeout": "Authentication Timeout",
    "Maximum Payload Violation": "Maximum Payload Exceeded",
    "Slow Consumer": "Slow Consumer (Pending Bytes)",
    "Slow Consumer (Write Deadline)": "Slow Consumer (Write Deadline)",
    "Server Shutdown": "Server Shutdown",
    "Kicked": "Kicked",
    "Authorization Violation": "Authentication Failure",  # Go's AuthenticationViolation
    "User Authentication Expired": "Authentication Expired",  # operator mode (JWTs)
    "User Authentication Revoked": "Credentials Revoked",
    "maximum account active connections exceeded": "Maximum Account Connections Exceeded",
    READ_ERROR: READ_ERROR,
    WRITE_ERROR: WRITE_ERROR,
}


def closed_reason(error: str | None) -> str:
    """Go's ``ClosedState`` text for the error a connection closed with (None: the client left)."""
    return "Client Closed" if error is None else _REASONS.get(error, "Client Closed")


@dataclass(slots=True)
class ClosedClient:
    """One closed connection: its last counters stay on ``conn``."""

    conn: ClientConnection
    reason: str
    stop_ns: int
    #: Its subscriptions' subjects when it closed (the connection has dropped them since).
    subjects: list[bytes]
    #: Output queued and never written (dropped): nats-server's ``pending_bytes`` then.
    pending_bytes: int
    #: Its subscriptions when it closed, for ``/connz?subs=detail``.
    subs: list[Subscription] = field(default_factory=list)
