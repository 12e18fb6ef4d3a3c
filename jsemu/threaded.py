"""A server on its own event loop in a daemon thread, for synchronous code and tests."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, Self, TypeVar

__all__ = ["Runnable", "ThreadedServer"]


class Runnable(Protocol):
    """What a thread runs: a server that starts and stops on an event loop (``jsemu.Server``).
    The thread is generic in it, so ``in_thread`` hands back the caller's own server type."""

    @property
    def url(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def urls(self) -> list[str]: ...

    @property
    def monitor_urls(self) -> list[str]: ...

    @property
    def control(self) -> Any: ...

    async def start(self) -> Any: ...

    async def stop(self) -> None: ...


S = TypeVar("S", bound=Runnable)


class _ThreadSafeControl:
    """``ControlPlane`` methods, marshalled onto a :class:`ThreadedServer`'s loop."""

    def __init__(self, threaded: ThreadedServer[Any]) -> None:
        self._threaded = threaded

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._threaded.server.control, name)
        if not callable(method):
            raise AttributeError(name)  # noqa: TRY004 - not a method: no such attribute here

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._threaded.call(method, *args, **kwargs)

        call.__name__ = name
        call.__doc__ = method.__doc__
        return call


class ThreadedServer(Generic[S]):
    """A server (``jsemu.Server``) running on an event loop in a background thread."""

    def __init__(self, server: S) -> None:
        self.server = server
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="jsemu-server", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self.server.start())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the starting thread
            self._error = exc
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self.server.stop())
        self._loop.close()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def urls(self) -> list[str]:
        """Every node's client URL (a simulated cluster's nodes; one for a standalone server)."""
        return self.server.urls

    @property
    def monitor_urls(self) -> list[str]:
        """Every node's monitoring URL (``http_port`` set; empty otherwise)."""
        return self.server.monitor_urls

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` on the server's loop thread and return its result (or raise its error):
        the safe way to touch the server from the thread that started it."""
        if threading.current_thread() is self._thread:
            return fn(*args, **kwargs)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

        self._loop.call_soon_threadsafe(run)
        return future.result(timeout=30)

    @property
    def control(self) -> _ThreadSafeControl:
        """The server's control plane, each call run on the server's loop thread."""
        return _ThreadSafeControl(self)

    def stop(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
