"""The client behind a request, as the server's advisories show it (Go's ``ClientInfo``).

JetStream's API audit advisory names the client that made each request. The server layer
hands JetStream this record (``Router.requester``), never the connection itself, so the
upper layer cannot reach into connection state and the record stays what it was when the
request came in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..timefmt import format_ns

__all__ = ["ClientInfo"]


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """The fields of ``ClientInfo.forAdvisory()`` that a plain client connection has."""

    start_ns: int
    host: str
    cid: int
    account: str
    user: str
    name: str
    lang: str
    version: str
    rtt_ns: int
    server: str
    kind: str = "Client"
    client_type: str = "nats"

    def as_json(self) -> dict[str, Any]:
        """The JSON object in Go's field order, ``omitempty`` fields left out when empty."""
        fields: list[tuple[str, Any]] = [
            ("start", format_ns(self.start_ns) if self.start_ns else ""),
            ("host", self.host),
            ("id", self.cid),
            ("acc", self.account),
            ("user", self.user),
            ("name", self.name),
            ("lang", self.lang),
            ("ver", self.version),
            ("rtt", self.rtt_ns),
            ("server", self.server),
            ("kind", self.kind),
            ("client_type", self.client_type),
        ]
        return {key: value for key, value in fields if value}
