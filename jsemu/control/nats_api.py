"""The control plane over NATS: ``$JSEMU.API.<METHOD>`` requests with a JSON object of
arguments, for a jsemu server running in another process (``jsemu serve``).

``METHOD`` is a :class:`~jsemu.control.plane.ControlPlane` method marked ``@remote``, in upper case
(``PAUSE``, ``SET_LAG``, ``PEER_DOWN``, ``ADVANCE_CLOCK``, ``ANSWERS`` ...). The reply is
``{"ok":true,"result":...}`` or ``{"ok":false,"error":"..."}``; a request without a reply
subject is carried out silently. ``$JSEMU.API.METHODS`` lists the methods.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
from types import MethodType
from typing import TYPE_CHECKING, Any

from ..jetstream.internal import InternalSubscriber
from ..server.sublist import Subscription
from .plane import ControlError, ControlPlane, remote_methods

if TYPE_CHECKING:
    from ..server.server import Server

__all__ = ["CONTROL_PREFIX", "METHODS", "ControlApi"]

log = logging.getLogger("jsemu.control")

CONTROL_PREFIX = "$JSEMU.API."

#: The control plane methods reachable over NATS (those marked ``@remote``), by name.
_REMOTE = remote_methods(ControlPlane)
METHODS = tuple(_REMOTE)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


class ControlApi:
    """Subscribes ``$JSEMU.API.>`` and dispatches to the server's control plane."""

    def __init__(self, server: Server, control: ControlPlane) -> None:
        self.server = server
        self.control = control
        self.sub = Subscription(InternalSubscriber(self._on_request), b"$JSEMU.API.>", None, b"$JSEMU")

    def start(self) -> None:
        self.server.sublist.insert(self.sub)

    def call(self, method: str, data: bytes) -> dict[str, Any]:
        """Run one request; never raises."""
        name = method.lower()
        if name == "methods":
            return {"ok": True, "result": [m.upper() for m in METHODS]}
        fn = _REMOTE.get(name)
        if fn is None:
            return {"ok": False, "error": f"unknown control method {method!r}"}
        try:
            args = json.loads(data) if data.strip() else {}
        except ValueError as exc:
            return {"ok": False, "error": f"invalid JSON: {exc}"}
        if not isinstance(args, dict):
            return {"ok": False, "error": "the request must be a JSON object of arguments"}
        bound = MethodType(fn, self.control)
        try:
            inspect.signature(bound).bind(**args)
        except TypeError as exc:
            return {"ok": False, "error": f"{method.upper()}: {exc}"}
        try:
            result = bound(**args)
        except (ControlError, ValueError, TypeError) as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": True, "result": _jsonable(result)}

    def _on_request(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        method = subject[len(CONTROL_PREFIX) :].decode("utf-8", "replace")
        data = msg[hdr:] if hdr > 0 else msg
        answer = self.call(method, data)
        if reply:
            self.server.outbound.send(reply, -1, json.dumps(answer).encode())
