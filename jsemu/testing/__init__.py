"""Test support: the pytest plugin and trace formatting. The control plane lives in
:mod:`jsemu.control`; its names stay importable from here for existing tests."""

from ..control import ControlError, ControlPlane, DirectGetAnswer

__all__ = ["ControlError", "ControlPlane", "DirectGetAnswer"]
