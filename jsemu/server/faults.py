"""Deterministic fault injection for client messages: drop, delay, or answer with a status.

A rule matches client publishes by subject filter (``$JS.API.DIRECT.GET.>``,
``orders.*``) and applies to the next ``count`` matching messages (0: until cleared).
Only messages from client connections are affected, never the server's own replies,
so a rule on a request subject makes exactly those requests fail.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..protocol.encoder import status_header
from ..subjects import is_valid_subject, subject_matches
from .subscriber import Change

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .server import Server

__all__ = ["Fault", "FaultInjector"]

Action = Literal["drop", "delay", "status"]
_ACTIONS = ("drop", "delay", "status")


@dataclass
class Fault:
    id: int
    filter: str
    action: Action
    count: int  # messages left to affect; 0 means no limit
    delay: float = 0.0  # seconds, for "delay"
    status: int = 503  # for "status"
    description: str = ""
    hits: int = field(default=0)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "filter": self.filter,
            "action": self.action,
            "remaining": self.count,
            "delay": self.delay,
            "status": self.status,
            "description": self.description,
            "hits": self.hits,
        }


class FaultInjector:
    """The server's fault rules, checked for each client publish while any exist."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.rules: list[Fault] = []
        self._ids = itertools.count(1)

    def add(
        self,
        filter: str,
        action: str,
        count: int = 1,
        *,
        delay: float = 0.0,
        status: int = 503,
        description: str = "",
    ) -> Fault:
        if action not in _ACTIONS:
            raise ValueError(f"action must be one of {', '.join(_ACTIONS)}, not {action!r}")
        if not is_valid_subject(filter):
            raise ValueError(f"invalid subject filter {filter!r}")
        if count < 0 or delay < 0:
            raise ValueError("count and delay can not be negative")
        if not 100 <= status <= 999:
            raise ValueError("status must be a three-digit code")
        fault = Fault(next(self._ids), filter, action, count, delay, status, description)  # type: ignore[arg-type]
        self.rules.append(fault)
        self.server.invalidate_routes(Change.FAULT_RULES)  # publishes on the fast lane must now be checked
        return fault

    def remove(self, fault_id: int) -> bool:
        before = len(self.rules)
        self.rules = [f for f in self.rules if f.id != fault_id]
        self.server.invalidate_routes(Change.FAULT_RULES)
        return len(self.rules) != before

    def clear(self) -> None:
        self.rules = []
        self.server.invalidate_routes(Change.FAULT_RULES)

    def intercept(self, conn: ClientConnection, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """Apply the first matching rule; True when the message must not be routed now."""
        text = subject.decode("utf-8", "replace")
        for fault in self.rules:
            if subject_matches(text, fault.filter):
                break
        else:
            return False
        fault.hits += 1
        if fault.count:
            fault.count -= 1
            if fault.count == 0:
                self.rules.remove(fault)
                self.server.invalidate_routes(Change.FAULT_RULES)
        if fault.action == "status":
            if reply:
                block = status_header(fault.status, fault.description)
                conn.account.outbound.send(reply, len(block), block)
        elif fault.action == "delay":
            loop = self.server.loop
            loop.call_later(fault.delay, conn.publish_routed, subject, reply, hdr, msg)
        return True
