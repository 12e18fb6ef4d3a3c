"""Consumer handlers of ``$JS.API``: create (all subject forms), info, names, list, delete,
pause and unpin.

Each handler checks the request in the order of its Go counterpart in ``jetstream_api.go``
(standalone server), so a bad request gets the same first error, then calls the stream's
:class:`ConsumerSet` (which owns the consumers' lifetimes, ``addConsumerWithAssignment``
included), the consumer or its feature module (``consumers/pause.py``,
``consumers/priority_groups.py``), and builds the reply. The leader step-downs are in
``api/cluster.py``; a consumer's pull requests (``CONSUMER.MSG.NEXT``) reach it through its
own subscription, which the ``ConsumerSet`` makes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...protocol.gojson import GO_ZERO_TIME_NS, T_INT, GoJSONError, GoStruct, unmarshal_request
from ...protocol.texts import CONSUMER_REPLICAS_ACROSS_PROCESSES
from ...timefmt import format_ns
from ..consumers.config import CREATE_CONSUMER_REQUEST, config_from_request, set_static_metadata
from ..consumers.consumer import Consumer
from ..consumers.pause import is_paused, pause, pause_remaining, send_pause_advisory
from ..errors import ApiError, ApiErrors, api_error
from ..requests import PAUSE_REQUEST, UNPIN_REQUEST
from .registry import ApiRequest, api, error_response, is_empty_request, is_json_object_or_array, response_type

if TYPE_CHECKING:
    from ..service import JetStream

__all__ = [
    "consumer_create",
    "consumer_delete",
    "consumer_info",
    "consumer_list",
    "consumer_names",
    "consumer_pause",
    "consumer_unpin",
    "unpin_group",
]

CONSUMERS_REQUEST = GoStruct("JSApiConsumersRequest", {"offset": T_INT})
NAMES_LIMIT = 1024  # JSApiNamesLimit
LIST_LIMIT = 256  # JSApiListLimit
_PAGED_ZERO = {"total": 0, "offset": 0, "limit": 0}
#: A priority group's name, as ``CONSUMER.UNPIN`` checks it.
_GROUP_NAME = re.compile(r"^[a-zA-Z0-9/_=-]{1,16}$")


# --- create -----------------------------------------------------------------------------


@api("CONSUMER.CREATE.*")
@api("CONSUMER.CREATE.*.>")
def consumer_create(js: JetStream, req: ApiRequest) -> dict[str, Any] | None:
    return _create(js, req, durable_form=False)


@api("CONSUMER.DURABLE.CREATE.*.*")
def consumer_durable_create(js: JetStream, req: ApiRequest) -> dict[str, Any] | None:
    return _create(js, req, durable_form=True)


def _create(js: JetStream, req: ApiRequest, durable_form: bool) -> dict[str, Any] | None:
    """``jsConsumerCreateRequest`` then ``addConsumerWithAssignment``."""
    kind = "consumer_create_response"
    try:
        values = req.decode(CREATE_CONSUMER_REQUEST)
        req.check_api_level()
        n = len(req.tokens)
        filtered = ""
        if durable_form:
            if n != 7:
                raise api_error(ApiErrors.JSConsumerDurableNameNotInSubjectErr)
            stream_name, consumer_name = req.token(6), req.token(7)
        elif n == 5:
            stream_name = req.token(5)
            consumer_name = (values.get("config") or {}).get("name") or ""
        else:
            stream_name, consumer_name = req.token(5), req.token(6)
            if n > 6:
                filtered = ".".join(req.tokens[6:])
        if stream_name != (values.get("stream_name") or ""):
            raise api_error(ApiErrors.JSStreamMismatchErr)
        if consumer_name and ("\\" in consumer_name or "/" in consumer_name):
            raise api_error(ApiErrors.JSConsumerNameContainsPathSeparatorsErr)
        cfg = config_from_request(values.get("config") or {})
        if durable_form:
            if not cfg.durable_name:
                raise api_error(ApiErrors.JSConsumerDurableNameNotSetErr)
            if consumer_name != cfg.durable_name:
                raise api_error(ApiErrors.JSConsumerDurableNameNotMatchSubjectErr)
            cfg.name = consumer_name
        elif n >= 6:
            if cfg.durable_name and consumer_name != cfg.durable_name:
                raise api_error(ApiErrors.JSConsumerDurableNameNotMatchSubjectErr)
            cfg.name = consumer_name
        if n == 5 and not durable_form and cfg.durable_name:
            raise api_error(ApiErrors.JSConsumerEphemeralWithDurableNameErr)
        if filtered and cfg.filter_subjects:
            raise api_error(ApiErrors.JSConsumerMultipleFiltersNotAllowed)
        if filtered and cfg.filter_subject != filtered:
            raise api_error(ApiErrors.JSConsumerCreateFilterSubjectMismatchErr)
        if cfg.num_replicas > 1 and js.process_cluster:
            raise api_error(CONSUMER_REPLICAS_ACROSS_PROCESSES)
        if cfg.num_replicas > 1 and not js.clustered:
            raise api_error(ApiErrors.JSStreamReplicasNotSupportedErr)
        stream = js.streams.get(stream_name)
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        consumers = js.consumer_set(stream)
        existing = consumers.by_name.get(consumer_name) if consumer_name else None
        if existing is not None:
            cfg.pause_until = existing.config.pause_until
        set_static_metadata(cfg)
        consumer = consumers.create(cfg, values.get("action") or "", bool(values.get("pedantic")))
    except ApiError as err:
        return error_response(kind, err)
    out: dict[str, Any] = {"type": response_type(kind)}
    out.update(consumer.info_json())
    if consumer.paused:  # the server sends the pause advisory after its reply
        js.server.loop.call_soon(_advise_paused, consumer)
    return out


def _advise_paused(consumer: Consumer) -> None:
    if not consumer.closed:
        send_pause_advisory(consumer.js, consumer)
        consumer.js.server.flush()


# --- info / names / list / delete -------------------------------------------------------


def _lookup(js: JetStream, req: ApiRequest) -> Consumer:
    stream = js.streams.get(req.token(5))
    if stream is None:
        raise api_error(ApiErrors.JSStreamNotFoundErr)
    consumer = js.consumer_set(stream).by_name.get(req.token(6))
    if consumer is None:
        raise api_error(ApiErrors.JSConsumerNotFoundErr)
    return consumer


@api("CONSUMER.INFO.*.*")
def consumer_info(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "consumer_info_response"
    try:
        req.check_api_level()
        if not is_empty_request(req.data):
            raise api_error(ApiErrors.JSNotEmptyRequestErr)
        consumer = _lookup(js, req)
        group = consumer.group
        if group is not None and group.quorum is not None and group.quorum.stalled and not group.current_leader():
            raise api_error(ApiErrors.JSClusterNotAvailErr)  # no quorum: no leader to answer
    except ApiError as err:
        return error_response(kind, err)
    out: dict[str, Any] = {"type": response_type(kind)}
    out.update(consumer.info_json())
    return out


def _offset(req: ApiRequest) -> int:
    if is_json_object_or_array(req.data):
        values = req.decode(CONSUMERS_REQUEST)
        return max(values.get("offset") or 0, 0)
    return 0


def _page(js: JetStream, req: ApiRequest, kind: str, limit: int, item: Callable[[Consumer], Any]) -> dict[str, Any]:
    """NAMES and LIST: the stream's consumers by name, one page from the request's offset."""
    try:
        req.check_api_level()
        offset = _offset(req)
        stream = js.streams.get(req.token(5))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
    except ApiError as err:
        return error_response(kind, err, **_PAGED_ZERO, consumers=[])
    by_name = js.consumer_set(stream).by_name
    names = sorted(by_name)
    offset = min(offset, len(names))
    return {
        "type": response_type(kind),
        "total": len(names),
        "offset": offset,
        "limit": limit,
        "consumers": [item(by_name[n]) for n in names[offset : offset + limit]],
    }


@api("CONSUMER.NAMES.*")
def consumer_names(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    return _page(js, req, "consumer_names_response", NAMES_LIMIT, lambda c: c.name)


@api("CONSUMER.LIST.*")
def consumer_list(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    return _page(js, req, "consumer_list_response", LIST_LIMIT, lambda c: c.info_json(dynamic_metadata=False))


@api("CONSUMER.DELETE.*.*")
def consumer_delete(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    kind = "consumer_delete_response"
    try:
        req.check_api_level()
        if not is_empty_request(req.data):
            raise api_error(ApiErrors.JSNotEmptyRequestErr)
        consumer = _lookup(js, req)
    except ApiError as err:
        return error_response(kind, err)
    js.delete_consumer(consumer)
    return {"type": response_type(kind), "success": True}


# --- pause ------------------------------------------------------------------------------

_ZERO_PAUSE_REPLY = {"paused": False, "pause_until": format_ns(GO_ZERO_TIME_NS)}


@api("CONSUMER.PAUSE.*.*")
def consumer_pause(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsConsumerPauseRequest`` (standalone): a zero or missing time resumes; a body that
    is not a JSON object is taken as no time at all, as the server does."""
    kind = "consumer_pause_response"
    try:
        values: dict[str, Any] = {}
        if is_json_object_or_array(req.data):
            values = req.decode(PAUSE_REQUEST)
        req.check_api_level()
        consumer = _lookup(js, req)
    except ApiError as err:
        return error_response(kind, err, **_ZERO_PAUSE_REPLY)
    until = values.get("pause_until", GO_ZERO_TIME_NS)
    pause_until = None if until == GO_ZERO_TIME_NS else until
    pause(js, consumer, pause_until)
    now = js.clock.now_ns()
    out: dict[str, Any] = {
        "type": response_type(kind),
        "paused": is_paused(pause_until, now),
        "pause_until": format_ns(until),
    }
    remaining = pause_remaining(pause_until, now)
    if remaining:
        out["pause_remaining"] = remaining
    return out


# --- unpin ------------------------------------------------------------------------------


def _unmarshal_unpin(data: bytes) -> dict[str, Any]:
    """``json.Unmarshal`` (not the API's strict decoder): one value, unknown keys ignored."""
    try:
        return unmarshal_request(data, UNPIN_REQUEST)
    except GoJSONError as exc:
        raise api_error(ApiErrors.JSInvalidJSONErr, err=str(exc)) from None


def unpin_group(req: ApiRequest) -> str:
    """The group of an unpin request, checked as ``jsConsumerUnpinRequest`` reads it (an
    account without JetStream checks it the same way: ``api/not_enabled.py``)."""
    group: str = _unmarshal_unpin(req.data).get("group") or ""
    if not group:
        raise api_error(ApiErrors.JSInvalidJSONErr, err="consumer group not specified")
    if not _GROUP_NAME.match(group):
        raise api_error(ApiErrors.JSConsumerInvalidGroupNameErr)
    return group


@api("CONSUMER.UNPIN.*.*")
def consumer_unpin(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsConsumerUnpinRequest`` (standalone), checks in its order."""
    kind = "consumer_unpin_response"
    try:
        req.check_api_level()
        group = unpin_group(req)
        consumer = _lookup(js, req)
        if group not in (consumer.config.priority_groups or []):
            raise api_error(ApiErrors.JSConsumerInvalidPriorityGroupErr)
    except ApiError as err:
        return error_response(kind, err)
    if consumer.priority is not None:
        consumer.priority.unpin(group, "admin")
        consumer.deliver_waiting()
    return {"type": response_type(kind)}
