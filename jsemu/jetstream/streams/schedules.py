"""Message schedules (``allow_msg_schedules``, ADR-51) as nats-server 2.15.1 runs them.

A *schedule message* is a message with a ``Nats-Schedule`` header (see ``schedule_pattern``)
and a ``Nats-Schedule-Target`` (a literal subject of the stream, not its own); the server
adds ``Nats-Rollup: sub`` so a new schedule on the same subject replaces the old one, and a
plain message on that subject cancels it. When it is due, the stream stores a copy on the
target (``getScheduledMessages``): the schedule message's headers without ``Nats-Schedule*``,
``Nats-Expected-*``, ``Nats-Msg-Id``, ``Nats-TTL`` and ``Nats-Rollup``, then
``Nats-Scheduler: <schedule subject>``, ``Nats-Schedule-Next: <next time | purge>`` and the
``Nats-Schedule-TTL`` / ``Nats-Schedule-Rollup`` values as ``Nats-TTL`` / ``Nats-Rollup``;
with ``Nats-Schedule-Source`` the headers and body are those of that subject's last message.
The copy goes through the stream's publish path as a sourced message (Go's ``pmsgcb``); a
``Nats-Schedule-Next: purge`` then purges the schedule subject (a one-shot schedule is gone),
a time moves the schedule to it. Deadlines are on the server's clock (``ClockTimers``), never
sooner than 250 ms after arming (Go's ``resetTimer``). The schedule table is rebuilt from the
stored messages after a restart.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from ...protocol.headers import remove_header, remove_header_prefix, slice_header
from ...protocol.msg_ttl import InvalidTTL, parse_msg_ttl
from ...subjects import is_valid_subject, subject_is_literal, subjects_collide
from ...timefmt import format_ns, parse_rfc3339_ns
from ..errors import ApiError, ApiErrors, api_error
from .schedule_pattern import InvalidZone, load_zone, next_fire

if TYPE_CHECKING:
    from ..clock_timers import Timer
    from .stream import Stream

__all__ = ["MsgSchedules", "purged_schedule", "schedule_error", "with_sub_rollup"]

SCHEDULE = b"Nats-Schedule"
TIME_ZONE = b"Nats-Schedule-Time-Zone"
TTL = b"Nats-Schedule-TTL"
ROLLUP = b"Nats-Schedule-Rollup"
TARGET = b"Nats-Schedule-Target"
SOURCE = b"Nats-Schedule-Source"
SCHEDULER = b"Nats-Scheduler"
NEXT = b"Nats-Schedule-Next"
PURGE = b"purge"
_MSG_ROLLUP = b"Nats-Rollup"
#: Go's ``resetTimer`` never fires sooner than this after arming.
MIN_FIRE_NS = 250_000_000
_BATCH = 1024


def _text(value: bytes | None) -> str:
    return (value or b"").decode("utf-8", "surrogateescape")


def _publish_subject(subject: str) -> bool:
    """Go ``IsValidPublishSubject``."""
    return is_valid_subject(subject) and subject_is_literal(subject)


def _zone(hdr: bytes) -> tzinfo | None:
    """``loadMessageScheduleLocation``: None without the header; raises InvalidZone."""
    name = slice_header(TIME_ZONE, hdr)
    if name is None:
        return None
    return load_zone(_text(name))


def schedule_fire(hdr: bytes, ts: int, now: int) -> tuple[int, bool, tzinfo | None] | None:
    """``nextMessageSchedule``: (next fire, repeats, zone) of a header block, (0, ...) for
    none; None when the zone or pattern is invalid."""
    try:
        zone = _zone(hdr)
    except InvalidZone:
        return None
    fire = next_fire(_text(slice_header(SCHEDULE, hdr)), zone, ts, now)
    if fire is None:
        return None
    return fire[0], fire[1], zone


def _schedule_ttl(hdr: bytes) -> bytes | None:
    """``getMessageScheduleTTL``: the raw value (b"" without one), None when invalid."""
    ttl = slice_header(TTL, hdr)
    if not ttl:
        return b""
    try:
        parse_msg_ttl(ttl)
    except InvalidTTL:
        return None
    return ttl


def schedule_error(stream: Stream, subject: bytes, hdr: bytes, now: int) -> ApiError | None:
    """The schedule rules of ``processJetStreamMsg`` (not for sourced messages), in order."""
    cfg = stream.config
    allowed = cfg.allow_msg_schedules
    if SCHEDULE in hdr or TIME_ZONE in hdr:
        try:
            zone = _zone(hdr)
        except InvalidZone:
            return api_error(
                ApiErrors.JSMessageSchedulesTimeZoneInvalidErr if allowed else ApiErrors.JSMessageSchedulesDisabledErr
            )
        fire = next_fire(_text(slice_header(SCHEDULE, hdr)), zone, now, now)
        if fire is None:
            return api_error(
                ApiErrors.JSMessageSchedulesPatternInvalidErr if allowed else ApiErrors.JSMessageSchedulesDisabledErr
            )
        if fire[0]:
            error = _schedule_rules(stream, subject, hdr)
            if error is not None:
                return error
    next_value = slice_header(NEXT, hdr)
    if next_value:
        if next_value != PURGE:
            return api_error(ApiErrors.JSMessageSchedulesSchedulerInvalidErr)
        scheduler = slice_header(SCHEDULER, hdr)
        if not scheduler or scheduler == subject or not _publish_subject(_text(scheduler)):
            return api_error(ApiErrors.JSMessageSchedulesSchedulerInvalidErr)
        if not allowed:
            return api_error(ApiErrors.JSMessageSchedulesDisabledErr)
        last = stream.store.load_last(scheduler)
        if last is not None and not slice_header(SCHEDULE, last.hdr):
            return api_error(ApiErrors.JSMessageSchedulesSchedulerInvalidErr)
    elif slice_header(SCHEDULER, hdr):
        return api_error(ApiErrors.JSMessageSchedulesSchedulerInvalidErr)
    return None


def _schedule_rules(stream: Stream, subject: bytes, hdr: bytes) -> ApiError | None:
    """The checks of a valid, non-empty schedule."""
    cfg = stream.config
    if not cfg.allow_msg_schedules:
        return api_error(ApiErrors.JSMessageSchedulesDisabledErr)
    ttl = _schedule_ttl(hdr)
    if ttl is None:
        return api_error(ApiErrors.JSMessageSchedulesTTLInvalidErr)
    rollup = slice_header(ROLLUP, hdr)
    if rollup and rollup != b"sub":
        return api_error(ApiErrors.JSMessageSchedulesRollupInvalidErr)
    if ttl and not cfg.allow_msg_ttl:
        return api_error(ApiErrors.JSMessageTTLDisabledErr)
    target = slice_header(TARGET, hdr) or b""
    if not target or not _publish_subject(_text(target)) or target == subject:
        return api_error(ApiErrors.JSMessageSchedulesTargetInvalidErr)
    source = slice_header(SOURCE, hdr) or b""
    if source and (source == target or source == subject or not _publish_subject(_text(source))):
        return api_error(ApiErrors.JSMessageSchedulesSourceInvalidErr)
    subjects = cfg.subjects or [cfg.name]
    if not any(subjects_collide(s, _text(target)) for s in subjects):
        return api_error(ApiErrors.JSMessageSchedulesTargetInvalidErr)
    if source and not any(subjects_collide(s, _text(source)) for s in subjects):
        return api_error(ApiErrors.JSMessageSchedulesSourceInvalidErr)
    msg_rollup = slice_header(_MSG_ROLLUP, hdr)
    if msg_rollup and msg_rollup.lower() != b"sub":
        return api_error(ApiErrors.JSMessageSchedulesRollupInvalidErr)
    return None


def gen_header(hdr: bytes, key: bytes, value: bytes) -> bytes:
    """Go ``genHeader``: append ``key: value`` to a header block (or start one)."""
    head = hdr[:-2] if len(hdr) > 2 else b"NATS/1.0\r\n"
    return head + key + b": " + value.strip() + b"\r\n\r\n"


def with_sub_rollup(hdr: bytes, now: int) -> bytes:
    """A schedule message is stored with ``Nats-Rollup: sub`` (added when it has none)."""
    fire = schedule_fire(hdr, now, now)
    if fire is None or not fire[0] or slice_header(_MSG_ROLLUP, hdr):
        return hdr
    return gen_header(hdr, _MSG_ROLLUP, b"sub")


def purged_schedule(hdr: bytes) -> bytes | None:
    """The schedule subject a ``Nats-Schedule-Next: purge`` message removes, if any."""
    if slice_header(NEXT, hdr) != PURGE:
        return None
    return slice_header(SCHEDULER, hdr) or None


class MsgSchedules:
    """One stream's schedules: subject -> (sequence, next fire), fired on a clock timer."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.schedules: dict[bytes, tuple[int, int]] = {}
        #: Subjects whose message is being stored (not fired again until it is).
        self.inflight: set[bytes] = set()
        self._timer: Timer | None = None
        self._running = False

    # --- the store hook (Go's storeRawMsg) ----------------------------------------------

    def stored(self, seq: int, subject: bytes, hdr: bytes, ts: int, arm: bool = True) -> None:
        """Track what a stored message does to the schedules."""
        fire = schedule_fire(hdr, ts, self.stream.js.clock.now_ns()) if hdr and SCHEDULE in hdr else None
        if fire is not None and fire[0]:
            self.schedules[subject] = (seq, fire[0])
            self.inflight.discard(subject)
        elif not hdr or not slice_header(SCHEDULER, hdr):
            self.forget(subject)
        if hdr and NEXT in hdr:
            next_value = slice_header(NEXT, hdr)
            scheduler = slice_header(SCHEDULER, hdr)
            if next_value and next_value != PURGE and scheduler and scheduler in self.schedules:
                try:
                    when = parse_rfc3339_ns(_text(next_value))
                except ValueError:
                    when = None
                if when is not None:
                    self.schedules[scheduler] = (self.schedules[scheduler][0], when)
                    self.inflight.discard(scheduler)
        if arm:
            self.arm()

    def forget(self, subject: bytes) -> None:
        """Drop a schedule (its message is gone)."""
        if self.schedules.pop(subject, None) is not None:
            self.inflight.discard(subject)

    def rebuild(self) -> None:
        """After a restart: every stored schedule message, then the fired copies' next times."""
        store = self.stream.store
        start = store.state().first_seq
        while True:
            rows = store.live_entries(start, _BATCH)
            if not rows:
                break
            for seq, subject, body, ts in rows:
                hdr = body[0] if isinstance(body, tuple) else b""
                if hdr and (SCHEDULE in hdr or NEXT in hdr):
                    self.stored(seq, subject, hdr, ts, arm=False)
            start = rows[-1][0] + 1
        self.arm()

    # --- timer --------------------------------------------------------------------------

    def arm(self) -> None:
        if self._running:
            return
        due = [when for subject, (_, when) in self.schedules.items() if subject not in self.inflight]
        if not due:
            self.stop()
            return
        now = self.stream.js.clock.now_ns()
        deadline = max(min(due), now + MIN_FIRE_NS)
        self._timer = self.stream.js.timers.no_later_than(self._timer, deadline, self.run)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def run(self) -> None:
        """Store a copy of every due schedule message on its target, in sequence order."""
        self._timer = None
        self._running = True
        try:
            for subject, hdr, body in self._due():
                self.stream.store_scheduled(subject, hdr, body)
        finally:
            self._running = False
        self.arm()

    def _due(self) -> list[tuple[bytes, bytes, bytes]]:
        """``getScheduledMessages``: the copies to store, invalid schedules dropped."""
        stream = self.stream
        store = stream.store
        now = stream.js.clock.now_ns()
        out: list[tuple[int, bytes, bytes, bytes]] = []
        for subject, (seq, when) in sorted(self.schedules.items(), key=lambda item: item[1][0]):
            if when > now or subject in self.inflight:
                continue
            msg = store.load(seq)
            if msg is None or msg.subject != subject:
                self.forget(subject)
                continue
            built = self._copy(subject, msg.hdr, msg.data, when, now)
            if built is None:
                self.forget(subject)
                continue
            self.inflight.add(subject)
            out.append((seq, *built))
        return [(target, hdr, body) for _, target, hdr, body in out]

    def _copy(self, subject: bytes, hdr: bytes, data: bytes, when: int, now: int) -> tuple[bytes, bytes, bytes] | None:
        if not slice_header(SCHEDULE, hdr):
            return None
        fire = schedule_fire(hdr, when, now)
        ttl = _schedule_ttl(hdr)
        target = slice_header(TARGET, hdr)
        if fire is None or ttl is None or not target:
            return None
        rollup = slice_header(ROLLUP, hdr)
        source = slice_header(SOURCE, hdr)
        if source:
            last = self.stream.store.load_last(source)
            if last is not None:
                hdr, data = last.hdr, last.data
        out = remove_header_prefix(hdr, b"Nats-Schedule")
        out = remove_header_prefix(out, b"Nats-Expected-")
        for key in (b"Nats-Msg-Id", b"Nats-TTL", _MSG_ROLLUP):
            out = remove_header(out, key)
        out = gen_header(out, SCHEDULER, subject)
        next_ns, repeat, zone = fire
        out = gen_header(out, NEXT, _format(next_ns, zone).encode() if repeat else PURGE)
        if ttl:
            out = gen_header(out, b"Nats-TTL", ttl)
        if rollup:
            out = gen_header(out, _MSG_ROLLUP, rollup)
        return target, out, data


def _format(ns: int, zone: tzinfo | None) -> str:
    """Go ``time.RFC3339Nano`` of a time in ``zone`` (UTC without one)."""
    if zone is None:
        return format_ns(ns)
    offset = datetime.fromtimestamp(ns // 1_000_000_000, zone).utcoffset()
    return format_ns(ns, int(offset.total_seconds()) if offset is not None else 0)
