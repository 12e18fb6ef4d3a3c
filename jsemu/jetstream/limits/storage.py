"""JetStream storage limits, the server's (``jetstream { max_mem, max_file }``) and each
account's (``accounts { A: { jetstream: { max_mem, max_file, ... } } }``), enforced as
nats-server 2.15.1 does (observed side by side, ``tests/jetstream/limits/test_storage_limits.py``
and ``tests/jetstream/limits/test_account_js_limits.py``):

* at stream create, the ``max_bytes`` reserved by the streams of that storage plus the
  stream's own (``max_bytes`` times its replicas, 1 when unset) may not pass the account's
  limit (a stream of the same name left out), then the server's (summed over every
  account, a stream of the same name kept in: a repeated create can be refused): error
  10028 (memory) or 10047 (file) (Go ``checkBytesLimits``); an update reserves only the
  bytes it adds on the server;
* at publish, a storage of the server already holding more bytes than its limit refuses the
  message with 10023 ``insufficient resources`` (Go ``limitsExceeded``: the last message
  stored may pass the limit); then an account whose usage plus this message would pass its
  limit refuses it with 10002 (Go ``wouldExceedLimits``). The account's
  ``*_max_stream_bytes`` hold only for a stream's ``max_bytes`` (``streams/config.py``): on
  the binary, a stream without ``max_bytes`` grows past them.

A limit of -1 (the server's default: 75% of memory or disk in nats-server) is not enforced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from ..context import HasServer
from ..errors import ApiError, ApiErrors, api_error

if TYPE_CHECKING:
    from ...server.js_limits import JetStreamLimits
    from ...server.options import ServerOptions
    from ...store import Store

__all__ = [
    "AccountStreams",
    "HasLimits",
    "LimitedConfig",
    "LimitedStream",
    "accounts_fit",
    "checks_publish",
    "create_error",
    "limit_for",
    "publish_error",
]


class LimitedConfig(Protocol):
    """What the limits read of a stream's config (``StreamConfig``)."""

    @property
    def name(self) -> str: ...

    storage: str

    max_bytes: int

    num_replicas: int

    max_consumers: int


class LimitedStream(Protocol):
    """What the limits read of a stream (``Stream``): its config and its store's bytes."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> LimitedConfig: ...

    store: Store


class HasLimits(Protocol):
    """An account's JetStream limits (``JetStream.limits``)."""

    limits: JetStreamLimits


class AccountStreams(HasLimits, HasServer, Protocol):
    """What the limits read of an account's JetStream (``JetStream``): its limits, its streams,
    every account's on the server (the server's limits hold for them all) and the server's
    options."""

    @property
    def streams(self) -> Mapping[str, LimitedStream]: ...

    @property
    def all_jetstreams(self) -> Mapping[str, AccountStreams]: ...


def limit_for(js: AccountStreams, storage: str) -> int:
    """The server's limit for ``storage`` ("memory" or "file"); -1: none."""
    options = js.server.options
    return options.max_memory_store if storage == "memory" else options.max_file_store


def checks_publish(js: AccountStreams, storage: str) -> bool:
    """Whether a publish to a stream of ``storage`` must be checked against a limit (a stream
    without one keeps the fast path)."""
    return limit_for(js, storage) >= 0 or js.limits.max_bytes(storage) >= 0


def _storage(cfg: LimitedConfig) -> str:
    return cfg.storage or "file"


def _reserved(streams: Iterable[LimitedStream], storage: str, skip: str = "") -> int:
    return sum(
        s.config.max_bytes * max(1, s.config.num_replicas)
        for s in streams
        if _storage(s.config) == storage and s.config.max_bytes > 0 and s.name != skip
    )


def create_error(js: AccountStreams, cfg: LimitedConfig, old: LimitedConfig | None = None) -> ApiError | None:
    """The error a create of ``cfg`` (or an update of ``old`` to it) gets for want of storage."""
    storage = _storage(cfg)
    replicas = max(1, cfg.num_replicas)
    if old is None:
        add = server_add = cfg.max_bytes * replicas if cfg.max_bytes > 0 else 1
    else:  # an update reserves only what it adds (Go ``configUpdateCheck``)
        add = max(0, cfg.max_bytes) * replicas
        server_add = max(0, cfg.max_bytes - max(0, old.max_bytes)) * replicas
    error = ApiErrors.JSMemoryResourcesExceededErr if storage == "memory" else ApiErrors.JSStorageResourcesExceededErr
    tiered = bool(js.limits.tiers)  # limits per tier: the stream's tier, its streams only
    account_limit = (js.limits.tier(replicas) or js.limits).max_bytes(storage)
    streams = [s for s in js.streams.values() if not tiered or max(1, s.config.num_replicas) == replicas]
    if account_limit >= 0 and _reserved(streams, storage, skip=cfg.name) + add > account_limit:
        return api_error(error)
    limit = limit_for(js, storage)
    if (
        limit >= 0
        and sum(_reserved(j.streams.values(), storage) for j in js.all_jetstreams.values()) + server_add > limit
    ):
        return api_error(error)
    return None


def _used(js: AccountStreams, storage: str) -> int:
    return sum(s.store.bytes for s in js.streams.values() if _storage(s.config) == storage)


def publish_error(
    js: AccountStreams, stream: LimitedStream, subject: bytes, hdr: bytes, data: bytes
) -> ApiError | None:
    """The error a publish of this message to ``stream`` gets when its storage is full."""
    storage = _storage(stream.config)
    limit = limit_for(js, storage)
    if limit >= 0 and sum(_used(j, storage) for j in js.all_jetstreams.values()) > limit:
        return api_error(ApiErrors.JSInsufficientResourcesErr)
    account_limit = js.limits.max_bytes(storage)
    if account_limit < 0:
        return None
    total = _used(js, storage) + stream.store.msg_size(subject, hdr, data) * max(1, stream.config.num_replicas)
    return api_error(ApiErrors.JSAccountResourcesExceededErr) if total > account_limit else None


def accounts_fit(options: ServerOptions) -> ApiError | None:
    """nats-server's check when it enables JetStream for the configured accounts: their
    ``max_mem`` then ``max_file``, added up account by account, may not pass the server's
    limits (else it does not start: 10028 or 10047)."""
    memory = storage = 0
    for account in options.accounts:
        if not account.jetstream:
            continue
        memory += max(0, account.limits.max_memory)
        if options.max_memory_store >= 0 and memory > options.max_memory_store:
            return api_error(ApiErrors.JSMemoryResourcesExceededErr)
        storage += max(0, account.limits.max_storage)
        if options.max_file_store >= 0 and storage > options.max_file_store:
            return api_error(ApiErrors.JSStorageResourcesExceededErr)
    return None
