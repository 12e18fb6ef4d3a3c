"""The console's control actions: the control plane's ``$JSEMU.API`` methods, one click each.

An action is exactly a ``$JSEMU.API.<METHOD>`` request: the console hands its method and
JSON arguments to the server's :class:`~jsemu.control.ControlApi`, the very dispatcher that
answers the NATS request, and returns the request (subject and payload, what a test would
send to do the same) with the reply. Nothing here knows what a method does, so every method
the control plane serves is an action and a new one needs no console change.

Actions change the server, so they are ``POST``s with a JSON body (a cross-site page can not
send one without a CORS preflight, which the console never answers) and are refused when the
console was built without the control plane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..control import METHODS

if TYPE_CHECKING:
    from ..control import ControlApi

__all__ = ["AUTH_RESTRICTED", "CONTROL_OFF", "Actions"]

CONTROL_OFF = "the control plane is off on this server: the console shows state but changes nothing"
#: Why a server with client authentication shows less: the monitoring port has no login.
AUTH_RESTRICTED = (
    "this server requires client authentication and its monitoring port has none: the console shows what"
    " the monitoring endpoints show (no message contents, no live tail) and takes no action;"
    " use $JSEMU.API from an authenticated client"
)
#: The responder log entries the console shows (newest last).
ANSWERS_SHOWN = 100


class Actions:
    def __init__(self, control: ControlApi | None, off_reason: str = CONTROL_OFF) -> None:
        self.control = control
        #: What the page and a refused action say when ``control`` is None.
        self.off_reason = off_reason

    @property
    def enabled(self) -> bool:
        return self.control is not None

    def state(self) -> dict[str, Any]:
        """What the control page shows: whether actions are on, the methods, the fault rules,
        the nodes and the latest Direct Get answers (read with the same methods)."""
        if self.control is None:
            return {"enabled": False, "message": self.off_reason}
        out: dict[str, Any] = {"enabled": True, "methods": [m.upper() for m in METHODS]}
        for name in ("faults", "nodes", "answers", "consumer_faults"):
            if name.lower() in METHODS:
                answer = self.control.call(name, b"")
                out[name] = answer.get("result") if answer.get("ok") else []
        out["answers"] = (out.get("answers") or [])[-ANSWERS_SHOWN:]
        return out

    def run(self, method: str, body: bytes) -> dict[str, Any]:
        """Carry out ``$JSEMU.API.<method>`` with ``body`` as its arguments."""
        request = {"subject": f"$JSEMU.API.{method.upper()}", "payload": body.decode("utf-8", "replace") or "{}"}
        if self.control is None:
            return {"ok": False, "error": self.off_reason, "request": request}
        if method.lower() not in METHODS:
            return {"ok": False, "error": f"unknown control method {method!r}", "request": request}
        answer = self.control.call(method, body)
        self.control.server.flush()  # what the action made the server send goes out now
        return answer | {"request": request}
