"""Pausing a consumer (2.11): the pause state a consumer reports, the pause itself (a config
update, as ``$JS.API.CONSUMER.PAUSE`` in ``api/consumers.py`` asks for), and the
``consumer_pause`` advisory.

A paused consumer keeps its config's ``pause_until``; it delivers nothing before that time
on the server's clock (``loopAndGatherMsgs`` goes straight to waiting, where no-wait
requests end with 404 and others expire), and a timer on that clock resumes it and
publishes the advisory, as ``updatePauseState`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...ids import new_event_id
from ...protocol.gojson import GO_ZERO_TIME_NS, dumps
from ...timefmt import format_ns
from .config import set_static_metadata

if TYPE_CHECKING:
    from ..context import Advising
    from .consumer import Consumer
    from .host import ConsumerSetHost

__all__ = ["is_paused", "pause", "pause_remaining", "send_pause_advisory"]

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


def pause(js: ConsumerSetHost, consumer: Consumer, until: int | None) -> None:
    """Pause ``consumer`` until ``until`` (Unix ns), or resume it (None): a config update,
    so its resume timer and advisory follow (``updatePauseState``), saved with the config."""
    cfg = consumer.config.clone()
    cfg.pause_until = until
    set_static_metadata(cfg)
    consumer.update_config(cfg)
    js.consumer_store.created(consumer)  # the pause is part of the saved config
