"""Stream configuration: decoding, the server's defaults and checks, and the echoed JSON.

``check_stream_config`` follows nats-server's ``checkStreamCfgLocked`` step by step, so
the first failing rule gives the same error as the real server. ``config_json`` writes
the fields in the order and with the ``omitempty`` rules of Go's ``StreamConfig``.
Nested objects (placement, mirror, sources, transforms, republish) stay plain dicts of
the fields that were set.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...ids import get_hash
from ...server.js_limits import UNLIMITED, JetStreamLimits
from ...subject_transform import SubjectTransform, TransformError
from ...subjects import (
    is_valid_literal_subject,
    is_valid_subject,
    subject_is_literal,
    subject_is_subset_match,
    subjects_collide,
)
from ...timefmt import format_ns
from ...version import API_LEVEL, NATS_VERSION
from ..errors import ApiError, ApiErrors, api_error
from ..links.sources import compose_iname

__all__ = [
    "DEFAULT_DUPLICATE_WINDOW",
    "StreamConfig",
    "check_stream_config",
    "config_from_request",
    "config_json",
    "is_valid_asset_name",
]

DEFAULT_DUPLICATE_WINDOW = 120_000_000_000  # StreamDefaultDuplicatesWindow, 2 minutes
MAX_NAME_LEN = 255
MAX_DESCRIPTION_LEN = 4 * 1024
MAX_METADATA_LEN = 128 * 1024
MAX_REPLICAS = 5
_MS100 = 100_000_000
REQ_LEVEL_KEY = "_nats.req.level"
_DYNAMIC_META = ("_nats.ver", "_nats.level")


def is_valid_asset_name(name: str) -> bool:
    """``isValidAssetName``: non-empty, no whitespace, ``.``, ``*``, ``>``, ``\\`` or ``/``."""
    return bool(name) and not any(ch in name for ch in " \t\r\n\f.*>\\/")


@dataclass
class StreamConfig:
    """Go's ``StreamConfig``; enum fields hold their JSON strings."""

    name: str = ""
    description: str = ""
    subjects: list[str] | None = None
    retention: str = "limits"
    max_consumers: int = 0
    max_msgs: int = 0
    max_bytes: int = 0
    max_age: int = 0
    max_msgs_per_subject: int = 0
    max_msg_size: int = 0
    discard: str = "old"
    storage: str = ""  # "" until normalised to "file"
    num_replicas: int = 0
    no_ack: bool = False
    duplicate_window: int = 0
    placement: dict[str, Any] | None = None
    mirror: dict[str, Any] | None = None
    sources: list[dict[str, Any] | None] | None = None
    compression: str = "none"
    first_seq: int = 0
    subject_transform: dict[str, Any] | None = None
    republish: dict[str, Any] | None = None
    allow_direct: bool = False
    mirror_direct: bool = False
    discard_new_per_subject: bool = False
    sealed: bool = False
    deny_delete: bool = False
    deny_purge: bool = False
    allow_rollup_hdrs: bool = False
    consumer_limits: dict[str, Any] = field(default_factory=dict)
    allow_msg_ttl: bool = False
    subject_delete_marker_ttl: int = 0
    allow_msg_counter: bool = False
    allow_atomic: bool = False
    allow_msg_schedules: bool = False
    persist_mode: str = ""
    allow_batched: bool = False
    metadata: dict[str, str] | None = None

    def clone(self) -> StreamConfig:
        return copy.deepcopy(self)


_FIELDS = frozenset(StreamConfig.__dataclass_fields__)


def config_from_request(values: dict[str, Any]) -> tuple[StreamConfig, bool]:
    """Build a config from decoded request fields (``None`` means JSON null); returns it
    and the request's ``pedantic`` flag."""
    cfg = StreamConfig()
    for key, value in values.items():
        if key in _FIELDS:
            if value is None:
                # null sets pointers, slices and maps to nil and leaves scalars alone.
                if key in ("subjects", "placement", "mirror", "sources", "subject_transform", "republish", "metadata"):
                    setattr(cfg, key, None)
                continue
            setattr(cfg, key, value)
    return cfg, bool(values.get("pedantic"))


# --- the echoed JSON ------------------------------------------------------------------


def _omit(out: dict[str, Any], key: str, value: Any) -> None:
    if value:
        out[key] = value


def _transform_json(t: dict[str, Any]) -> dict[str, Any]:
    return {"src": t.get("src", ""), "dest": t.get("dest", "")}


def _source_json(src: dict[str, Any] | None) -> dict[str, Any] | None:
    if src is None:
        return None
    out: dict[str, Any] = {"name": src.get("name", "")}
    _omit(out, "opt_start_seq", src.get("opt_start_seq"))
    if src.get("opt_start_time") is not None:
        start = src["opt_start_time"]
        out["opt_start_time"] = format_ns(start, getattr(start, "offset", 0))
    _omit(out, "filter_subject", src.get("filter_subject"))
    if src.get("subject_transforms"):
        out["subject_transforms"] = [_transform_json(t or {}) for t in src["subject_transforms"]]
    if src.get("external") is not None:
        ext = src["external"]
        out["external"] = {"api": ext.get("api", ""), "deliver": ext.get("deliver", "")}
    if src.get("consumer") is not None:
        con: dict[str, Any] = {}
        _omit(con, "name", src["consumer"].get("name"))
        _omit(con, "deliver_subject", src["consumer"].get("deliver_subject"))
        out["consumer"] = con
    return out


def config_json(cfg: StreamConfig, dynamic_metadata: bool = True) -> dict[str, Any]:
    """The config as the server echoes it (``setDynamicStreamMetadata`` adds version keys)."""
    out: dict[str, Any] = {"name": cfg.name}
    _omit(out, "description", cfg.description)
    _omit(out, "subjects", cfg.subjects)
    out["retention"] = cfg.retention
    out["max_consumers"] = cfg.max_consumers
    out["max_msgs"] = cfg.max_msgs
    out["max_bytes"] = cfg.max_bytes
    out["max_age"] = cfg.max_age
    out["max_msgs_per_subject"] = cfg.max_msgs_per_subject
    _omit(out, "max_msg_size", cfg.max_msg_size)
    out["discard"] = cfg.discard
    out["storage"] = cfg.storage or "file"
    out["num_replicas"] = cfg.num_replicas
    _omit(out, "no_ack", cfg.no_ack)
    _omit(out, "duplicate_window", cfg.duplicate_window)
    if cfg.placement is not None:
        placement: dict[str, Any] = {}
        _omit(placement, "cluster", cfg.placement.get("cluster"))
        _omit(placement, "tags", cfg.placement.get("tags"))
        _omit(placement, "preferred", cfg.placement.get("preferred"))
        out["placement"] = placement
    if cfg.mirror is not None:
        out["mirror"] = _source_json(cfg.mirror)
    if cfg.sources:
        out["sources"] = [_source_json(s) for s in cfg.sources]
    out["compression"] = cfg.compression
    _omit(out, "first_seq", cfg.first_seq)
    if cfg.subject_transform is not None:
        out["subject_transform"] = _transform_json(cfg.subject_transform)
    if cfg.republish is not None:
        rp: dict[str, Any] = {}
        _omit(rp, "src", cfg.republish.get("src"))
        rp["dest"] = cfg.republish.get("dest", "")
        _omit(rp, "headers_only", cfg.republish.get("headers_only"))
        out["republish"] = rp
    out["allow_direct"] = cfg.allow_direct
    out["mirror_direct"] = cfg.mirror_direct
    _omit(out, "discard_new_per_subject", cfg.discard_new_per_subject)
    out["sealed"] = cfg.sealed
    out["deny_delete"] = cfg.deny_delete
    out["deny_purge"] = cfg.deny_purge
    out["allow_rollup_hdrs"] = cfg.allow_rollup_hdrs
    limits: dict[str, Any] = {}
    _omit(limits, "inactive_threshold", cfg.consumer_limits.get("inactive_threshold"))
    _omit(limits, "max_ack_pending", cfg.consumer_limits.get("max_ack_pending"))
    out["consumer_limits"] = limits
    out["allow_msg_ttl"] = cfg.allow_msg_ttl
    _omit(out, "subject_delete_marker_ttl", cfg.subject_delete_marker_ttl)
    _omit(out, "allow_msg_counter", cfg.allow_msg_counter)
    _omit(out, "allow_atomic", cfg.allow_atomic)
    _omit(out, "allow_msg_schedules", cfg.allow_msg_schedules)
    _omit(out, "persist_mode", cfg.persist_mode if cfg.persist_mode not in ("", "default") else "")
    _omit(out, "allow_batched", cfg.allow_batched)
    metadata = dict(cfg.metadata or {})
    if dynamic_metadata:
        metadata["_nats.ver"] = NATS_VERSION
        metadata["_nats.level"] = str(API_LEVEL)
    if metadata:
        out["metadata"] = dict(sorted(metadata.items()))
    return out


# --- metadata (jetstream_versioning.go) -------------------------------------------------


def set_static_metadata(cfg: StreamConfig) -> None:
    """``setStaticStreamMetadata``: record the API level the config's features need."""
    meta = dict(cfg.metadata or {})
    for key in _DYNAMIC_META:
        meta.pop(key, None)
    level = 0
    if cfg.allow_msg_ttl or cfg.subject_delete_marker_ttl > 0:
        level = max(level, 1)
    if cfg.allow_msg_counter or cfg.allow_atomic or cfg.allow_msg_schedules or cfg.persist_mode == "async":
        level = max(level, 2)
    if cfg.allow_batched:
        level = max(level, 4)
    meta[REQ_LEVEL_KEY] = str(level)
    cfg.metadata = meta


def copy_metadata(cfg: StreamConfig, prev: StreamConfig | None) -> None:
    """``copyStreamMetadata``: keep the stored required level when comparing/updating."""
    if cfg.metadata is not None:
        for key in _DYNAMIC_META:
            cfg.metadata.pop(key, None)
    if prev is not None and prev.metadata is not None and REQ_LEVEL_KEY in prev.metadata:
        if cfg.metadata is None:
            cfg.metadata = {}
        cfg.metadata[REQ_LEVEL_KEY] = prev.metadata[REQ_LEVEL_KEY]
        return
    if cfg.metadata is not None:
        cfg.metadata.pop(REQ_LEVEL_KEY, None)
        if not cfg.metadata:
            cfg.metadata = None


# --- checkStreamCfgLocked ---------------------------------------------------------------


def _invalid(text: str) -> ApiError:
    return api_error(ApiErrors.JSStreamInvalidConfigF, err=text)


def _pedantic(text: str) -> ApiError:
    return api_error(ApiErrors.JSPedanticErrF, err=text)


def check_stream_config(
    config: StreamConfig,
    lookup: Callable[[str], StreamConfig | None],
    pedantic: bool = False,
    limits: JetStreamLimits = UNLIMITED,
) -> StreamConfig:
    """Defaults and validation as ``checkStreamCfgLocked``; ``lookup`` finds other streams'
    configs by name (for mirrors and sources), ``limits`` are the account's JetStream limits.
    Raises :class:`ApiError`."""
    if not is_valid_asset_name(config.name):
        raise _invalid("stream name is required and can not contain '.', '*', '>', '\\', '/'")
    if len(config.name.encode()) > MAX_NAME_LEN:
        raise _invalid(f"stream name is too long, maximum allowed is {MAX_NAME_LEN}")
    if len(config.description.encode()) > MAX_DESCRIPTION_LEN:
        raise _invalid(f"stream description is too long, maximum allowed is {MAX_DESCRIPTION_LEN}")
    if sum(len(k.encode()) + len(v.encode()) for k, v in (config.metadata or {}).items()) > MAX_METADATA_LEN:
        raise _invalid(f"stream metadata exceeds maximum size of {MAX_METADATA_LEN} bytes")

    cfg = config.clone()
    if not cfg.storage:
        cfg.storage = "file"
    if cfg.num_replicas == 0:
        cfg.num_replicas = 1
    if cfg.num_replicas > MAX_REPLICAS:
        raise _invalid(f"maximum replicas is {MAX_REPLICAS}")
    if cfg.num_replicas < 0:
        raise api_error(ApiErrors.JSReplicasCountCannotBeNegative)
    for key in ("max_msgs", "max_msgs_per_subject", "max_bytes", "max_msg_size", "max_consumers"):
        value = getattr(cfg, key)
        if value == 0 or value < -1:
            if pedantic and value < -1:
                raise _pedantic(f"{key} must be set to -1")
            setattr(cfg, key, -1)
    if cfg.max_age < 0:
        raise _invalid("max age can not be negative")
    if cfg.max_age != 0 and cfg.max_age < _MS100:
        raise _invalid("max age needs to be >= 100ms")

    if cfg.duplicate_window == 0 and cfg.mirror is None and not cfg.sources:
        if cfg.max_age != 0 and cfg.max_age < DEFAULT_DUPLICATE_WINDOW:
            if pedantic:
                raise _pedantic("duplicate window cannot be bigger than max age")
            cfg.duplicate_window = cfg.max_age
        else:
            cfg.duplicate_window = DEFAULT_DUPLICATE_WINDOW
    if cfg.duplicate_window < 0:
        raise _invalid("duplicates window can not be negative")
    if cfg.max_age != 0 and cfg.duplicate_window > cfg.max_age:
        raise _invalid("duplicates window can not be larger then max age")
    if 0 < cfg.duplicate_window < _MS100:
        raise _invalid("duplicates window needs to be >= 100ms")

    if cfg.deny_purge and cfg.allow_rollup_hdrs:
        raise _invalid("roll-ups require the purge permission")

    if cfg.allow_msg_counter:
        if cfg.discard == "new":
            raise _invalid("counter stream cannot use discard new")
        if cfg.allow_msg_ttl:
            raise _invalid("counter stream cannot use message TTLs")
        if cfg.allow_msg_schedules:
            raise _invalid("counter stream cannot use message schedules")
        if cfg.retention != "limits":
            raise _invalid("counter stream can only use limits retention")

    if cfg.discard_new_per_subject:
        if cfg.discard != "new":
            raise _invalid("discard new per subject requires discard new policy to be set")
        if cfg.max_msgs_per_subject <= 0:
            raise _invalid("discard new per subject requires max msgs per subject > 0")

    if cfg.subject_delete_marker_ttl > 0:
        if cfg.subject_delete_marker_ttl < 1_000_000_000:
            raise _invalid("subject delete marker TTL must be at least 1 second")
        if not cfg.allow_msg_ttl:
            if pedantic:
                raise _invalid("subject delete marker cannot be set if message TTLs are disabled")
            cfg.allow_msg_ttl = True
        if not cfg.allow_rollup_hdrs:
            if pedantic:
                raise _invalid("subject delete marker cannot be set if roll-ups are disabled")
            cfg.allow_rollup_hdrs, cfg.deny_purge = True, False
    elif cfg.subject_delete_marker_ttl < 0:
        raise _invalid("subject delete marker TTL must not be negative")

    if cfg.allow_msg_schedules:
        if cfg.discard == "new":
            raise _invalid("message scheduling cannot use discard new")
        if not cfg.allow_rollup_hdrs:
            if pedantic:
                raise _invalid("message scheduling cannot be set if roll-ups are disabled")
            cfg.allow_rollup_hdrs, cfg.deny_purge = True, False

    if cfg.persist_mode == "async":
        if cfg.storage != "file":
            raise _invalid("async persist mode is only supported on file storage")
        if cfg.num_replicas > 1:
            raise _invalid("async persist mode is not supported on replicated streams")
        if cfg.allow_atomic:
            raise _invalid("async persist mode is not supported with atomic batch publish")

    _check_mirror_and_sources(cfg, lookup, pedantic)

    if not cfg.subjects:
        if cfg.mirror is None and not cfg.sources:
            cfg.subjects = [*(cfg.subjects or []), cfg.name]
    else:
        if cfg.mirror is not None:
            raise api_error(ApiErrors.JSMirrorWithSubjectsErr)
        _check_subjects(cfg)

    if not cfg.subjects and not cfg.sources and cfg.mirror is None:
        raise _invalid("stream needs at least one configured subject or be a source/mirror")
    # Go ``maxBytesLimits``: the stream's tier (none: nothing required; a create is refused for
    # want of a tier before, ``stream_count_error``)
    limits = limits.tier(cfg.num_replicas) or UNLIMITED
    if limits.max_bytes_required and cfg.max_bytes <= 0:
        raise api_error(ApiErrors.JSStreamMaxBytesRequired)
    if 0 < limits.max_stream_bytes(cfg.storage) < cfg.max_bytes:
        raise api_error(ApiErrors.JSStreamMaxStreamBytesExceeded)

    if cfg.subject_transform is not None:
        src = cfg.subject_transform.get("src", "")
        if src and not is_valid_subject(src):
            raise api_error(ApiErrors.JSStreamTransformInvalidSource, err=f"invalid subject {src}")

    if cfg.republish is not None:
        if not cfg.republish.get("src"):
            if pedantic:
                raise _pedantic("republish source can not be empty")
            cfg.republish["src"] = ">"
        src = cfg.republish["src"]
        dest = cfg.republish.get("dest", "")
        st = cfg.subject_transform
        subjects = cfg.subjects or []
        if dest == ">" and src == ">" and st is not None and len(subjects) == 1 and st.get("src", "") == subjects[0]:
            # A republish of everything, aligned to the input transform's subjects.
            if pedantic:
                raise _pedantic("implicit republish based on subject transform")
            src = dest = cfg.republish["src"] = cfg.republish["dest"] = st.get("dest", "")
        if any(subjects_collide(dest, s) for s in subjects):
            raise _invalid("stream configuration for republish destination forms a cycle")
        if not _valid_transform(src, dest):
            raise _invalid(f"stream configuration for republish with transform from '{src}' to '{dest}' not valid")

    if cfg.placement is not None and not any(cfg.placement.get(k) for k in ("cluster", "tags", "preferred")):
        cfg.placement = None
    if cfg.placement is not None and cfg.placement.get("preferred"):
        raise _invalid("preferred server not permitted in placement")
    return cfg


def _valid_transform(src: str, dest: str) -> bool:
    """Go ``NewSubjectTransform`` accepts it (an empty destination: no transform, no error)."""
    if not dest:
        return True
    if "*" in dest.split("."):  # no partial wildcards in a destination
        return False
    try:
        SubjectTransform(src or ">", dest)
    except TransformError:
        return False
    return True


def _check_subjects(cfg: StreamConfig) -> None:
    subjects = cfg.subjects or []
    seen: set[str] = set()
    for i, subj in enumerate(subjects):
        if not is_valid_subject(subj):
            raise _invalid("invalid subject")
        if subj in seen:
            raise _invalid("duplicate subjects detected")
        if subj == ">":
            if not cfg.no_ack:
                raise _invalid("capturing all subjects requires no-ack to be true")
            if cfg.num_replicas != 1:
                raise _invalid("capturing all subjects requires replicas of 1")
        if not cfg.no_ack:
            for namespace in ("$JS.>", "$JSC.>", "$NRG.>"):
                if subjects_collide(subj, namespace) and not subject_is_subset_match(subj, "$JS.EVENT.>"):
                    raise _invalid("subjects that overlap with jetstream api require no-ack to be true")
            if subjects_collide(subj, "$SYS.>") and not subject_is_subset_match(subj, "$SYS.ACCOUNT.>"):
                raise _invalid("subjects that overlap with system api require no-ack to be true")
        for other in subjects[i + 1 :]:
            if subjects_collide(other, subj):
                raise _invalid(f"subject {_go_quote(subj)} overlaps with {_go_quote(other)}")
        seen.add(subj)


def _go_quote(text: str) -> str:
    """``%q`` for plain subjects (printable ASCII is the common case)."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x80 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"))
    out.append('"')
    return "".join(out)


def _durable_consumer_invalid(spec: dict[str, Any]) -> bool:
    """A mirror's or source's durable ``consumer`` needs a valid name and a literal deliver
    subject, and rules out start options and a filter."""
    consumer = spec.get("consumer")
    if consumer is None:
        return False
    deliver = consumer.get("deliver_subject", "")
    return bool(
        not is_valid_asset_name(consumer.get("name", ""))
        or not subject_is_literal(deliver)
        or not is_valid_subject(deliver)
        or spec.get("opt_start_seq")
        or spec.get("opt_start_time") is not None
        or spec.get("filter_subject")
    )


def _check_mirror_and_sources(cfg: StreamConfig, lookup: Callable[[str], StreamConfig | None], pedantic: bool) -> None:
    mirror = cfg.mirror
    if mirror is not None:
        if cfg.first_seq > 0:
            raise api_error(ApiErrors.JSMirrorWithFirstSeqErr)
        if cfg.subjects:
            raise api_error(ApiErrors.JSMirrorWithSubjectsErr)
        if cfg.sources:
            raise api_error(ApiErrors.JSMirrorWithSourcesErr)
        if cfg.allow_msg_counter:
            raise api_error(ApiErrors.JSMirrorWithCountersErr)
        if cfg.allow_atomic:
            raise api_error(ApiErrors.JSMirrorWithAtomicPublishErr)
        if cfg.allow_batched:
            raise api_error(ApiErrors.JSMirrorWithBatchPublishErr)
        if cfg.allow_msg_schedules:
            raise api_error(ApiErrors.JSMirrorWithMsgSchedulesErr)
        if _durable_consumer_invalid(mirror):
            raise api_error(ApiErrors.JSMirrorDurableConsumerCfgInvalid)
        transforms = mirror.get("subject_transforms") or []
        if mirror.get("filter_subject") and transforms:
            raise api_error(ApiErrors.JSMirrorMultipleFiltersNotAllowed)
        if cfg.subject_delete_marker_ttl > 0:
            raise _invalid("subject delete markers forbidden on mirrors")
        for i, tr in enumerate(transforms):
            src = (tr or {}).get("src", "")
            if src and not is_valid_subject(src):
                raise api_error(ApiErrors.JSMirrorInvalidSubjectFilter, err=f"invalid subject {src}")
            dest = (tr or {}).get("dest", "")
            if dest:  # ValidateMapping
                try:
                    SubjectTransform(src or ">", dest)
                except TransformError as exc:
                    raise api_error(ApiErrors.JSMirrorInvalidTransformDestination, err=str(exc)) from None
            for j, other in enumerate(transforms):
                if i != j and subjects_collide(src, (other or {}).get("src", "")):
                    raise api_error(ApiErrors.JSMirrorOverlappingSubjectFilters)
        if mirror.get("external") is None:
            if not is_valid_asset_name(mirror.get("name", "")):
                raise api_error(ApiErrors.JSMirrorInvalidStreamName)
            origin = lookup(mirror.get("name", ""))
            if origin is not None:
                if 0 < cfg.max_msg_size < origin.max_msg_size:
                    raise api_error(ApiErrors.JSMirrorMaxMessageSizeTooBigErr)
                if pedantic and cfg.mirror_direct != origin.allow_direct:
                    raise _pedantic("origin stream has direct get set, mirror has it disabled")
                cfg.mirror_direct = origin.allow_direct
    if cfg.sources and cfg.allow_msg_schedules:
        raise api_error(ApiErrors.JSSourceWithMsgSchedulesErr)
    seen: set[str] = set()
    consumer_names: set[str] = set()
    for src in cfg.sources or []:
        if src is None or not is_valid_asset_name(src.get("name", "")):
            raise api_error(ApiErrors.JSSourceInvalidStreamName)
        iname = compose_iname(src)
        if iname in seen:
            raise api_error(ApiErrors.JSSourceDuplicateDetected)
        seen.add(iname)
        if src.get("filter_subject") and src.get("subject_transforms"):
            raise api_error(ApiErrors.JSSourceMultipleFiltersNotAllowed)
        transforms = [t or {} for t in src.get("subject_transforms") or []]
        for tr in transforms:
            tsrc, dest = tr.get("src", ""), tr.get("dest", "")
            if tsrc and not is_valid_subject(tsrc):
                raise api_error(ApiErrors.JSSourceInvalidSubjectFilter, err=f"invalid subject {tsrc}")
            if dest:  # ValidateMapping
                try:
                    SubjectTransform(tsrc or ">", dest)
                except TransformError as exc:
                    raise api_error(ApiErrors.JSSourceInvalidTransformDestination, err=str(exc)) from None
        for i, tr in enumerate(transforms):
            for j, other in enumerate(transforms):
                if i != j and subject_is_subset_match(tr.get("src", ""), other.get("src", "")):
                    raise api_error(ApiErrors.JSSourceOverlappingSubjectFilters)
        consumer = src.get("consumer")
        if consumer is not None:
            if _durable_consumer_invalid(src):
                raise api_error(ApiErrors.JSSourceDurableConsumerCfgInvalid)
            cname = str(src.get("name", ""))
            if src.get("external") is not None:
                cname += ":" + get_hash(src["external"].get("api", ""))
            cname += " " + consumer.get("name", "")
            if cname in consumer_names:
                raise api_error(ApiErrors.JSSourceDurableConsumerDuplicateDetected)
            consumer_names.add(cname)
        if src.get("external") is None:
            origin = lookup(src["name"])
            if origin is not None and 0 < cfg.max_msg_size < origin.max_msg_size:
                raise api_error(ApiErrors.JSSourceMaxMessageSizeTooBigErr)
    _check_external_prefixes(cfg, lookup)
    _check_cycles(cfg, lookup)


def _check_external_prefixes(cfg: StreamConfig, lookup: Callable[[str], StreamConfig | None]) -> None:
    """The delivery and API prefixes of external mirrors and sources, in the server's order."""
    deliver_prefixes: list[str] = []
    api_prefixes: list[str] = []
    origin_subjects: list[str] = []
    for spec in [cfg.mirror, *(cfg.sources or [])]:
        if spec is None:
            continue
        external = spec.get("external")
        if external is None:
            origin = lookup(spec.get("name", ""))
            if origin is not None:
                origin_subjects.extend(origin.subjects or [])
            continue
        if external.get("deliver"):
            deliver_prefixes.append(external["deliver"])
        if external.get("api"):
            api_prefixes.append(external["api"])
    for prefix in deliver_prefixes:
        if not is_valid_literal_subject(prefix):
            raise api_error(ApiErrors.JSStreamInvalidExternalDeliverySubjErrF, prefix=prefix)
        for subject in origin_subjects:
            if subjects_collide(subject, f"{prefix}.{subject}"):
                raise api_error(ApiErrors.JSStreamExternalDelPrefixOverlapsErrF, prefix=prefix, subject=subject)
    for prefix in api_prefixes:
        if not is_valid_literal_subject(prefix):
            raise _invalid(f"stream external api prefix {_go_quote(prefix)} must be a valid subject without wildcards")
        if subjects_collide(prefix, "$JS.API"):
            raise api_error(ApiErrors.JSStreamExternalApiOverlapErrF, prefix=prefix, subject="$JS.API")


def _check_cycles(cfg: StreamConfig, lookup: Callable[[str], StreamConfig | None]) -> None:
    """The server's walk over sources and mirrors: a stream may not (indirectly) feed itself."""
    to_visit = [cfg]
    visited: set[str] = set()
    while to_visit:
        current = to_visit.pop(0)
        visited.add(current.name)
        for src in current.sources or []:
            if src is None or src.get("external") is not None:
                continue
            if src.get("name") in visited:
                filt = src.get("filter_subject") or ""
                if not filt or any(subjects_collide(subj, filt) for subj in current.subjects or []):
                    raise _invalid("detected cycle")
            else:
                other = lookup(src.get("name", ""))
                if other is not None:
                    to_visit.append(other)
        mirror = current.mirror
        if mirror is not None and mirror.get("external") is None:
            if mirror.get("name") in visited:
                raise _invalid("detected cycle")
            other = lookup(mirror.get("name", ""))
            if other is not None:
                to_visit.append(other)
