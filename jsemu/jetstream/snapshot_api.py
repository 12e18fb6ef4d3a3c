"""``$JS.API.STREAM.SNAPSHOT.<stream>`` and ``$JS.API.STREAM.RESTORE.<stream>``: refused.

jsemu does not implement stream snapshots or restores yet. Both handlers make nats-server
2.15.1's request checks in its order (so a bad request gets the server's error), then
answer what the server would have started with a clear ``snapshot failed`` / ``restore
failed`` error instead of leaving the client waiting for chunks that never come.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.gojson import T_BOOL, T_INT, T_STRING, T_TIME, T_UINT64, GoMap, GoPointer, GoSlice, GoStruct
from ..subjects import is_valid_subject, subject_is_literal
from .api import ApiRequest, api, error_response, is_empty_request
from .errors import ApiError, ApiErrors, api_error
from .requests import STREAM_CONFIG_REQUEST

if TYPE_CHECKING:
    from .service import JetStream

__all__ = ["RESTORE_REQUEST", "SNAPSHOT_REQUEST"]

SNAPSHOT_REQUEST = GoStruct(
    "JSApiStreamSnapshotRequest",
    {
        "deliver_subject": T_STRING,
        "no_consumers": T_BOOL,
        "chunk_size": T_INT,
        "window_size": T_INT,
        "jsck": T_BOOL,
    },
)
_STREAM_CONFIG = GoStruct("StreamConfig", {k: v for k, v in STREAM_CONFIG_REQUEST.fields.items() if k != "pedantic"})
_STREAM_STATE = GoStruct(
    "StreamState",
    {
        "messages": T_UINT64,
        "bytes": T_UINT64,
        "first_seq": T_UINT64,
        "first_ts": T_TIME,
        "last_seq": T_UINT64,
        "last_ts": T_TIME,
        "num_subjects": T_INT,
        "subjects": GoMap(T_UINT64),
        "num_deleted": T_INT,
        "deleted": GoSlice(T_UINT64),
        "lost": GoPointer(GoStruct("LostStreamData", {"msgs": GoSlice(T_UINT64), "bytes": T_UINT64})),
        "consumer_count": T_INT,
    },
)
RESTORE_REQUEST = GoStruct("JSApiStreamRestoreRequest", {"config": _STREAM_CONFIG, "state": _STREAM_STATE})


@api("STREAM.SNAPSHOT.*", refused=True)
def stream_snapshot(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamSnapshotRequest``'s checks, then the refusal."""
    kind = "stream_snapshot_response"
    try:
        req.check_api_level()
        if is_empty_request(req.data):
            raise api_error(ApiErrors.JSBadRequestErr)
        if req.token(5) not in js.streams:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        values = req.decode(SNAPSHOT_REQUEST)
        deliver = values.get("deliver_subject", "")
        if not (is_valid_subject(deliver) and subject_is_literal(deliver)):
            raise api_error(ApiErrors.JSSnapshotDeliverSubjectInvalidErr)
        raise api_error(ApiErrors.JSStreamSnapshotErrF, err="jsemu does not implement stream snapshots yet")
    except ApiError as err:
        return error_response(kind, err)


@api("STREAM.RESTORE.*", refused=True)
def stream_restore(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamRestoreRequest``'s checks, then the refusal."""
    kind = "stream_restore_response"
    try:
        req.check_api_level()
        if is_empty_request(req.data):
            raise api_error(ApiErrors.JSBadRequestErr)
        values = req.decode(RESTORE_REQUEST)
        name = req.token(5)
        if values.get("config", {}).get("name", "") != name:
            raise api_error(ApiErrors.JSStreamMismatchErr)
        if name in js.streams:
            raise api_error(ApiErrors.JSStreamNameExistRestoreFailedErr)
        raise api_error(ApiErrors.JSStreamRestoreErrF, err="jsemu does not implement stream restores yet")
    except ApiError as err:
        return error_response(kind, err, deliver_subject="")
