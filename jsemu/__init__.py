"""jsemu: an in-process emulator of a NATS JetStream server, faithful on the wire.

``Server``, ``ThreadedServer`` and ``ServerOptions`` are imported on first use (PEP 562), so
a process that needs one corner of the package (a Spark Python worker running the
``jsemu.pipeline`` data source, the command line's ``--version``) does not pay for loading the
whole server: about 0.25 s of CPU in each of the several Python processes a Spark read starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import NATS_VERSION, __version__

if TYPE_CHECKING:
    from .app import Server, ThreadedServer
    from .server.options import ServerOptions

__all__ = ["NATS_VERSION", "Server", "ServerOptions", "ThreadedServer", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("Server", "ThreadedServer"):
        from . import app

        return getattr(app, name)
    if name == "ServerOptions":
        from .server.options import ServerOptions

        return ServerOptions
    raise AttributeError(f"module 'jsemu' has no attribute {name!r}")
