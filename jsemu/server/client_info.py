"""The client behind a request, as the server's advisories show it (Go's ``ClientInfo``).

JetStream's API audit advisory names the client that made each request. The server layer
hands JetStream this record (``Router.requester``), never the connection itself, so the
upper layer cannot reach into connection state and the record stays what it was when the
request came in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..timefmt import format_ns

__all__ = ["ClientInfo", "event_client"]


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


def event_client(
    opts: Mapping[str, Any],
    start_ns: int,
    host: str,
    cid: int,
    account: str,
    user: str,
    tag: str,
    stop_ns: int | None = None,
    rtt_ns: int = 0,
    jwt: str = "",
    client_type: str = "nats",
    issuer_key: str = "",
) -> dict[str, Any]:
    """The ``client`` of a ``$SYS`` connect, disconnect or authentication-error event (Go's
    ``ClientInfo`` as those events marshal it), from a connection's CONNECT ``opts``: Go's
    field order, empty fields left out (``omitempty``); ``stop_ns`` (with ``rtt_ns``) for a
    client that is gone."""
    out: dict[str, Any] = {"start": format_ns(start_ns), "host": host, "id": cid, "acc": account}
    if user:
        out["user"] = user
    for key, field in (("name", "name"), ("lang", "lang"), ("ver", "version")):
        value = opts.get(field)
        if isinstance(value, str) and value:
            out[key] = value
    if stop_ns is not None:
        if rtt_ns:
            out["rtt"] = rtt_ns
        out["stop"] = format_ns(stop_ns)
    if jwt:
        out["jwt"] = jwt
    if issuer_key:
        out["issuer_key"] = issuer_key
    out["name_tag"] = tag
    out["kind"] = "Client"
    out["client_type"] = client_type
    return out
