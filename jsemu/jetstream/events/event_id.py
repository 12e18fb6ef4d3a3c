"""What JetStream's advisories share: the event id (a NUID's shape)."""

from __future__ import annotations

import random

__all__ = ["new_event_id"]

_NUID_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_NUID_LEN = 22
#: Its own generator, so advisories never shift the server's seeded ``rng`` (queue groups).
_RNG = random.Random()


def new_event_id() -> str:
    """A ``nuid.Next()``-shaped id: 22 base-62 characters."""
    return "".join(_RNG.choices(_NUID_CHARS, k=_NUID_LEN))
