"""Tests of ``jsemu/control/``: the control plane's faults, clock and ``$JSEMU.API`` interface."""
