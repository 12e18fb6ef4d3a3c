"""Test support: the control plane (replication, faults, responders, clock, inspection)."""

from .control import ControlError, ControlPlane, DirectGetAnswer

__all__ = ["ControlError", "ControlPlane", "DirectGetAnswer"]
