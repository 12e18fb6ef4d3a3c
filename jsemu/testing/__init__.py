"""Test support: the pytest plugin, test certificates and trace formatting. The control
plane that tests drive is :mod:`jsemu.control`."""
