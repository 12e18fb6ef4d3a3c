"""Priority groups of pull consumers (2.11+): the ``overflow``, ``pinned_client`` and
``prioritized`` policies, ``$JS.API.CONSUMER.UNPIN`` and the pinned / unpinned advisories.

A consumer with a priority policy has a :class:`PriorityGroups`; one without has None, so
the pull path pays one ``is None`` test. The pieces follow ``consumer.go``:
``check_request`` is the group part of ``processNextMsgRequest``, ``admit`` the per-request
part of ``nextWaiting`` (assign a pin, cycle requests that must wait, refuse a stale pin
with 423), ``place`` / ``requeue`` the ``prioritized`` wait queue (``insertSorted``,
``popAndRequeue``). The pin lapses after ``priority_timeout`` without a request carrying
it, on the server's clock.
"""

from __future__ import annotations

import re
from collections import deque
from typing import TYPE_CHECKING, Any

from ...protocol import texts
from ...protocol.gojson import T_STRING, GoJSONError, GoStruct, dumps
from ...protocol.gostruct import decode_request, scan_values
from ...timefmt import format_ns
from ..api.registry import ApiRequest, api, error_response, response_type
from ..errors import ApiError, ApiErrors, api_error
from ..events.event_id import new_event_id

if TYPE_CHECKING:
    from ..clock_timers import Timer
    from .consumer import Consumer
    from .pull_request import NextRequest, PullRequest

__all__ = ["ADMIT", "CYCLE", "DROPPED", "PriorityGroups"]

ADMIT, CYCLE, DROPPED = 0, 1, 2
_NO_PRIORITY = 2**31 - 1  # math.MaxInt32: a request without a priority goes last
_GROUP_NAME = re.compile(r"^[a-zA-Z0-9/_=-]{1,16}$")
_PIN_HEADER = b"Nats-Pin-Id: "
_ACCOUNT = "$G"
UNPIN_REQUEST = GoStruct("JSApiConsumerUnpinRequest", {"group": T_STRING})


def _bad(reason: str) -> bytes:
    return texts.PULL_BAD_REQUEST % reason.encode()


def request_priority(wr: PullRequest) -> int:
    return _NO_PRIORITY if wr.pg is None else int(wr.pg.get("priority") or 0)


class PriorityGroups:
    """The priority state of one consumer: its policy and, for ``pinned_client``, the pin."""

    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.pin_id = ""
        self.pinned_ns = 0
        self._ttl_timer: Timer | None = None

    @property
    def policy(self) -> str:
        return self.consumer.config.priority_policy

    # --- processNextMsgRequest ----------------------------------------------------------

    def check_request(self, req: NextRequest) -> bytes | None:
        """The group checks of a JSON pull request (a bare batch number has no group)."""
        pg = req.group
        if pg is None:
            return None
        group = pg.get("group") or ""
        if not group:
            return _bad(texts.PULL_BAD_GROUP_MISSING)
        if group not in (self.consumer.config.priority_groups or []):
            return _bad(texts.PULL_BAD_INVALID_GROUP)
        if self.pin_id:
            pin = pg.get("id") or ""
            if pin == self.pin_id:
                self._arm_ttl(group)
            elif pin:
                return texts.PULL_PIN_ID_MISMATCH
        return None

    # --- nextWaiting --------------------------------------------------------------------

    def needs_pin(self) -> bool:
        return self.policy == "pinned_client" and not self.pin_id

    def admit(self, wr: PullRequest, need_new_pin: bool, npc: int) -> tuple[int, bool]:
        """May the request at the head take the next message? ``(verdict, pin assigned)``;
        a ``DROPPED`` request has had its 423 and is gone from the queue."""
        assigned = False
        pg = wr.pg
        pin = (pg.get("id") or "") if pg is not None else ""
        if need_new_pin:
            if not pin:
                assigned = self._assign(wr)
            else:
                self._wrong_pin(wr)
                return DROPPED, False
        elif self.pin_id and pin != self.pin_id:
            if pin:
                self._wrong_pin(wr)
                return DROPPED, False
            return CYCLE, False
        if self.policy == "overflow" and pg is not None:
            min_pending = int(pg.get("min_pending") or 0)
            min_ack = int(pg.get("min_ack_pending") or 0)
            if (min_pending > 0 or min_ack > 0) and not (
                (min_pending > 0 and min_pending <= npc + 1) or (min_ack > 0 and min_ack <= len(self.consumer.pending))
            ):
                return CYCLE, assigned
        return ADMIT, assigned

    def _wrong_pin(self, wr: PullRequest) -> None:
        c = self.consumer
        c.waiting.popleft()
        c._send_status(wr.reply, texts.PULL_WRONG_PIN_ID % (wr.n, wr.b))

    def pin_header(self, hdr: bytes) -> bytes:
        """``genHeader(hdr, "Nats-Pin-Id", pin)`` for a message to a pinned client."""
        line = _PIN_HEADER + self.pin_id.encode() + b"\r\n"
        if len(hdr) > 2:
            return hdr[:-2] + line + b"\r\n"
        return b"NATS/1.0\r\n" + line + b"\r\n"

    # --- prioritized wait queue -----------------------------------------------------------

    @staticmethod
    def place(waiting: deque[PullRequest], wr: PullRequest) -> None:
        """``insertSorted``: after every request of the same or a more urgent priority."""
        priority = request_priority(wr)
        for i, other in enumerate(waiting):
            if request_priority(other) > priority:
                waiting.insert(i, wr)
                return
        waiting.append(wr)

    # --- the pin --------------------------------------------------------------------------

    def _assign(self, wr: PullRequest) -> bool:
        """``assignNewPinId``: only a request naming its group gets (and carries) the pin."""
        pg = wr.pg
        if pg is None or not pg.get("group"):
            return False
        c = self.consumer
        self.pin_id = new_event_id()
        self.pinned_ns = c.js.clock.now_ns()
        pg["id"] = self.pin_id
        self._arm_ttl(pg["group"])
        self._advise("PINNED", "consumer_group_pinned", pg["group"], pinned_id=self.pin_id)
        return True

    def unassign(self) -> None:
        """``unassignPinId``."""
        self.pin_id = ""
        self.pinned_ns = 0
        if self._ttl_timer is not None:
            self._ttl_timer.cancel()
            self._ttl_timer = None

    def unpin(self, group: str, reason: str) -> None:
        self.unassign()
        self._advise("UNPINNED", "consumer_group_unpinned", group, reason=reason)

    def _arm_ttl(self, group: str) -> None:
        """``setPinnedTimer``: the pin lapses ``priority_timeout`` after it was last used."""
        c = self.consumer
        if self._ttl_timer is not None:
            self._ttl_timer.cancel()
        deadline = c.js.clock.now_ns() + c.config.priority_timeout
        self._ttl_timer = c.js.timers.at(deadline, lambda: self._on_ttl(group))

    def _on_ttl(self, group: str) -> None:
        self._ttl_timer = None
        c = self.consumer
        if c.closed or not self.pin_id:
            return
        self.unpin(group, "timeout")
        c.deliver_waiting()
        c.js.server.flush()

    def _advise(self, kind: str, event_type: str, group: str, **fields: str) -> None:
        c = self.consumer
        event: dict[str, Any] = {
            "type": f"io.nats.jetstream.advisory.v1.{event_type}",
            "id": new_event_id(),
            "timestamp": format_ns(c.js.clock.now_ns()),
            "account": _ACCOUNT,
            "stream": c.stream.name,
            "consumer": c.name,
            "group": group,
            **fields,
        }
        subject = f"$JS.EVENT.ADVISORY.CONSUMER.{kind}.{c.stream.name}.{c.name}".encode()
        c.js.out.send(subject, -1, dumps(event).encode())

    def info(self) -> list[dict[str, Any]]:
        """The info's ``priority_groups``: the first group and its pin (Go keeps one)."""
        groups = self.consumer.config.priority_groups or []
        if not groups:
            return []
        state: dict[str, Any] = {"group": groups[0]}
        if self.pin_id:
            state["pinned_client_id"] = self.pin_id
        state["pinned_ts"] = format_ns(self.pinned_ns)
        return [state]


# --- $JS.API.CONSUMER.UNPIN ---------------------------------------------------------------


def _unmarshal(data: bytes) -> dict[str, Any]:
    """``json.Unmarshal`` (not the API's strict decoder): one value, unknown keys ignored."""
    try:
        spans = list(scan_values(data))
    except GoJSONError as exc:
        text = str(exc)
        if text == "unexpected EOF":
            text = "unexpected end of JSON input"
        raise api_error(ApiErrors.JSInvalidJSONErr, err=re.sub(r" at offset \d+$", "", text)) from None
    if not spans:
        raise api_error(ApiErrors.JSInvalidJSONErr, err="unexpected end of JSON input")
    try:
        return decode_request(data, UNPIN_REQUEST, strict=False)
    except GoJSONError as exc:
        raise api_error(ApiErrors.JSInvalidJSONErr, err=str(exc)) from None


@api("CONSUMER.UNPIN.*.*")
def consumer_unpin(js: Any, req: ApiRequest) -> dict[str, Any]:
    """``jsConsumerUnpinRequest`` (standalone), checks in its order."""
    kind = "consumer_unpin_response"
    try:
        req.check_api_level()
        group = _unmarshal(req.data).get("group") or ""
        if not group:
            raise api_error(ApiErrors.JSInvalidJSONErr, err="consumer group not specified")
        if not _GROUP_NAME.match(group):
            raise api_error(ApiErrors.JSConsumerInvalidGroupNameErr)
        stream = js.streams.get(req.token(5))
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        consumer = js.consumer_set(stream).by_name.get(req.token(6))
        if consumer is None:
            raise api_error(ApiErrors.JSConsumerNotFoundErr)
        if group not in (consumer.config.priority_groups or []):
            raise api_error(ApiErrors.JSConsumerInvalidPriorityGroupErr)
    except ApiError as err:
        return error_response(kind, err)
    if consumer.priority is not None:
        consumer.priority.unpin(group, "admin")
        consumer.deliver_waiting()
    return {"type": response_type(kind)}


#: For the not-enabled answers (``jetstream/api/not_enabled.py``), which check an unpin request the same way.
GROUP_NAME = _GROUP_NAME
unmarshal_unpin = _unmarshal
