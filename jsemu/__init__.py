"""jsemu: an in-process emulator of a NATS JetStream server, faithful on the wire."""

from .app import Server, ThreadedServer
from .server.options import ServerOptions
from .version import NATS_VERSION, __version__

__all__ = ["NATS_VERSION", "Server", "ServerOptions", "ThreadedServer", "__version__"]
