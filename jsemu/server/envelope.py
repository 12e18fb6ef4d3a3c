"""The ``server`` block of every message a server sends from its system account.

nats-server stamps each system message (an event, a ``$SYS.REQ...`` reply) with a
``ServerInfo``: who sent it, its JetStream flag and a ``seq`` that counts every such
message the server sent, whichever request or event it answers. One :class:`ServerEnvelope`
per server holds that counter, so ``$SYS.REQ.SERVER...`` replies, account requests,
``USER.INFO`` and the connect events count together as on nats-server, and a new family of
requests wraps its answer with :meth:`ServerEnvelope.response` instead of building the
block again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..timefmt import format_ns
from ..version import NATS_VERSION
from .monitor import _FEATURE_FLAGS

if TYPE_CHECKING:
    from .server import Server

__all__ = ["MISSING", "ServerEnvelope"]

#: ``ServerInfo.Flags`` of nats-server 2.15.1 with JetStream: JetStream enabled, binary stream
#: snapshots, account NRG (without JetStream it sets none).
_JS_FLAGS = 1 | 2 | 4


class _Missing:
    __slots__ = ()


#: ``data`` left out of a response (Go's ``omitempty`` on a nil interface), as opposed to
#: ``None``, which is a typed nil and shows as ``"data":null``.
MISSING: Any = _Missing()


class ServerEnvelope:
    """``ServerInfo`` of one server, and the ``ServerAPIResponse`` around an answer."""

    __slots__ = ("seq", "server")

    def __init__(self, server: Server) -> None:
        self.server = server
        #: ``ServerInfo.Seq``: one more for every message the system account sends.
        self.seq = 0

    def server_info(self) -> dict[str, Any]:
        """``ServerInfo``: which server sent a system message, and its ``seq``."""
        server = self.server
        opts = server.options
        self.seq += 1
        info: dict[str, Any] = {"name": server.server_name, "host": opts.host, "id": server.server_id}
        if server.info_cluster:  # ``cluster`` (omitempty): the cluster's name, in one
            info["cluster"] = server.info_cluster
        if opts.jetstream and opts.domain:
            info["domain"] = opts.domain
        info |= {"ver": NATS_VERSION, "feature_flags": dict(_FEATURE_FLAGS), "jetstream": opts.jetstream}
        info |= {"flags": _JS_FLAGS if opts.jetstream else 0, "seq": self.seq}
        info["time"] = format_ns(time.time_ns())
        return info

    def response(self, data: Any = MISSING, error: dict[str, Any] | None = None) -> dict[str, Any]:
        """``ServerAPIResponse``: ``{"server": ..., "data": ..., "error": ...}``, ``data``
        left out when :data:`MISSING`, ``error`` when None."""
        out: dict[str, Any] = {"server": self.server_info()}
        if data is not MISSING:
            out["data"] = data
        if error is not None:
            out["error"] = error
        return out
