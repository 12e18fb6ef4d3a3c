"""An account's JetStream count limits (``max_streams``, ``max_consumers``,
``max_ack_pending``), enforced as nats-server 2.15.1 does (side by side:
``tests/jetstream/limits/test_account_js_limits.py``); its byte limits are in ``storage.py``.

* ``max_streams``: a create of a new stream once the account has that many gets 10027 (a
  create repeating an existing stream's config is no new stream);
* ``max_consumers`` holds for each stream, not the account (Go ``addConsumer``): a stream's
  own ``max_consumers`` counts only when it is lower, and a stream may not ask for more
  than the account's (10026, at create and update);
* ``max_ack_pending`` caps a consumer's default and refuses a larger one (10121).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ApiError, ApiErrors, api_error
from .storage import create_error as storage_create_error

if TYPE_CHECKING:
    from .storage import AccountStreams, HasLimits, LimitedConfig

__all__ = ["consumer_limit", "stream_count_error", "stream_limits_error"]


def stream_limits_error(js: AccountStreams, cfg: LimitedConfig, old: LimitedConfig | None = None) -> ApiError | None:
    """Go ``jsNonClusteredStreamLimitsCheck`` (a create) or the limits part of
    ``configUpdateCheck`` (an update of ``old``): streams, then consumers, then bytes."""
    limits = js.limits.tier(cfg.num_replicas)
    if limits is None:  # an update too is refused without the stream's tier
        return api_error(ApiErrors.JSNoLimitsErr)
    if old is None:
        over = stream_count_error(js, cfg.name, cfg.num_replicas)
        if over is not None:
            return over
    if cfg.max_consumers > 0 and 0 < limits.max_consumers < cfg.max_consumers:
        return api_error(ApiErrors.JSMaximumConsumersLimitErr)
    return storage_create_error(js, cfg, old)


def stream_count_error(js: AccountStreams, name: str, replicas: int) -> ApiError | None:
    """The first part of Go ``jsNonClusteredStreamLimitsCheck``, which the API handler runs on
    a create before it checks the config: the stream's tier (10120 when the account's limits
    per tier have none for ``replicas``), then the stream count."""
    limits = js.limits.tier(replicas)
    if limits is None:
        return api_error(ApiErrors.JSNoLimitsErr)
    if limits.max_streams <= 0:
        return None
    # Go ``countStreams``: under limits per tier, only the streams of the same replica count
    tier = max(1, replicas)
    same = (s for s in js.streams.values() if not js.limits.tiers or max(1, s.config.num_replicas) == tier)
    if sum(1 for s in same if s.name != name) >= limits.max_streams:
        return api_error(ApiErrors.JSMaximumStreamsLimitErr)
    return None


def consumer_limit(js: HasLimits, stream_max: int) -> int:
    """How many consumers a stream with ``max_consumers: stream_max`` may have (<= 0: any)."""
    account_max = js.limits.max_consumers
    if stream_max <= 0 or 0 < account_max < stream_max:
        return account_max
    return stream_max
