"""Pausing a consumer (2.11): ``$JS.API.CONSUMER.PAUSE.<stream>.<consumer>``, the pause
state a consumer reports, and the ``consumer_pause`` advisory.

A paused consumer keeps its config's ``pause_until``; it delivers nothing before that time
on the server's clock (``loopAndGatherMsgs`` goes straight to waiting, where no-wait
requests end with 404 and others expire), and a timer on that clock resumes it and
publishes the advisory, as ``updatePauseState`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...protocol.gojson import GO_ZERO_TIME_NS, T_TIME, GoStruct, dumps
from ...timefmt import format_ns
from ..api.registry import ApiRequest, api, error_response, is_json_object_or_array, response_type
from ..errors import ApiError, ApiErrors, api_error
from ..events.event_id import new_event_id
from .config import set_static_metadata

if TYPE_CHECKING:
    from ..context import Advising
    from ..service import JetStream
    from .consumer import Consumer

__all__ = ["is_paused", "pause_remaining", "send_pause_advisory"]

PAUSE_REQUEST = GoStruct("JSApiConsumerPauseRequest", {"pause_until": T_TIME})
_ADVISORY_TYPE = "io.nats.jetstream.advisory.v1.consumer_pause"
_ADVISORY_PREFIX = "$JS.EVENT.ADVISORY.CONSUMER.PAUSE."


def _until(pause_until: int | None) -> int:
    """The deadline in Unix ns, GO_ZERO_TIME_NS when unset."""
    return GO_ZERO_TIME_NS if pause_until is None else pause_until


def is_paused(pause_until: int | None, now: int) -> bool:
    """``time.Now().Before(*PauseUntil)`` (an unset or zero deadline is never ahead)."""
    return now < _until(pause_until)


def pause_remaining(pause_until: int | None, now: int) -> int:
    """The info's ``pause_remaining``: 0 (left out) unless paused."""
    until = _until(pause_until)
    return until - now if now < until else 0


def send_pause_advisory(js: Advising, consumer: Consumer) -> None:
    """``sendPauseAdvisoryLocked``: on ``$JS.EVENT.ADVISORY.CONSUMER.PAUSE.<stream>.<name>``."""
    now = js.clock.now_ns()
    until = _until(consumer.config.pause_until)
    event: dict[str, Any] = {
        "type": _ADVISORY_TYPE,
        "id": new_event_id(),
        "timestamp": format_ns(now),
        "stream": consumer.stream.name,
        "consumer": consumer.name,
        "paused": now < until,
        "pause_until": format_ns(until),
    }
    subject = f"{_ADVISORY_PREFIX}{consumer.stream.name}.{consumer.name}".encode()
    js.out.send(subject, -1, dumps(event).encode())


_ZERO_REPLY = {"paused": False, "pause_until": format_ns(GO_ZERO_TIME_NS)}


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
        stream = js.streams.get(req.token(5))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        consumer = js.consumer_set(stream).by_name.get(req.token(6))
        if consumer is None:
            raise api_error(ApiErrors.JSConsumerNotFoundErr)
    except ApiError as err:
        return error_response(kind, err, **_ZERO_REPLY)
    until = values.get("pause_until", GO_ZERO_TIME_NS)
    cfg = consumer.config.clone()
    cfg.pause_until = None if until == GO_ZERO_TIME_NS else until
    set_static_metadata(cfg)
    consumer.update_config(cfg)
    js.consumer_store.created(consumer)  # the pause is part of the saved config
    now = js.clock.now_ns()
    out: dict[str, Any] = {
        "type": response_type(kind),
        "paused": is_paused(cfg.pause_until, now),
        "pause_until": format_ns(until),
    }
    remaining = pause_remaining(cfg.pause_until, now)
    if remaining:
        out["pause_remaining"] = remaining
    return out
