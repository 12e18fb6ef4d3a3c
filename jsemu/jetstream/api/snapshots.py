"""Snapshot handlers of ``$JS.API``: ``STREAM.SNAPSHOT.<stream>`` and ``STREAM.RESTORE.<stream>``.

The request checks are nats-server 2.15.1's, in its order (``jsStreamSnapshotRequest``,
``jsStreamRestoreRequest``); the reply then hands over to the transfers
(``persistence/snapshot_transfer.py``: chunks out paced by acks, chunks in until the empty
one) and the archive (``persistence/snapshot_archive.py``). A snapshot holds the stream's
messages and, unless ``no_consumers``, its consumers (ephemeral ones too, as 2.15.1's) with
their state. A family of its own because its replies start a transfer rather than end the
request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...protocol.gojson import T_BOOL, T_INT, T_STRING, T_TIME, T_UINT64, GoMap, GoPointer, GoSlice, GoStruct
from ...subjects import is_valid_subject, subject_is_literal
from ..errors import ApiError, ApiErrors, api_error
from ..limits.counts import stream_limits_error
from ..persistence.snapshot_archive import build_archive
from ..persistence.snapshot_transfer import RestoreReceiver, SnapshotSender
from ..requests import STREAM_CONFIG_REQUEST
from ..streams.config import check_stream_config, config_from_request, config_json
from .registry import ApiRequest, api, error_response, is_empty_request, response_type

if TYPE_CHECKING:
    from ..service import JetStream

__all__ = ["RESTORE_REQUEST", "SNAPSHOT_REQUEST", "stream_restore", "stream_snapshot"]

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


@api("STREAM.SNAPSHOT.*")
def stream_snapshot(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamSnapshotRequest``: the reply, then the chunks (after it, on the loop)."""
    kind = "stream_snapshot_response"
    try:
        req.check_api_level()
        if is_empty_request(req.data):
            raise api_error(ApiErrors.JSBadRequestErr)
        stream = js.streams.get(req.token(5))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        values = req.decode(SNAPSHOT_REQUEST)
        deliver = values.get("deliver_subject", "")
        if not (is_valid_subject(deliver) and subject_is_literal(deliver)):
            raise api_error(ApiErrors.JSSnapshotDeliverSubjectInvalidErr)
    except ApiError as err:
        return error_response(kind, err)
    consumers = [] if values.get("no_consumers") else list(js.consumer_set(stream).by_name.values())
    state = stream.state_json()
    client = js.account.requester()
    sizes = (int(values.get("chunk_size") or 0), int(values.get("window_size") or 0))
    sender = SnapshotSender(js, stream.name, deliver, build_archive(stream, consumers), sizes, client)
    js.server.loop.call_soon(sender.start, state)
    return {"type": response_type(kind), "config": config_json(stream.config, False), "state": state}


@api("STREAM.RESTORE.*")
def stream_restore(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamRestoreRequest``: checks, then the upload subject."""
    kind = "stream_restore_response"
    try:
        req.check_api_level()
        if is_empty_request(req.data):
            raise api_error(ApiErrors.JSBadRequestErr)
        values = req.decode(RESTORE_REQUEST)
        name = req.token(5)
        config = dict(values.get("config") or {})
        if not config.get("name"):
            config["name"] = name
        if config["name"] != name:
            raise api_error(ApiErrors.JSStreamMismatchErr)
        if "\\" in name or "/" in name:
            raise api_error(ApiErrors.JSStreamNameContainsPathSeparatorsErr)
        cfg = check_stream_config(config_from_request(config)[0], js.lookup_config, False, js.limits)
        over = stream_limits_error(js, cfg)
        if over is not None:
            raise over
        if name in js.streams:
            raise api_error(ApiErrors.JSStreamNameExistRestoreFailedErr)
    except ApiError as err:
        return error_response(kind, err, deliver_subject="")
    receiver = RestoreReceiver(js, cfg, js.account.requester())
    receiver.start()
    return {"type": response_type(kind), "deliver_subject": receiver.subject}
