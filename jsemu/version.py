"""Version and protocol constants: a leaf every layer may import (it imports nothing of jsemu)."""

from __future__ import annotations

__all__ = ["API_LEVEL", "NATS_VERSION", "PROTO_VERSION", "__version__"]

#: This package's version (``git_commit`` in INFO and /varz says ``jsemu-<version>``).
__version__ = "0.1.0"
#: The nats-server release whose wire behaviour jsemu reproduces.
NATS_VERSION = "2.15.1"
PROTO_VERSION = 1
#: JetStream API level reported by nats-server 2.15 (``api_lvl`` in INFO).
API_LEVEL = 5
