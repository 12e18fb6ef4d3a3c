"""Stream settings nats-server 2.15.1 accepts and jsemu does not implement yet.

A stream that asks for them is refused at create and update (after the server's own checks,
so an invalid config still gets the server's first error) instead of being accepted and then
ignored: a client relying on them gets a clear error, never a silent wrong answer.
"""

from __future__ import annotations

from ..errors import ApiErrors, api_error
from .config import StreamConfig

__all__ = ["refuse_unsupported"]

#: (config field, what it turns on); a field is refused when it is true.
_UNSUPPORTED: tuple[tuple[str, str], ...] = ()


def refuse_unsupported(cfg: StreamConfig) -> None:
    """The 10052 invalid-config error naming the first setting jsemu cannot act on."""
    for key, what in _UNSUPPORTED:
        if getattr(cfg, key):
            raise api_error(ApiErrors.JSStreamInvalidConfigF, err=f"jsemu does not implement {what} yet")
