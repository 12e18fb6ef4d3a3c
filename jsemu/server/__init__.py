"""The NATS core: listener, client connections, subscriptions, routing (no JetStream:
``jsemu.Server`` in :mod:`jsemu.app` adds it)."""

from .options import ServerOptions
from .server import Server
from .sublist import Sublist, Subscription

__all__ = ["Server", "ServerOptions", "Sublist", "Subscription"]
