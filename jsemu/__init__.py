"""jsemu: an in-process emulator of a NATS JetStream server, faithful on the wire."""

__version__ = "0.1.0"

from .server.options import NATS_VERSION, ServerOptions  # noqa: E402
from .server.server import Server, ThreadedServer  # noqa: E402

__all__ = ["Server", "ServerOptions", "ThreadedServer", "NATS_VERSION", "__version__"]
