"""The Go request structs of the JetStream API, declared for the strict decoder.

Names matter: they appear in the server's error texts
(``json: cannot unmarshal string into Go struct field StreamConfigRequest.max_msgs of type int64``).
"""

from __future__ import annotations

from typing import Any

from ..protocol.gojson import (
    T_BOOL,
    T_DURATION,
    T_INT,
    T_INT32,
    T_INT64,
    T_STRING,
    T_TIME,
    T_UINT64,
    GoEnum,
    GoJSONError,
    GoMap,
    GoPointer,
    GoSlice,
    GoStruct,
    decode_request,
    go_quote,
    go_unmarshal_string,
)

__all__ = [
    "MSG_DELETE_REQUEST",
    "MSG_GET_REQUEST",
    "PAUSE_REQUEST",
    "PEER_REMOVE_REQUEST",
    "RESET_REQUEST",
    "STEPDOWN_REQUEST",
    "STREAM_CONFIG_REQUEST",
    "STREAM_INFO_REQUEST",
    "STREAM_LIST_REQUEST",
    "STREAM_NAMES_REQUEST",
    "STREAM_PURGE_REQUEST",
    "UNPIN_REQUEST",
    "decode_request",
]


def _exact_enum(*names: str, fold: bool = False, extra: dict[str, str] | None = None) -> Any:
    table = {f'"{n}"': n for n in names}
    if extra:
        table.update(extra)

    def parse(raw: str) -> str:
        key = raw.lower() if fold else raw
        if key in table:
            return table[key]
        raise GoJSONError(f"can not unmarshal {go_quote(raw)}")

    return parse


def _compression(raw: str) -> str:
    """``StoreCompression.UnmarshalJSON`` decodes a Go string first, then checks it."""
    value = go_unmarshal_string(raw)
    if value in ("s2", "none"):
        return value
    raise GoJSONError("unknown compression algorithm")


RETENTION = GoEnum("server.RetentionPolicy", _exact_enum("limits", "interest", "workqueue"))
DISCARD = GoEnum("server.DiscardPolicy", _exact_enum("old", "new", fold=True))
STORAGE = GoEnum("server.StorageType", _exact_enum("file", "memory"))
COMPRESSION = GoEnum("server.StoreCompression", _compression)
PERSIST_MODE = GoEnum("server.PersistModeType", _exact_enum("default", "async", extra={'""': "default"}))

_TRANSFORM = GoStruct("SubjectTransformConfig", {"src": T_STRING, "dest": T_STRING})
_PLACEMENT = GoStruct("Placement", {"cluster": T_STRING, "tags": GoSlice(T_STRING), "preferred": T_STRING})

_SOURCE = GoStruct(
    "StreamSource",
    {
        "name": T_STRING,
        "opt_start_seq": T_UINT64,
        "opt_start_time": GoPointer(T_TIME),
        "filter_subject": T_STRING,
        "subject_transforms": GoSlice(_TRANSFORM),
        "external": GoPointer(GoStruct("ExternalStream", {"api": T_STRING, "deliver": T_STRING})),
        "consumer": GoPointer(GoStruct("StreamConsumerSource", {"name": T_STRING, "deliver_subject": T_STRING})),
    },
)

STREAM_CONFIG_REQUEST = GoStruct(
    "StreamConfigRequest",
    {
        "name": T_STRING,
        "description": T_STRING,
        "subjects": GoSlice(T_STRING),
        "retention": RETENTION,
        "max_consumers": T_INT,
        "max_msgs": T_INT64,
        "max_bytes": T_INT64,
        "max_age": T_DURATION,
        "max_msgs_per_subject": T_INT64,
        "max_msg_size": T_INT32,
        "discard": DISCARD,
        "storage": STORAGE,
        "num_replicas": T_INT,
        "no_ack": T_BOOL,
        "duplicate_window": T_DURATION,
        "placement": GoPointer(_PLACEMENT),
        "mirror": GoPointer(_SOURCE),
        "sources": GoSlice(GoPointer(_SOURCE)),
        "compression": COMPRESSION,
        "first_seq": T_UINT64,
        "subject_transform": GoPointer(_TRANSFORM),
        "republish": GoPointer(GoStruct("RePublish", {"src": T_STRING, "dest": T_STRING, "headers_only": T_BOOL})),
        "allow_direct": T_BOOL,
        "mirror_direct": T_BOOL,
        "discard_new_per_subject": T_BOOL,
        "sealed": T_BOOL,
        "deny_delete": T_BOOL,
        "deny_purge": T_BOOL,
        "allow_rollup_hdrs": T_BOOL,
        "consumer_limits": GoStruct(
            "StreamConsumerLimits", {"inactive_threshold": T_DURATION, "max_ack_pending": T_INT}
        ),
        "allow_msg_ttl": T_BOOL,
        "subject_delete_marker_ttl": T_DURATION,
        "allow_msg_counter": T_BOOL,
        "allow_atomic": T_BOOL,
        "allow_msg_schedules": T_BOOL,
        "persist_mode": PERSIST_MODE,
        "allow_batched": T_BOOL,
        "metadata": GoMap(T_STRING),
        "pedantic": T_BOOL,
    },
)

STREAM_INFO_REQUEST = GoStruct(
    "JSApiStreamInfoRequest", {"offset": T_INT, "deleted_details": T_BOOL, "subjects_filter": T_STRING}
)
STREAM_NAMES_REQUEST = GoStruct("JSApiStreamNamesRequest", {"offset": T_INT, "subject": T_STRING})
STREAM_LIST_REQUEST = GoStruct("JSApiStreamListRequest", {"offset": T_INT, "subject": T_STRING})
STREAM_PURGE_REQUEST = GoStruct("JSApiStreamPurgeRequest", {"seq": T_UINT64, "filter": T_STRING, "keep": T_UINT64})
MSG_DELETE_REQUEST = GoStruct("JSApiMsgDeleteRequest", {"seq": T_UINT64, "no_erase": T_BOOL})
MSG_GET_REQUEST = GoStruct(
    "JSApiMsgGetRequest",
    {
        "seq": T_UINT64,
        "last_by_subj": T_STRING,
        "next_by_subj": T_STRING,
        "batch": T_INT,
        "max_bytes": T_INT,
        "start_time": GoPointer(T_TIME),
        "multi_last": GoSlice(T_STRING),
        "up_to_seq": T_UINT64,
        "up_to_time": GoPointer(T_TIME),
        "no_hdr": T_BOOL,
    },
)

PEER_REMOVE_REQUEST = GoStruct("JSApiStreamRemovePeerRequest", {"peer": T_STRING})
STEPDOWN_REQUEST = GoStruct("JSApiLeaderStepdownRequest", {"placement": GoPointer(_PLACEMENT)})
PAUSE_REQUEST = GoStruct("JSApiConsumerPauseRequest", {"pause_until": T_TIME})
UNPIN_REQUEST = GoStruct("JSApiConsumerUnpinRequest", {"group": T_STRING})
RESET_REQUEST = GoStruct("JSApiConsumerResetRequest", {"seq": T_UINT64})
