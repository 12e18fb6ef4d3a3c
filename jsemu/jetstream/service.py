"""The JetStream service of one server: streams, their subscriptions, and API dispatch.

It talks to the server only through the subscription index and ``Server.route``:
internal subscribers get messages like client connections do, and replies are routed
like any published message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.gojson import dumps
from ..server.options import API_LEVEL
from ..server.sublist import Subscription
from ..store import Clock, SystemClock
from ..subject_transform import SubjectTransform, TransformError
from ..subjects import subjects_collide
from . import stream_api as _stream_api  # noqa: F401 - registers the handlers
from .api import API_PREFIX, ApiRequest, QuietError, find_handler
from .direct_get import DirectGetResponder
from .errors import ApiError, api_error
from .internal import InternalSubscriber
from .stream import Stream
from .stream_config import StreamConfig, check_stream_config, copy_metadata

if TYPE_CHECKING:
    from ..server.server import Server

__all__ = ["JetStream"]

_DIRECT_GET = b"$JS.API.DIRECT.GET"


class JetStream:
    """Streams of the (single, global) account and the ``$JS.API`` endpoint."""

    api_level = API_LEVEL

    def __init__(self, server: Server, clock: Clock | None = None) -> None:
        self.server = server
        self.clock: Clock = clock or SystemClock()
        self.domain = server.options.domain or ""
        self.streams: dict[str, Stream] = {}
        self._stream_subs: dict[str, list[Subscription]] = {}
        self._direct: dict[str, DirectGetResponder] = {}
        self.api_total = 0
        self.api_errors = 0
        self._api_sub = Subscription(InternalSubscriber(self._on_api), b"$JS.API.>", None, b"$JS.API")

    @property
    def server_name(self) -> str:
        return self.server.server_name

    def start(self) -> None:
        self.server.sublist.insert(self._api_sub)

    # --- replies ----------------------------------------------------------------------

    def send_reply(self, reply: bytes, payload: bytes, hdr: bytes = b"") -> None:
        """Publish a reply the way the server's internal client does."""
        if hdr:
            self.server.route(None, reply, None, len(hdr), hdr + payload)
        else:
            self.server.route(None, reply, None, -1, payload)

    # --- API dispatch -----------------------------------------------------------------

    def _on_api(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool | None:
        if subject.startswith(_DIRECT_GET):
            # Direct Get is served by the streams themselves, not by the API import (which
            # skips this byte prefix, so even ``$JS.API.DIRECT.GETX`` is left alone): a
            # stream that does not answer leaves the requester with no responders.
            return False
        text = subject.decode("utf-8", "replace")
        tokens = text.split(".")
        handler = find_handler(tokens[2:]) if text.startswith(API_PREFIX) else None
        if handler is None:
            return True  # taken (and dropped) by the API import, like the server
        if hdr > 0:
            headers, data = msg[:hdr], msg[hdr:]
        else:
            headers, data = b"", msg
        response = handler(self, ApiRequest(text, tokens, reply, headers, data))
        if response is None:
            return True
        if isinstance(response, bytes):  # sent directly, outside the API statistics
            body = response
        else:
            self.api_total += 1
            if "error" in response and not isinstance(response, QuietError):
                self.api_errors += 1
            body = dumps(response).encode()
        if reply:
            self.send_reply(reply, body)
        return True

    # --- streams ----------------------------------------------------------------------

    def lookup_config(self, name: str) -> StreamConfig | None:
        stream = self.streams.get(name)
        return stream.config if stream is not None else None

    def filtered_streams(self, subject: str) -> list[Stream]:
        if not subject:
            return list(self.streams.values())
        return [
            s for s in self.streams.values() if any(subjects_collide(subject, subj) for subj in s.config.subjects or [])
        ]

    def add_stream(self, config: StreamConfig, pedantic: bool = False) -> Stream:
        """``addStreamWithAssignment`` for a standalone server."""
        cfg = check_stream_config(config, self.lookup_config, pedantic)
        if cfg.num_replicas > 1:
            raise api_error("JSStreamReplicasNotSupportedErr")
        existing = self.streams.get(cfg.name)
        if existing is not None:
            copy_metadata(cfg, existing.config)
            if cfg == existing.config:
                return existing
            raise api_error("JSStreamNameExistErr")
        for other in self.streams.values():
            if any(subjects_collide(a, b) for a in cfg.subjects or [] for b in other.config.subjects or []):
                raise api_error("JSStreamSubjectOverlapErr")
        _check_transform(cfg)
        stream = Stream(self, cfg, self.clock.now_ns())
        self.streams[cfg.name] = stream
        self._subscribe(stream)
        self._sync_direct(stream)
        return stream

    def update_stream(self, stream: Stream, cfg: StreamConfig, pedantic: bool = False) -> None:
        """``configUpdateCheck`` then apply; ``cfg`` already passed ``check_stream_config``."""
        old = stream.config
        if cfg.name != old.name:
            raise _invalid("stream configuration name must match original")
        if cfg.num_replicas > 1:
            raise api_error("JSStreamReplicasNotSupportedErr")
        if cfg.storage != old.storage:
            raise _invalid("stream configuration update can not change storage type")
        if cfg.retention != old.retention and "workqueue" in (old.retention, cfg.retention):
            raise _invalid("stream configuration update can not change retention policy to/from workqueue")
        if not cfg.sealed and old.sealed:
            raise _invalid("stream configuration update can not unseal a sealed stream")
        if not cfg.deny_delete and old.deny_delete:
            raise _invalid("stream configuration update can not cancel deny message deletes")
        if not cfg.deny_purge and old.deny_purge:
            raise _invalid("stream configuration update can not cancel deny purge")
        if cfg.mirror is not None and cfg.mirror != old.mirror:
            raise api_error("JSStreamMirrorNotUpdatableErr")
        if old.allow_msg_ttl and not cfg.allow_msg_ttl:
            raise _invalid("message TTL status can not be disabled")
        if cfg.allow_msg_counter != old.allow_msg_counter:
            raise _invalid("stream configuration update can not change message counter setting")
        if old.allow_msg_schedules and not cfg.allow_msg_schedules:
            raise _invalid("message schedules can not be disabled")
        if (old.persist_mode or "default") != (cfg.persist_mode or "default"):
            raise _invalid("stream configuration update can not change persist mode")
        if cfg.sealed:
            cfg.max_age = 0
            cfg.discard = "new"
            cfg.deny_delete = cfg.deny_purge = True
            cfg.allow_rollup_hdrs = False
        for other in self.streams.values():
            if other is stream:
                continue
            if any(subjects_collide(a, b) for a in cfg.subjects or [] for b in other.config.subjects or []):
                raise api_error("JSStreamSubjectOverlapErr")
        _check_transform(cfg)
        stream.update_config(cfg)
        if cfg.retention == "interest" and old.retention != "interest" and stream.store.msgs:
            # Without consumers nothing has interest, so the server drops what is stored
            # (``checkInterestState`` after the update).
            stream.store.purge()
        if cfg.subjects != old.subjects:
            self._unsubscribe(stream)
            self._subscribe(stream)
        self._sync_direct(stream)

    def delete_stream(self, stream: Stream) -> None:
        self._unsubscribe(stream)
        responder = self._direct.pop(stream.name, None)
        if responder is not None:
            responder.unsubscribe()
        self.streams.pop(stream.name, None)

    def _sync_direct(self, stream: Stream) -> None:
        """Join or leave the Direct Get queue group as ``allow_direct`` says, at once."""
        responder = self._direct.get(stream.name)
        if stream.config.allow_direct and responder is None:
            responder = DirectGetResponder(self, stream)
            responder.subscribe()
            self._direct[stream.name] = responder
        elif not stream.config.allow_direct and responder is not None:
            responder.unsubscribe()
            del self._direct[stream.name]

    def _subscribe(self, stream: Stream) -> None:
        subs = []
        sid = b"$JS.STREAM." + stream.name.encode()
        for subject in stream.config.subjects or []:
            sub = Subscription(stream, subject.encode(), None, sid)
            if self.server.sublist.insert(sub):
                subs.append(sub)
        self._stream_subs[stream.name] = subs

    def _unsubscribe(self, stream: Stream) -> None:
        for sub in self._stream_subs.pop(stream.name, []):
            sub.closed = True
            self.server.sublist.remove(sub)


def _check_transform(cfg: StreamConfig) -> None:
    if cfg.subject_transform is None:
        return
    src, dest = cfg.subject_transform.get("src", ""), cfg.subject_transform.get("dest", "")
    try:
        SubjectTransform(src, dest)
    except TransformError as exc:
        raise api_error("JSStreamCreateErrF", err=f"stream subject transform from '{src}' to '{dest}': {exc}") from None


def _invalid(text: str) -> ApiError:
    return api_error("JSStreamInvalidConfigF", err=text)
