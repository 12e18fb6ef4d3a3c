"""Stream handlers of ``$JS.API``: create, update, info, delete, purge, names, list,
msg get, msg delete, and the account info (a sum over the account's streams).

Each handler checks the request in the order of its Go counterpart in ``jetstream_api.go``
(standalone server), so an invalid request gets the same first error, then calls the
service (``JetStream.add_stream``, ``update_stream``, ``delete_stream``), the stream or its
store, and builds the reply. Snapshots and restores are in ``api/snapshots.py``, the leader
step-down in ``api/cluster.py``, Direct Get in ``directget/`` (its own subscriptions).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from ...protocol.gojson import dumps
from ...server.js_limits import ZERO_LIMITS
from ...store import StoreError
from ...timefmt import format_ns, go_unix_nano
from ..cluster.leader import stream_leader_elected
from ..consumers.consumer_set import consumers_of
from ..errors import ApiError, ApiErrors, api_error, wrap_error
from ..events.stream_advisories import CREATE, DELETE, MODIFY, send_stream_action
from ..requests import (
    MSG_DELETE_REQUEST,
    MSG_GET_REQUEST,
    STREAM_CONFIG_REQUEST,
    STREAM_INFO_REQUEST,
    STREAM_LIST_REQUEST,
    STREAM_NAMES_REQUEST,
    STREAM_PURGE_REQUEST,
)
from ..streams.config import check_stream_config, config_from_request, set_static_metadata
from ..streams.stream import MAX_SUBJECT_DETAILS
from .registry import (
    ApiRequest,
    QuietError,
    api,
    error_response,
    is_empty_request,
    is_json_object_or_array,
    response_type,
)

if TYPE_CHECKING:
    from ..service import JetStream
    from ..streams.stream import Stream

__all__ = [
    "account_info",
    "msg_delete",
    "msg_get",
    "stream_create",
    "stream_delete",
    "stream_info",
    "stream_list",
    "stream_names",
    "stream_purge",
    "stream_update",
]

NAMES_LIMIT = 1024  # JSApiNamesLimit
LIST_LIMIT = 256  # JSApiListLimit
_PAGED_ZERO = {"total": 0, "offset": 0, "limit": 0}


# --- account ----------------------------------------------------------------------------


@api("INFO")
def account_info(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    try:
        req.check_api_level()
    except ApiError as err:
        return error_response("account_info_response", err)
    out: dict[str, Any] = {"type": response_type("account_info_response")}
    out.update(_usage(js, list(js.streams.values())))
    out["limits"] = js.limits.to_json()
    if js.domain:
        out["domain"] = js.domain
    out["api"] = {"level": js.api_level, "total": js.api_total, "errors": js.api_errors}
    if js.limits.tiers:
        out["tiers"] = _tiers(js)
    return out


def _tiers(js: JetStream) -> dict[str, Any]:
    """Go ``JetStreamUsage`` for limits per tier, by tier name: first each tier whose streams
    hold bytes (its usage, reservations and limits); then, unless that made as many tiers as
    there are limits, each tier with limits not there yet; then each stream's tier not there
    yet (Go's zero values: no reservations, no limits). Streams and consumers count per tier."""
    limits = dict(js.limits.tiers)
    by_tier: dict[str, list[Stream]] = {}
    for stream in js.streams.values():
        by_tier.setdefault(f"R{max(1, stream.config.num_replicas)}", []).append(stream)
    out: dict[str, dict[str, Any]] = {}
    for name, streams in by_tier.items():
        usage = _usage(js, streams)
        if usage["memory"] or usage["storage"]:
            out[name] = {**usage, "streams": 0, "consumers": 0}
    if len(limits) != len(out):
        for name in limits:
            out.setdefault(name, {**_usage(js, by_tier.get(name, [])), "memory": 0, "storage": 0})
            out[name]["streams"] = out[name]["consumers"] = 0
    for name, streams in by_tier.items():
        tier = out.setdefault(name, dict.fromkeys(_usage(js, []), 0))
        tier["streams"] = len(streams)
        tier["consumers"] = js.num_consumers([s.name for s in streams])
    zero = ZERO_LIMITS.to_json()
    return {name: {**out[name], "limits": limits[name].to_json() if name in limits else zero} for name in sorted(out)}


def _usage(js: JetStream, streams: list[Stream]) -> dict[str, int]:
    """What ``streams`` store and reserve (their ``max_bytes``), and how many there are."""
    memory = storage = reserved_memory = reserved_storage = 0
    for stream in streams:
        size = stream.store.bytes
        max_bytes = max(0, stream.config.max_bytes)
        if stream.config.storage == "memory":
            memory += size
            reserved_memory += max_bytes
        else:
            storage += size
            reserved_storage += max_bytes
    return {
        "memory": memory,
        "storage": storage,
        "reserved_memory": reserved_memory,
        "reserved_storage": reserved_storage,
        "streams": len(streams),
        "consumers": js.num_consumers([s.name for s in streams] if len(streams) != len(js.streams) else None),
    }


# --- create / update --------------------------------------------------------------------


@api("STREAM.CREATE.*")
def stream_create(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_create_response"
    try:
        req.check_api_level()
        values = req.decode(STREAM_CONFIG_REQUEST)
        cfg, pedantic = config_from_request(values)
        set_static_metadata(cfg)
        name = req.token(5)
        if name != cfg.name:
            raise api_error(ApiErrors.JSStreamMismatchErr)
        if "\\" in name or "/" in name:
            raise api_error(ApiErrors.JSStreamNameContainsPathSeparatorsErr)
        if cfg.sealed:
            raise api_error(ApiErrors.JSStreamInvalidConfigF, err="stream configuration for create can not be sealed")
        if cfg.mirror_direct and cfg.mirror is None:
            raise api_error(ApiErrors.JSStreamInvalidConfigF, err="stream has no mirror but does have mirror direct")
        existed = name in js.streams
        stream = js.add_stream(cfg, pedantic, start_links=False)
    except ApiError as err:
        return error_response(kind, err)
    if not existed:
        stream_leader_elected(stream, stream.replicas)  # its raft group elects its first leader
        send_stream_action(js, name, CREATE)
    out: dict[str, Any] = {"type": response_type(kind)}
    # The reply shows the stream before a mirror's or source's consumer has made contact, as the
    # server's does (its mirror starts asynchronously after the reply).
    out.update(stream.info_json(domain=False, cluster=False))
    out["did_create"] = True
    js.start_links(stream)
    return out


@api("STREAM.UPDATE.*")
def stream_update(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_update_response"
    try:
        req.check_api_level()
        values = req.decode(STREAM_CONFIG_REQUEST)
        ncfg, pedantic = config_from_request(values)
        cfg = check_stream_config(ncfg, js.lookup_config, pedantic, js.limits)
        name = req.token(5)
        if name != cfg.name:
            raise api_error(ApiErrors.JSStreamMismatchErr)
        stream = js.streams.get(name)
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        set_static_metadata(cfg)
        js.update_stream(stream, cfg, pedantic, start_links=False)
    except ApiError as err:
        return error_response(kind, err)
    send_stream_action(js, name, MODIFY)
    out: dict[str, Any] = {"type": response_type(kind)}
    out.update(stream.info_json(cluster=False))
    js.start_links(stream)  # new sources make contact after the reply, as in the server
    return out


# --- info / names / list ----------------------------------------------------------------


@api("STREAM.INFO.*")
def stream_info(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_info_response"
    try:
        req.check_api_level()
        details = False
        subjects_filter = ""
        offset = 0
        if is_json_object_or_array(req.data):
            values = req.decode(STREAM_INFO_REQUEST)
            details = bool(values.get("deleted_details"))
            subjects_filter = values.get("subjects_filter") or ""
            offset = max(values.get("offset") or 0, 0)
        stream = js.streams.get(req.token(5))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
    except ApiError as err:
        return error_response(kind, err, **_PAGED_ZERO)
    paged = dict(_PAGED_ZERO)
    subjects: dict[str, int] | None = None
    if subjects_filter:
        totals = stream.store.subjects_totals(subjects_filter.encode())
        if totals:
            paged = {"total": len(totals), "offset": offset, "limit": MAX_SUBJECT_DETAILS}
            if offset == 0 and len(totals) <= MAX_SUBJECT_DETAILS:
                subjects = {k.decode("utf-8", "replace"): v for k, v in sorted(totals.items())}
            else:
                # The reply keeps the requested offset; only the slice is clamped.
                names = sorted(totals)
                start = min(offset, len(names))
                page = names[start : start + MAX_SUBJECT_DETAILS]
                subjects = {k.decode("utf-8", "replace"): totals[k] for k in page} or None
    out: dict[str, Any] = {"type": response_type(kind), **paged}
    out.update(stream.info_json(details=details, subjects=subjects))
    return out


def _paged_filter(req: ApiRequest, struct: Any) -> tuple[int, str]:
    offset, subject = 0, ""
    if is_json_object_or_array(req.data):
        values = req.decode(struct)
        offset = max(values.get("offset") or 0, 0)
        subject = values.get("subject") or ""
    return offset, subject


@api("STREAM.NAMES")
def stream_names(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_names_response"
    try:
        req.check_api_level()
        offset, subject = _paged_filter(req, STREAM_NAMES_REQUEST)
    except ApiError as err:
        return error_response(kind, err, **_PAGED_ZERO, streams=None)
    names = sorted(s.name for s in js.filtered_streams(subject))
    offset = min(offset, len(names))
    page = names[offset : offset + NAMES_LIMIT]
    return {
        "type": response_type(kind),
        "total": len(names),
        "offset": offset,
        "limit": NAMES_LIMIT,
        "streams": page or None,
    }


@api("STREAM.LIST")
def stream_list(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_list_response"
    try:
        req.check_api_level()
        offset, subject = _paged_filter(req, STREAM_LIST_REQUEST)
    except ApiError as err:
        return error_response(kind, err, **_PAGED_ZERO, streams=[])
    streams = sorted(js.filtered_streams(subject), key=lambda s: s.name)
    offset = min(offset, len(streams))
    page = streams[offset : offset + LIST_LIMIT]
    return {
        "type": response_type(kind),
        "total": len(streams),
        "offset": offset,
        "limit": LIST_LIMIT,
        "streams": [s.info_json(dynamic_metadata=False, cluster=False) for s in page],
    }


# --- delete / purge ---------------------------------------------------------------------


@api("STREAM.DELETE.*")
def stream_delete(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_delete_response"
    try:
        req.check_api_level()
        if not is_empty_request(req.data):
            raise api_error(ApiErrors.JSNotEmptyRequestErr)
        stream = js.streams.get(req.token(5))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        js.delete_stream(stream)
    except ApiError as err:
        return error_response(kind, err)
    send_stream_action(js, stream.name, DELETE)
    return {"type": response_type(kind), "success": True}


@api("STREAM.PURGE.*")
def stream_purge(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_purge_response"
    try:
        req.check_api_level()
        request: dict[str, Any] | None = None
        if is_json_object_or_array(req.data):
            request = req.decode(STREAM_PURGE_REQUEST)
            if (request.get("seq") or 0) > 0 and (request.get("keep") or 0) > 0:
                raise api_error(ApiErrors.JSBadRequestErr)
        stream = js.streams.get(req.token(5))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        if stream.config.sealed:
            raise api_error(ApiErrors.JSStreamSealedErr)
        if stream.config.deny_purge:
            raise api_error(ApiErrors.JSStreamPurgeFailedF, err="stream purge not permitted")
    except ApiError as err:
        return error_response(kind, err, purged=0)
    try:
        if request is None:
            purged = stream.store.purge()
        else:
            subject = request.get("filter") or ""
            purged = stream.store.purge_ex(
                subject.encode() if subject else None, request.get("seq") or 0, request.get("keep") or 0
            )
    except Exception as exc:  # noqa: BLE001 - the store refusing (e.g. a bad filter) is a reply, not a crash
        return QuietError(error_response(kind, wrap_error(ApiErrors.JSStreamGeneralErrorF, exc), purged=0))
    consumers = consumers_of(stream)
    if consumers is not None:
        consumers.purged((request or {}).get("filter") or "")
    return {"type": response_type(kind), "success": True, "purged": purged}


# --- messages ---------------------------------------------------------------------------


@api("STREAM.MSG.DELETE.*")
def msg_delete(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "stream_msg_delete_response"
    try:
        req.check_api_level()
        if is_empty_request(req.data):
            raise api_error(ApiErrors.JSBadRequestErr)
        values = req.decode(MSG_DELETE_REQUEST)
        stream = js.streams.get(req.token(6))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        if stream.config.sealed:
            raise api_error(ApiErrors.JSStreamSealedErr)
        if stream.config.deny_delete:
            raise api_error(ApiErrors.JSStreamMsgDeleteFailedF, err="message delete not permitted")
    except ApiError as err:
        return error_response(kind, err)
    # From here on the server answers through its success path even for failures.
    seq = values.get("seq") or 0
    try:
        removed = stream.store.remove(seq, erase=not values.get("no_erase"))
    except StoreError as exc:  # the file store fails outright outside its block range
        return QuietError(error_response(kind, api_error(ApiErrors.JSStreamMsgDeleteFailedF, err=str(exc))))
    if not removed:
        return QuietError(error_response(kind, api_error(ApiErrors.JSSequenceNotFoundErrF, seq=seq)))
    return {"type": response_type(kind), "success": True}


@api("STREAM.MSG.GET.*")
def msg_get(js: JetStream, req: ApiRequest) -> dict[str, Any] | bytes:
    kind = "stream_msg_get_response"
    try:
        req.check_api_level()
        if is_empty_request(req.data):
            raise api_error(ApiErrors.JSBadRequestErr)
        values = req.decode(MSG_GET_REQUEST)
        seq = values.get("seq") or 0
        last_for = values.get("last_by_subj") or ""
        next_for = values.get("next_by_subj") or ""
        start_time = values.get("start_time")
        if (values.get("batch") or 0) > 0 or (values.get("max_bytes") or 0) > 0:
            raise api_error(ApiErrors.JSBadRequestErr)
        if (
            (seq > 0 and last_for)
            or (seq == 0 and not last_for and not next_for and start_time is None)
            or (seq > 0 and start_time is not None)
            or (start_time is not None and last_for)
            or (last_for and next_for)
        ):
            raise api_error(ApiErrors.JSBadRequestErr)
        stream = js.streams.get(req.token(6))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        store = stream.store
        if start_time is not None:
            seq = store.seq_from_time(go_unix_nano(start_time))
        if seq > 0 and not next_for:
            sm = store.load(seq)
        elif next_for:
            sm = store.load_next(next_for.encode(), seq)
        else:
            sm = store.load_last(last_for.encode())
        if sm is None:
            raise api_error(ApiErrors.JSNoMessageFoundErr)
    except ApiError as err:
        return error_response(kind, err)
    message: dict[str, Any] = {"subject": sm.subject.decode("utf-8", "replace"), "seq": sm.seq}
    if sm.hdr and not values.get("no_hdr"):
        message["hdrs"] = base64.b64encode(sm.hdr).decode()
    if sm.data:
        message["data"] = base64.b64encode(sm.data).decode()
    message["time"] = format_ns(sm.ts)
    # The server sends a found message straight out, outside the API statistics.
    return dumps({"type": response_type(kind), "message": message}).encode()
