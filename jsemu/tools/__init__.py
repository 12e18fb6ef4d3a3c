"""Developer tools run from a checkout (``python -m jsemu.tools.<name>``)."""
