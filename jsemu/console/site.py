"""The console: a page for people, served on the monitoring port beside nats-server's JSON.

``/console`` is one HTML page with one script and one style sheet (``static/``, package data
of the wheel: no CDN, no build step); the page asks ``/console/api/...`` for JSON and draws
it. The monitor's ``/`` page (``server/monitor_index.py``, nats-server's home page) links the
console first. The monitor (``server/monitor.py``) hands every request for ``/console...``
here (``Server.http_app``), with the connection it came on, so the console follows the
monitoring port's settings (host, port, one per node of a simulated cluster) and adds no
listener of its own.

It all runs on the server's event loop. Reads are bounded pages (``views.py``,
``browse.py``); the live tail (``tail.py``) holds its connection open and writes
server-sent events; control actions (``actions.py``) are ``POST``s carried out by the
``$JSEMU.API`` dispatcher. The routes are one table, ``_ROUTES``, matched on path segments.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING
from urllib.parse import unquote

from .actions import AUTH_RESTRICTED, Actions
from .browse import browse
from .http import Request, Response, json_response, read_request, text_response
from .tail import Tail
from .views import ConsoleHost, ViewError, Views

if TYPE_CHECKING:
    from ..control import ControlApi
    from ..server.monitor import Monitor

__all__ = ["Console"]

log = logging.getLogger("jsemu.console")

_STATIC = {
    "/console": ("index.html", "text/html; charset=utf-8"),
    "/console/console.js": ("console.js", "text/javascript; charset=utf-8"),
    "/console/console.css": ("console.css", "text/css; charset=utf-8"),
}

#: nats-server's home page links, in its order (``/`` on its monitoring port).
_Handler = Callable[["Console", "Monitor", Request, dict[str, str]], Response]
_ROUTES: list[tuple[str, re.Pattern[str], _Handler]] = []


def _route(method: str, pattern: str) -> Callable[[_Handler], _Handler]:
    """Register a handler for ``/console/api/`` + ``pattern`` (``{name}`` is one segment)."""
    regex = re.compile("^/console/api/" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern) + "$")

    def register(fn: _Handler) -> _Handler:
        _ROUTES.append((method, regex, fn))
        return fn

    return register


class Console:
    """Serves ``/console...`` of the monitoring port (see the module docstring); the port's ``/``
    page links it first (``index_links``)."""

    index_links = (("Console", "/console"),)

    def __init__(self, host: ConsoleHost, control: ControlApi | None, restricted: bool = False) -> None:
        self.host = host
        #: The server requires client authentication: no message contents, no tail, no action.
        self.restricted = restricted
        self.views = Views(host)
        self.actions = Actions(None, AUTH_RESTRICTED) if restricted else Actions(control)
        #: Each open live tail and the task writing it.
        self.tails: dict[Tail, asyncio.Task[None]] = {}
        self._assets: dict[str, bytes] = {}

    def serves(self, path: str) -> bool:
        return path == "/console" or path.startswith("/console/")

    async def close(self) -> None:
        """The server stops: every live tail ends and its connection closes (waited for, so
        nothing is left running on the loop)."""
        tasks = list(self.tails.values())
        for tail in list(self.tails):
            tail.close()
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    async def handle(
        self, monitor: Monitor, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Answer one request (the monitor closes the connection afterwards)."""
        request = await read_request(head, reader)
        if isinstance(request, Response):
            writer.write(request.encode())
            return
        if request.path == "/console/api/tail" and request.method == "GET":
            response = _refused() if self.restricted else self._tail(request)
            if isinstance(response, Tail):
                task = asyncio.current_task()
                assert task is not None
                self.tails[response] = task
                try:
                    await response.run(reader, writer)
                finally:
                    self.tails.pop(response, None)
                return
        else:
            response = self.respond(monitor, request)
        writer.write(response.encode())

    def respond(self, monitor: Monitor, request: Request) -> Response:
        path = request.path.rstrip("/") or "/"
        if path in _STATIC:
            if request.method not in ("GET", "HEAD"):
                return text_response("405 Method Not Allowed", "405 method not allowed\n")
            name, ctype = _STATIC[path]
            return Response("200 OK", ctype, self._asset(name), {"Cache-Control": "no-cache"})
        for method, regex, fn in _ROUTES:
            match = regex.match(path)
            if match is None:
                continue
            if request.method != method:
                return json_response({"error": f"use {method}"}, "405 Method Not Allowed")
            if self.restricted and fn in _CONTENTS:
                return _refused()
            try:
                return fn(self, monitor, request, {k: unquote(v) for k, v in match.groupdict().items()})
            except ViewError as exc:
                return json_response({"error": str(exc)}, "404 Not Found")
            except Exception as exc:  # a bug here must not cost the page its answer (the log says where)
                log.exception("console request %s failed", request.path)
                return json_response({"error": f"internal error: {exc!r}"}, "500 Internal Server Error")
        return text_response("404 Not Found", "404 page not found\n")

    def _asset(self, name: str) -> bytes:
        data = self._assets.get(name)
        if data is None:
            data = (resources.files(__package__) / "static" / name).read_bytes()
            self._assets[name] = data
        return data

    def _tail(self, request: Request) -> Tail | Response:
        try:
            js = self.views.jetstream(request.query) if request.query.get("account") else None
        except ViewError as exc:
            return json_response({"error": str(exc)}, "404 Not Found")
        sublist = js.account.sublist if js is not None else self.host.sublist
        try:
            return Tail(sublist, request.query.get("subject", ""))
        except ViewError as exc:
            return json_response({"error": str(exc)}, "400 Bad Request")

    # --- the JSON API -----------------------------------------------------------------

    @_route("GET", "overview")
    def _overview(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        overview = self.views.overview(monitor, self.actions.enabled)
        return json_response(overview | {"restricted": AUTH_RESTRICTED if self.restricted else ""})

    @_route("GET", "connections")
    def _connections(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.connections(monitor, request.query))

    @_route("GET", "streams")
    def _streams(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.streams(request.query))

    @_route("GET", "streams/{stream}")
    def _stream(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.stream_info(request.query, args["stream"]))

    @_route("GET", "streams/{stream}/messages")
    def _messages(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        stream = self.views.stream(request.query, args["stream"])
        return json_response(browse(stream.store, stream.name, request.query))

    @_route("GET", "streams/{stream}/consumers")
    def _consumers(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.consumers(request.query, args["stream"]))

    @_route("GET", "streams/{stream}/consumers/{consumer}")
    def _consumer(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.consumer_info(request.query, args["stream"], args["consumer"]))

    @_route("GET", "buckets")
    def _buckets(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.buckets(request.query))

    @_route("GET", "kv/{bucket}")
    def _kv(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.kv_keys(request.query, args["bucket"]))

    @_route("GET", "kv/{bucket}/history")
    def _kv_history(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        key = request.query.get("key", "")
        if not key:
            raise ViewError("history needs a key")
        return json_response(self.views.kv_history(request.query, args["bucket"], key))

    @_route("GET", "objects/{bucket}")
    def _objects(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.objects(request.query, args["bucket"]))

    @_route("GET", "objects/{bucket}/{nuid}/chunks")
    def _chunks(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.views.object_chunks(request.query, args["bucket"], args["nuid"]))

    @_route("GET", "control")
    def _control_state(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        return json_response(self.actions.state() | {"clock": self.views.clock()})

    @_route("POST", "control/{method}")
    def _control(self, monitor: Monitor, request: Request, args: dict[str, str]) -> Response:
        refusal = _cross_site(request)
        if refusal is not None:
            return json_response({"ok": False, "error": refusal}, "403 Forbidden")
        answer = self.actions.run(args["method"], request.body)
        if not self.actions.enabled:
            return json_response(answer, "403 Forbidden")
        return json_response(answer)


#: The views that show message contents, refused when the server requires authentication.
_CONTENTS = {Console._messages, Console._kv, Console._kv_history, Console._objects, Console._chunks}


def _refused() -> Response:
    return json_response({"ok": False, "error": AUTH_RESTRICTED}, "403 Forbidden")


def _cross_site(request: Request) -> str | None:
    """Why a state-changing request is refused: not JSON (a plain form can post from any
    site), or sent by a page of another origin."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return "control actions take a JSON body (Content-Type: application/json)"
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host", ""):
        return f"control actions are not taken from another origin ({origin})"
    return None
