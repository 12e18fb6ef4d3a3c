"""asyncio transport: listener, client connections, subscriptions, routing."""

from .options import ServerOptions
from .server import Server, ThreadedServer
from .sublist import Sublist, Subscription

__all__ = ["Server", "ServerOptions", "Sublist", "Subscription", "ThreadedServer"]
