"""jsemu: an in-process emulator of a NATS JetStream server, faithful on the wire."""

__version__ = "0.1.0"

from .server.options import NATS_VERSION, ServerOptions
from .server.server import Server, ThreadedServer

__all__ = ["NATS_VERSION", "Server", "ServerOptions", "ThreadedServer", "__version__"]
