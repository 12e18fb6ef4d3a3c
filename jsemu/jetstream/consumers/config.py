"""Consumer configuration: decoding, the server's defaults and checks, and the echoed JSON.

``set_defaults`` is nats-server's ``setConsumerConfigDefaults`` and ``check_config`` its
``checkConsumerCfg``, step by step, so a bad config gets the same first error. ``config_json``
writes Go's ``ConsumerConfig`` fields in declaration order with their ``omitempty`` rules.
Fields jsemu does not implement yet are refused by ``refuse_unsupported`` (after the
server's own checks), never accepted and ignored.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, fields
from typing import Any

from ...protocol.go_duration import format_duration
from ...protocol.gojson import (
    GO_ZERO_TIME_NS,
    T_BOOL,
    T_DURATION,
    T_INT,
    T_STRING,
    T_TIME,
    T_UINT64,
    GoEnum,
    GoJSONError,
    GoMap,
    GoPointer,
    GoSlice,
    GoStruct,
    go_quote,
)
from ...subjects import is_valid_subject, subject_is_literal, subject_is_subset_match
from ...timefmt import format_ns
from ...version import API_LEVEL, NATS_VERSION
from ..errors import ApiError, ApiErrors, api_error
from ..streams.config import REQ_LEVEL_KEY, StreamConfig, is_valid_asset_name

__all__ = [
    "CREATE_CONSUMER_REQUEST",
    "ConsumerConfig",
    "check_config",
    "check_update",
    "config_from_request",
    "config_json",
    "filters_of",
    "refuse_unsupported",
    "set_defaults",
]

ACK_WAIT_DEFAULT = 30_000_000_000  # JsAckWaitDefault
MAX_ACK_PENDING_DEFAULT = 1000  # JsDefaultMaxAckPending
WAIT_QUEUE_DEFAULT_MAX = 512  # JSWaitQueueDefaultMax
MAX_DESCRIPTION_LEN = 4 * 1024
MAX_METADATA_LEN = 128 * 1024
MAX_NAME_LEN = 255
_MS = 1_000_000
_DYNAMIC_META = ("_nats.ver", "_nats.level")


def _enum(go_name: str, *names: str, extra: dict[str, str] | None = None) -> GoEnum:
    table = {f'"{n}"': n for n in names}
    table.update(extra or {})

    def parse(raw: str) -> str:
        if raw in table:
            return table[raw]
        raise GoJSONError(f"can not unmarshal {go_quote(raw)}")

    return GoEnum(go_name, parse)


def _action(raw: str) -> str:
    """``ConsumerAction.UnmarshalJSON``: the error shows the raw JSON text."""
    table = {'"create"': "create", '"update"': "update", '""': ""}
    if raw in table:
        return table[raw]
    raise GoJSONError("unknown consumer action: " + raw)


DELIVER_POLICY = _enum(
    "server.DeliverPolicy",
    "all",
    "last",
    "new",
    "by_start_sequence",
    "by_start_time",
    "last_per_subject",
    extra={'"undefined"': "all"},
)
ACK_POLICY = _enum("server.AckPolicy", "none", "all", "explicit", "flow_control")
REPLAY_POLICY = _enum("server.ReplayPolicy", "instant", "original")


def _priority_policy(raw: str) -> str:
    """``PriorityPolicy.UnmarshalJSON``: the error shows the raw JSON text."""
    name = raw[1:-1] if len(raw) > 1 and raw[0] == raw[-1] == '"' else ""
    if name in ("none", "overflow", "pinned_client", "prioritized"):
        return name
    raise GoJSONError("unknown priority policy: " + raw)


PRIORITY_POLICY = GoEnum("server.PriorityPolicy", _priority_policy)

CONSUMER_CONFIG = GoStruct(
    "ConsumerConfig",
    {
        "durable_name": T_STRING,
        "name": T_STRING,
        "description": T_STRING,
        "deliver_policy": DELIVER_POLICY,
        "opt_start_seq": T_UINT64,
        "opt_start_time": GoPointer(T_TIME),
        "ack_policy": ACK_POLICY,
        "ack_wait": T_DURATION,
        "max_deliver": T_INT,
        "backoff": GoSlice(T_DURATION),
        "filter_subject": T_STRING,
        "filter_subjects": GoSlice(T_STRING),
        "replay_policy": REPLAY_POLICY,
        "rate_limit_bps": T_UINT64,
        "sample_freq": T_STRING,
        "max_waiting": T_INT,
        "max_ack_pending": T_INT,
        "flow_control": T_BOOL,
        "headers_only": T_BOOL,
        "max_batch": T_INT,
        "max_expires": T_DURATION,
        "max_bytes": T_INT,
        "deliver_subject": T_STRING,
        "deliver_group": T_STRING,
        "idle_heartbeat": T_DURATION,
        "inactive_threshold": T_DURATION,
        "num_replicas": T_INT,
        "mem_storage": T_BOOL,
        "direct": T_BOOL,
        "sourcing": T_BOOL,
        "metadata": GoMap(T_STRING),
        "pause_until": GoPointer(T_TIME),
        "priority_groups": GoSlice(T_STRING),
        "priority_policy": PRIORITY_POLICY,
        "priority_timeout": T_DURATION,
    },
)

CREATE_CONSUMER_REQUEST = GoStruct(
    "CreateConsumerRequest",
    {
        "stream_name": T_STRING,
        "config": CONSUMER_CONFIG,
        "action": GoEnum("server.ConsumerAction", _action),
        "pedantic": T_BOOL,
    },
)


@dataclass
class ConsumerConfig:
    """Go's ``ConsumerConfig``; enum fields hold their JSON strings, durations nanoseconds,
    times Unix nanoseconds (None when unset)."""

    durable_name: str = ""
    name: str = ""
    description: str = ""
    deliver_policy: str = "all"
    opt_start_seq: int = 0
    opt_start_time: int | None = None
    ack_policy: str = "none"
    ack_wait: int = 0
    max_deliver: int = 0
    backoff: list[int] | None = None
    filter_subject: str = ""
    filter_subjects: list[str] | None = None
    replay_policy: str = "instant"
    rate_limit_bps: int = 0
    sample_freq: str = ""
    max_waiting: int = 0
    max_ack_pending: int = 0
    flow_control: bool = False
    headers_only: bool = False
    max_batch: int = 0
    max_expires: int = 0
    max_bytes: int = 0
    deliver_subject: str = ""
    deliver_group: str = ""
    idle_heartbeat: int = 0
    inactive_threshold: int = 0
    num_replicas: int = 0
    mem_storage: bool = False
    direct: bool = False
    sourcing: bool = False
    metadata: dict[str, str] | None = None
    pause_until: int | None = None
    priority_groups: list[str] | None = None
    priority_policy: str = "none"
    priority_timeout: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def clone(self) -> ConsumerConfig:
        return copy.deepcopy(self)


_FIELDS = {f.name for f in fields(ConsumerConfig)} - {"extra"}


def config_from_request(values: dict[str, Any]) -> ConsumerConfig:
    """The decoded ``config`` object (fields that were set) as a ConsumerConfig."""
    cfg = ConsumerConfig()
    for key, value in values.items():
        if key in _FIELDS:
            if value is None and key not in ("opt_start_time", "pause_until"):
                continue
            setattr(cfg, key, value)
    return cfg


def filters_of(cfg: ConsumerConfig) -> list[str]:
    """``gatherSubjectFilters``: the single filter or the list, without empties."""
    if cfg.filter_subject:
        return [cfg.filter_subject, *(cfg.filter_subjects or [])]
    return list(cfg.filter_subjects or [])


# --- setConsumerConfigDefaults ----------------------------------------------------------


def _pedantic(text: str) -> ApiError:
    return api_error(ApiErrors.JSPedanticErrF, err=text)


def set_defaults(cfg: ConsumerConfig, stream: StreamConfig, pedantic: bool, account_max_ack: int = -1) -> None:
    """``setConsumerConfigDefaults`` (no server or account limits are configured in jsemu)."""
    if cfg.max_deliver == 0 or cfg.max_deliver < -1:
        if pedantic and cfg.max_deliver < -1:
            raise _pedantic("max_deliver must be set to -1")
        cfg.max_deliver = -1
    negatives = (
        ("max_waiting", "max_waiting must not be negative"),
        ("max_batch", "max_batch must not be negative"),
        ("max_expires", "max_expires must not be negative"),
        ("max_bytes", "max_bytes must not be negative"),
        ("idle_heartbeat", "idle_heartbeat must not be negative"),
        ("inactive_threshold", "inactive_threshold must not be negative"),
        ("priority_timeout", "priority_timeout must not be negative"),
    )
    for key, text in negatives[:1]:
        if getattr(cfg, key) < 0:
            if pedantic:
                raise _pedantic(text)
            setattr(cfg, key, 0)
    if cfg.max_ack_pending < -1:
        if pedantic:
            raise _pedantic("max_ack_pending must be set to -1")
        cfg.max_ack_pending = -1
    for key, text in negatives[1:]:
        if getattr(cfg, key) < 0:
            if pedantic:
                raise _pedantic(text)
            setattr(cfg, key, 0)
    if not cfg.deliver_subject and cfg.max_waiting == 0:
        cfg.max_waiting = WAIT_QUEUE_DEFAULT_MAX
    if cfg.ack_wait == 0 and cfg.ack_policy in ("explicit", "all"):
        cfg.ack_wait = ACK_WAIT_DEFAULT
    if cfg.backoff:
        if pedantic and cfg.ack_wait != cfg.backoff[0]:
            raise _pedantic("first backoff value has to equal batch AckWait")
        cfg.ack_wait = cfg.backoff[0]
    limits = stream.consumer_limits or {}
    stream_max_ack = int(limits.get("max_ack_pending") or 0)
    stream_inactive = int(limits.get("inactive_threshold") or 0)
    if cfg.max_ack_pending == 0:
        if pedantic and stream_max_ack > 0:
            raise _pedantic("max_ack_pending must be set if it's configured in stream limits")
        cfg.max_ack_pending = stream_max_ack
    if cfg.inactive_threshold == 0:
        if pedantic and stream_inactive > 0:
            raise _pedantic("inactive_threshold must be set if it's configured in stream limits")
        cfg.inactive_threshold = stream_inactive
    if cfg.max_ack_pending == 0 and cfg.ack_policy != "none":
        # The account's max_ack_pending, when lower, is the default (Go ``setConsumerConfigDefaults``).
        cfg.max_ack_pending = (
            min(MAX_ACK_PENDING_DEFAULT, account_max_ack) if account_max_ack > 0 else MAX_ACK_PENDING_DEFAULT
        )
    if cfg.priority_policy == "pinned_client" and cfg.priority_timeout == 0:
        cfg.priority_timeout = 120_000_000_000
    if cfg.ack_policy == "flow_control" and not pedantic:
        cfg.flow_control = True
        cfg.idle_heartbeat = 1_000_000_000


# --- checkConsumerCfg -------------------------------------------------------------------

_GROUP_NAME = re.compile(r"^[a-zA-Z0-9/_=-]{1,16}$")


def _invalid(text: str) -> ApiError:
    return api_error(ApiErrors.JSStreamInvalidConfigF, err=text)


def _policy(text: str) -> ApiError:
    return api_error(ApiErrors.JSConsumerInvalidPolicyErrF, err=text)


def check_config(cfg: ConsumerConfig, stream: StreamConfig, account_max_ack: int = -1) -> None:
    """``checkConsumerCfg`` for a standalone server without configured limits."""
    if cfg.name and not is_valid_asset_name(cfg.name):
        raise _invalid("consumer name can not contain '.', '*', '>', '\\', '/'")
    if cfg.durable_name and not is_valid_asset_name(cfg.durable_name):
        raise _invalid("consumer durable name can not contain '.', '*', '>', '\\', '/'")
    if cfg.num_replicas > 0 and cfg.num_replicas > stream.num_replicas:
        raise api_error(ApiErrors.JSConsumerReplicasExceedsStream)
    if cfg.num_replicas < 0:
        raise api_error(ApiErrors.JSReplicasCountCannotBeNegative)
    if stream.retention in ("interest", "workqueue") and cfg.num_replicas not in (0, stream.num_replicas):
        raise api_error(ApiErrors.JSConsumerReplicasShouldMatchStream)
    if any(b < 0 for b in cfg.backoff or []):
        raise api_error(ApiErrors.JSConsumerBackOffNegativeErr)
    if cfg.ack_wait < 0:
        raise api_error(ApiErrors.JSConsumerAckWaitNegativeErr)
    if cfg.ack_policy == "flow_control":
        if not cfg.deliver_subject:
            raise api_error(ApiErrors.JSConsumerAckFCRequiresPushErr)
        if not cfg.flow_control:
            raise api_error(ApiErrors.JSConsumerAckFCRequiresFCErr)
        if cfg.idle_heartbeat != 1_000_000_000:
            raise _invalid("flow control ack policy heartbeat needs to be 1s")
        if cfg.max_ack_pending <= 0:
            raise api_error(ApiErrors.JSConsumerAckFCRequiresMaxAckPendingErr)
        if cfg.ack_wait != 0 or cfg.backoff:
            raise api_error(ApiErrors.JSConsumerAckFCRequiresNoAckWaitErr)
        if cfg.max_deliver > 0:
            raise api_error(ApiErrors.JSConsumerAckFCRequiresNoMaxDeliverErr)
    if cfg.backoff and cfg.max_deliver != -1 and len(cfg.backoff) > cfg.max_deliver:
        raise api_error(ApiErrors.JSConsumerMaxDeliverBackoffErr)
    if len(cfg.description.encode()) > MAX_DESCRIPTION_LEN:
        raise api_error(ApiErrors.JSConsumerDescriptionTooLongErrF, max=MAX_DESCRIPTION_LEN)
    if cfg.deliver_subject:
        if not subject_is_literal(cfg.deliver_subject):
            raise api_error(ApiErrors.JSConsumerDeliverToWildcardsErr)
        if not is_valid_subject(cfg.deliver_subject):
            raise api_error(ApiErrors.JSConsumerInvalidDeliverSubject)
        if any(subject_is_subset_match(cfg.deliver_subject, s) for s in stream.subjects or []):
            raise api_error(ApiErrors.JSConsumerDeliverCycleErr)
        if cfg.max_waiting != 0:
            raise api_error(ApiErrors.JSConsumerPushMaxWaitingErr)
        if cfg.max_ack_pending > 0 and cfg.ack_policy == "none":
            raise api_error(ApiErrors.JSConsumerMaxPendingAckPolicyRequiredErr)
        if 0 < cfg.idle_heartbeat < 100 * _MS:
            raise api_error(ApiErrors.JSConsumerSmallHeartbeatErr)
    else:
        if cfg.ack_policy == "none" and stream.retention == "workqueue":
            raise api_error(ApiErrors.JSConsumerPullRequiresAckErr)
        if cfg.rate_limit_bps > 0:
            raise api_error(ApiErrors.JSConsumerPullWithRateLimitErr)
        if cfg.max_waiting < 0:
            raise api_error(ApiErrors.JSConsumerMaxWaitingNegativeErr)
        if cfg.idle_heartbeat > 0:
            raise api_error(ApiErrors.JSConsumerHBRequiresPushErr)
        if cfg.flow_control:
            raise api_error(ApiErrors.JSConsumerFCRequiresPushErr)
        if cfg.max_batch < 0:
            raise api_error(ApiErrors.JSConsumerMaxRequestBatchNegativeErr)
        if cfg.max_expires != 0 and cfg.max_expires < _MS:
            raise api_error(ApiErrors.JSConsumerMaxRequestExpiresTooSmall)
    limits = stream.consumer_limits or {}
    stream_max_ack = int(limits.get("max_ack_pending") or 0)
    stream_inactive = int(limits.get("inactive_threshold") or 0)
    if account_max_ack > 0 and cfg.max_ack_pending > account_max_ack:
        raise api_error(ApiErrors.JSConsumerMaxPendingAckExcessErrF, limit=account_max_ack)
    if stream_max_ack > 0 and cfg.max_ack_pending > stream_max_ack:
        raise api_error(ApiErrors.JSConsumerMaxPendingAckExcessErrF, limit=stream_max_ack)
    if stream_inactive > 0 and cfg.inactive_threshold > stream_inactive:
        raise api_error(ApiErrors.JSConsumerInactiveThresholdExcess, limit=format_duration(stream_inactive))
    if cfg.direct:
        if not cfg.deliver_subject:
            raise api_error(ApiErrors.JSConsumerDirectRequiresPushErr)
        if cfg.durable_name:
            raise api_error(ApiErrors.JSConsumerDirectRequiresEphemeralErr)
    if cfg.filter_subject and cfg.filter_subjects:
        raise api_error(ApiErrors.JSConsumerDuplicateFilterSubjects)
    if cfg.filter_subject and not is_valid_subject(cfg.filter_subject):
        raise _invalid("invalid subject")
    if any(f == "" for f in cfg.filter_subjects or []):
        raise api_error(ApiErrors.JSConsumerEmptyFilter)
    filters = filters_of(cfg)
    for i, subject in enumerate(filters):
        if not is_valid_subject(subject):
            raise _invalid("invalid subject")
        for j, other in enumerate(filters):
            if i != j and subject_is_subset_match(subject, other):
                raise api_error(ApiErrors.JSConsumerOverlappingSubjectFilters)
    _check_start(cfg)
    if cfg.sample_freq:
        text = cfg.sample_freq.removesuffix("%")
        try:
            ok = int(text) >= 0 and text.strip() == text and text.lstrip("+-").isdigit()
        except ValueError:
            ok = False
        if not ok:
            raise api_error(
                ApiErrors.JSConsumerInvalidSamplingErrF, err=f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax"
            )
    if cfg.flow_control and cfg.idle_heartbeat == 0:
        raise api_error(ApiErrors.JSConsumerWithFlowControlNeedsHeartbeats)
    if cfg.durable_name and cfg.name and cfg.name != cfg.durable_name:
        raise api_error(ApiErrors.JSConsumerCreateDurableAndNameMismatch)
    if sum(len(k.encode()) + len(v.encode()) for k, v in (cfg.metadata or {}).items()) > MAX_METADATA_LEN:
        raise api_error(ApiErrors.JSConsumerMetadataLengthErrF, limit=f"{MAX_METADATA_LEN // 1024}KB")
    if cfg.priority_policy != "none":
        if cfg.deliver_subject:
            raise api_error(ApiErrors.JSConsumerPushWithPriorityGroupErr)
        if not cfg.priority_groups:
            raise api_error(ApiErrors.JSConsumerPriorityPolicyWithoutGroup)
        for group in cfg.priority_groups:
            if not group:
                raise api_error(ApiErrors.JSConsumerEmptyGroupName)
            if not _GROUP_NAME.match(group):
                raise api_error(ApiErrors.JSConsumerInvalidGroupNameErr)
    else:
        if cfg.priority_groups:
            raise api_error(ApiErrors.JSConsumerPriorityGroupWithPolicyNone)
        if cfg.priority_timeout > 0:
            raise api_error(ApiErrors.JSConsumerPinnedTTLWithoutPriorityPolicyNone)


def _check_start(cfg: ConsumerConfig) -> None:
    def bad_start(dp: str, start: str) -> ApiError:
        return _policy(f"consumer delivery policy is deliver {dp}, but optional start {start} is also set")

    def not_set(dp: str, what: str) -> ApiError:
        return _policy(f"consumer delivery policy is deliver {dp}, but optional {what} is not set")

    dp = cfg.deliver_policy
    words = {"all": "all", "last": "last", "last_per_subject": "last per subject", "new": "new"}
    if dp in words:
        if cfg.opt_start_seq > 0:
            raise bad_start(words[dp], "sequence")
        if cfg.opt_start_time is not None:
            raise bad_start(words[dp], "time")
        if dp == "last_per_subject" and not filters_of(cfg):
            raise not_set("last per subject", "filter subject")
    elif dp == "by_start_sequence":
        if cfg.opt_start_seq == 0:
            raise not_set("by start sequence", "start sequence")
        if cfg.opt_start_time is not None:
            raise bad_start("by start sequence", "time")
    elif dp == "by_start_time":
        if cfg.opt_start_time is None:
            raise not_set("by start time", "start time")
        if cfg.opt_start_seq != 0:
            raise bad_start("by start time", "start sequence")


#: Config fields jsemu's consumers do not implement yet, with the value that means "unset".
_UNSUPPORTED: tuple[tuple[str, Any, str], ...] = (
    ("direct", False, "direct"),
    ("sourcing", False, "sourcing"),
)


def refuse_unsupported(cfg: ConsumerConfig, stream: StreamConfig) -> None:
    """A config that passed the server's checks but asks for what jsemu cannot do yet
    gets a clear error instead of being accepted and ignored."""
    for key, unset, what in _UNSUPPORTED:
        value = getattr(cfg, key)
        if value != unset:
            raise api_error(ApiErrors.JSConsumerCreateErrF, err=f"jsemu does not support {what} on consumers yet")


# --- updates (checkNewConsumerConfig) ---------------------------------------------------


def check_update(old: ConsumerConfig, new: ConsumerConfig) -> None:
    """What an update may not change, in the server's order."""
    if _comparable(old) == _comparable(new):
        return
    rules = (
        ("deliver_policy", "deliver policy can not be updated"),
        ("mem_storage", "storage type can not be updated"),
        ("direct", "direct can not be updated"),
        ("sourcing", "sourcing can not be updated"),
        ("opt_start_seq", "start sequence can not be updated"),
        ("opt_start_time", "start time can not be updated"),
        ("ack_policy", "ack policy can not be updated"),
        ("replay_policy", "replay policy can not be updated"),
        ("idle_heartbeat", "heart beats can not be updated"),
        ("flow_control", "flow control can not be updated"),
    )
    for key, text in rules:
        if getattr(old, key) != getattr(new, key):
            raise api_error(ApiErrors.JSConsumerCreateErrF, err=text)
    if old.deliver_subject != new.deliver_subject:
        if not old.deliver_subject:
            raise api_error(ApiErrors.JSConsumerCreateErrF, err="can not update pull consumer to push based")
        if not new.deliver_subject:
            raise api_error(ApiErrors.JSConsumerCreateErrF, err="can not update push consumer to pull based")
    if old.max_waiting != new.max_waiting:
        raise api_error(ApiErrors.JSConsumerCreateErrF, err="max waiting can not be updated")
    if new.backoff and new.max_deliver != -1 and len(new.backoff) > new.max_deliver:
        raise api_error(ApiErrors.JSConsumerMaxDeliverBackoffErr)


def _comparable(cfg: ConsumerConfig) -> tuple[Any, ...]:
    return tuple(getattr(cfg, name) for name in sorted(_FIELDS))


def same_config(a: ConsumerConfig, b: ConsumerConfig) -> bool:
    """``reflect.DeepEqual`` of two configs (nil and empty slices/maps differ, as in Go)."""
    return _comparable(a) == _comparable(b)


# --- metadata ---------------------------------------------------------------------------


def set_static_metadata(cfg: ConsumerConfig) -> None:
    """``setStaticConsumerMetadata``: the API level the config's features need."""
    meta = dict(cfg.metadata or {})
    for key in _DYNAMIC_META:
        meta.pop(key, None)
    level = 0
    if (
        cfg.pause_until not in (None, GO_ZERO_TIME_NS)
        or cfg.priority_policy != "none"
        or cfg.priority_timeout
        or cfg.priority_groups
    ):
        level = 1
    if cfg.ack_policy == "flow_control":
        level = 4
    meta[REQ_LEVEL_KEY] = str(level)
    cfg.metadata = meta


def copy_metadata(cfg: ConsumerConfig, prev: ConsumerConfig) -> None:
    """``copyConsumerMetadata``: keep the stored required level when comparing."""
    if cfg.metadata is not None:
        for key in _DYNAMIC_META:
            cfg.metadata.pop(key, None)
    if prev.metadata is not None and REQ_LEVEL_KEY in prev.metadata:
        if cfg.metadata is None:
            cfg.metadata = {}
        cfg.metadata[REQ_LEVEL_KEY] = prev.metadata[REQ_LEVEL_KEY]
        return
    if cfg.metadata is not None:
        cfg.metadata.pop(REQ_LEVEL_KEY, None)
        if not cfg.metadata:
            cfg.metadata = None


# --- JSON -------------------------------------------------------------------------------


def config_json(cfg: ConsumerConfig, dynamic_metadata: bool = True) -> dict[str, Any]:
    """Go's ``ConsumerConfig`` JSON: declaration order, ``omitempty`` where Go has it."""
    out: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if value:
            out[key] = value

    put("durable_name", cfg.durable_name)
    put("name", cfg.name)
    put("description", cfg.description)
    out["deliver_policy"] = cfg.deliver_policy
    put("opt_start_seq", cfg.opt_start_seq)
    if cfg.opt_start_time is not None:
        out["opt_start_time"] = format_ns(cfg.opt_start_time)
    out["ack_policy"] = cfg.ack_policy
    put("ack_wait", cfg.ack_wait)
    put("max_deliver", cfg.max_deliver)
    put("backoff", cfg.backoff)
    put("filter_subject", cfg.filter_subject)
    put("filter_subjects", cfg.filter_subjects)
    out["replay_policy"] = cfg.replay_policy
    put("rate_limit_bps", cfg.rate_limit_bps)
    put("sample_freq", cfg.sample_freq)
    put("max_waiting", cfg.max_waiting)
    put("max_ack_pending", cfg.max_ack_pending)
    put("flow_control", cfg.flow_control)
    put("headers_only", cfg.headers_only)
    put("max_batch", cfg.max_batch)
    put("max_expires", cfg.max_expires)
    put("max_bytes", cfg.max_bytes)
    put("deliver_subject", cfg.deliver_subject)
    put("deliver_group", cfg.deliver_group)
    put("idle_heartbeat", cfg.idle_heartbeat)
    put("inactive_threshold", cfg.inactive_threshold)
    out["num_replicas"] = cfg.num_replicas
    put("mem_storage", cfg.mem_storage)
    put("direct", cfg.direct)
    put("sourcing", cfg.sourcing)
    metadata = dict(cfg.metadata or {})
    if dynamic_metadata:
        metadata["_nats.ver"] = NATS_VERSION
        metadata["_nats.level"] = str(API_LEVEL)
    if metadata:
        out["metadata"] = dict(sorted(metadata.items()))
    if cfg.pause_until is not None:
        out["pause_until"] = format_ns(cfg.pause_until)
    put("priority_groups", cfg.priority_groups)
    if cfg.priority_policy != "none":
        out["priority_policy"] = cfg.priority_policy
    put("priority_timeout", cfg.priority_timeout)
    return out
