"""Unique names on a shared real server.

The client-level tests share one real server for the whole session, and it keeps its streams,
so every test names its streams and buckets with a fresh random token (always the same length,
so byte counts in stream state do not depend on it) and deletes them afterwards.
"""

from __future__ import annotations

import uuid

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError


class Names:
    """Unique stream / bucket names for one test; :meth:`cleanup` deletes what is left of them."""

    def __init__(self) -> None:
        self.token = uuid.uuid4().hex[:10]
        self.streams: list[str] = []
        self._n = 0

    def _next(self) -> str:
        self._n += 1
        return f"{self.token}{self._n}"

    def stream(self) -> str:
        """A new stream name ``S<token><n>``; its subjects should start with :meth:`subject_root`."""
        name = f"S{self._next()}"
        self.streams.append(name)
        return name

    def bucket(self) -> str:
        """A new KV bucket name (stream ``KV_<bucket>``)."""
        name = f"B{self._next()}"
        self.streams.append(f"KV_{name}")
        return name

    def subject_root(self, stream: str) -> str:
        """A subject token unique to ``stream`` (streams may not overlap on the shared real server)."""
        return stream.lower()

    async def cleanup(self, js: JetStreamContext) -> None:
        for name in self.streams:
            try:
                await js.delete_stream(name)
            except NotFoundError:
                pass
