"""The control plane: what a test can do to a running jsemu server that a real one can't,
in process (``server.control``) and over NATS (``$JSEMU.API.<METHOD>``)."""

from .nats_api import CONTROL_PREFIX, METHODS, ControlApi
from .plane import ControlError, ControlPlane, DirectGetAnswer

__all__ = ["CONTROL_PREFIX", "METHODS", "ControlApi", "ControlError", "ControlPlane", "DirectGetAnswer"]
