"""The composition root: the one place that puts the layers together.

``server/`` is the NATS core and knows nothing above it; :class:`Server` here adds the
JetStream service (``$JS.API.>``, streams, Direct Get), the control plane
(``server.control``) with its ``$JSEMU.API.>`` face, and JetStream's figures for the
monitoring port. ``jsemu.Server`` is this class.
"""

from __future__ import annotations

from typing import Any

from .control import ControlApi, ControlPlane
from .jetstream.monitoring import JetStreamMonitoring
from .jetstream.service import JetStream
from .server.options import ServerOptions
from .server.server import Server as CoreServer
from .server.timers import LoopTimers
from .store import Clock, ControlledClock
from .threaded import ThreadedServer

__all__ = ["Server", "ThreadedServer"]


class Server(CoreServer):
    """An in-process NATS server with JetStream and the control plane.

    >>> async with Server() as srv:      # doctest: +SKIP
    ...     nc = await nats.connect(srv.url)
    """

    def __init__(self, options: ServerOptions | None = None, *, clock: Clock | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.clock = clock if clock is not None else ControlledClock()
        self.timers = LoopTimers(self.clock, lambda: self.loop)
        #: The JetStream service (None when JetStream is off); ``clock`` drives its timestamps.
        self.jetstream: JetStream | None = JetStream(self, self.clock) if self.options.jetstream else None
        #: What tests can do to this server that a real one can't (``$JSEMU.API`` too).
        self.control = ControlPlane(self)
        self._control_api = ControlApi(self, self.control)
        if self.jetstream is not None:
            self.timers = self.jetstream.timers  # the control plane runs them after each clock step
            self.services.append(self.jetstream)
            self.jetstream_report = JetStreamMonitoring(self.jetstream)
        self.services.append(self._control_api)

    async def stop(self) -> None:
        if self.jetstream is not None:
            self.jetstream.timers.close()  # no consumer timer fires after the server stopped
        await super().stop()

    @classmethod
    def in_thread(cls, *args: Any, **kwargs: Any) -> ThreadedServer:
        """Start a server (``Server(*args, **kwargs)``) on its own event loop in a daemon
        thread (for synchronous code)."""
        return ThreadedServer(cls(*args, **kwargs))
