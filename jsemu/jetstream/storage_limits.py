"""The server's JetStream storage limits (``max_memory_store`` / ``max_file_store``), enforced
as nats-server 2.15.1 does (observed side by side, ``tests/jsapi/test_storage_limits.py``):

* at stream create, the ``max_bytes`` reserved by the streams of that storage plus the new
  stream's (``max_bytes`` times its replicas, 1 when unset) may not pass the limit: error
  10047 (file) or 10028 (memory) (Go ``checkBytesLimits``);
* at publish, a stream whose storage already holds more bytes than the limit refuses the
  message with 10023 ``insufficient resources`` (Go ``limitsExceeded``, checked before the
  message is stored, so the last message stored may pass the limit).

A limit of -1 (the default: 75% of memory or disk in nats-server) is not enforced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ApiError, ApiErrors, api_error

if TYPE_CHECKING:
    from .service import JetStream
    from .stream_config import StreamConfig

__all__ = ["create_error", "limit_for", "publish_error"]


def limit_for(js: JetStream, storage: str) -> int:
    options = js.server.options
    return options.max_memory_store if storage == "memory" else options.max_file_store


def create_error(js: JetStream, cfg: StreamConfig) -> ApiError | None:
    """The error a create of ``cfg`` gets for want of storage, else None."""
    storage = cfg.storage or "file"
    limit = limit_for(js, storage)
    if limit < 0:
        return None
    replicas = max(1, cfg.num_replicas)
    reserved = sum(
        s.config.max_bytes * max(1, s.config.num_replicas)
        for s in js.streams.values()
        if (s.config.storage or "file") == storage and s.config.max_bytes > 0
    )
    add = cfg.max_bytes * replicas if cfg.max_bytes > 0 else 1
    if reserved + add <= limit:
        return None
    if storage == "memory":
        return api_error(ApiErrors.JSMemoryResourcesExceededErr)
    return api_error(ApiErrors.JSStorageResourcesExceededErr)


def publish_error(js: JetStream, storage: str) -> ApiError | None:
    """The error a publish to a stream of ``storage`` gets when that storage is full."""
    limit = limit_for(js, storage)
    if limit < 0:
        return None
    used = sum(s.store.bytes for s in js.streams.values() if (s.config.storage or "file") == storage)
    return api_error(ApiErrors.JSInsufficientResourcesErr) if used > limit else None
