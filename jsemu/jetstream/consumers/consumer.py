"""A consumer of a stream, pull or push: its delivery position, acks, redeliveries, waiting
pull requests and timers. It follows nats-server's ``consumer.go`` (one type with its state
and timers), kept smaller.

Theory of operation
-------------------
State (grouped in ``__init__``):

* delivery position: the next stream and consumer sequences to hand out (Go's ``sseq``,
  ``dseq``), with ``deliver_policy`` ``last_per_subject`` the sequences still to hand out;
* the consumer-store view the info reports (``delivered``, ``ack_floor``) and the consumer's
  own ack floor (``own_ack_floor``, what ``needAck`` reads: it differs after a purge or a drop
  at ``max_deliver``);
* ack state: ``pending`` (stream sequence -> [delivery sequence, delivery time]), the
  redelivery counts and the redelivery queue (in the order messages became due);
* ``waiting`` pull requests (:mod:`.pull_request`); a push consumer (``deliver_subject``) is
  the same engine with one endless request to its deliver subject while that has interest
  (``active``);
* the run being delivered (:mod:`.delivery`: the gathered messages, the read-ahead, the
  flow-control window), shared with the stretch loop of :mod:`.fast`.

What changes it: creation (the start position: :mod:`.start_position`), a pull request
(``next_request``), a delivery run (``deliver_waiting``: ``_pull_run`` / ``_push_run``;
``getNextMsg`` is ``_get_next``: redeliveries first, then ``max_ack_pending``, then the
next stored message matching the filters), a run of acks from the server's ack lane
(``process_acks``: delivery wakes once at its end), a purge (``record_purge``), a
configuration update, a new leader (``take_over``). Every change of
the consumer-store view goes through a few named methods (``_record_delivery``,
``_record_ack``, ``_record_nak``, ``_expire_pending``), which call ``on_change`` (the
consumer store saves it) and, in a simulated cluster, emit the change as a record for the
replicas (:mod:`..cluster.consumer_replication`).

Timers, all on the server's clock (:mod:`..clock_timers`): the ack check (``ack_wait`` or
``backoff`` after a delivery: due messages join the redelivery queue), request expiry (408),
the inactive threshold, idle heartbeats (push, and pull requests asking for them), the end
of a pause, replay original and the rate limit (each holds the next message).

Everything a consumer sends leaves through the server's outbound path (``Sender.deliver``,
the deliver-subject rewrite): the messages of one delivery run to one subject in one call, a
status after whatever the run holds, so frames keep the server's order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import replace
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ...protocol import texts
from ...store import StoredMsg
from ...timefmt import format_ns
from ..clock_timers import Timer
from ..cluster.consumer_peers import ConsumerGroup
from ..cluster.consumer_replication import (
    Acked,
    ConsumerReplicas,
    Delivered,
    Dropped,
    ReplicaState,
    Snapshot,
    Terminated,
    Touched,
)
from ..events import advisories
from ..streams.retention import ack_below_floor, ack_msg
from .ack_kinds import ACK_ACK, ACK_NAK, ACK_NEXT, ACK_OK, ACK_PROGRESS, ACK_TERM, nak_delay
from .config import ConsumerConfig, config_json, filters_of
from .delivery import DeliveryRun, FlowControl, ReadAhead
from .fast import new_stretch, plain_acks
from .pause import is_paused, pause_remaining, send_pause_advisory
from .priority_groups import ADMIT, DROPPED, PriorityGroups
from .pull_request import PullRequest, check_request_limits, parse_next_request
from .push_interest import DeliveryInterest
from .rate_limit import NEVER, TokenBucket
from .start_position import starting_position

if TYPE_CHECKING:
    from ...server.subscriber import HeaderLens, Payloads, Replies, Subjects
    from ..streams.stream import Stream
    from .faults import ConsumerFaults
    from .host import ConsumerHost

__all__ = ["Consumer"]

_REPLAY_MIN_DELAY = 1_000_000  # a shorter gap between stored times is not waited for
#: Messages a push consumer's stretch delivers in one turn of the event loop (then they are
#: written while the next part is built): with acks, a smaller part, so the subscriber's
#: acks come back while the server builds (nats-server writes from a second thread).
_PUSH_TURN = 1000
_PUSH_TURN_ACKED = 250
_INACTIVE_JITTER = 100_000_000  # the smallest jitter the server adds to inactive_threshold


def _nothing() -> None:
    return None


def _parse_sample_freq(text: str) -> int:
    """``sample_freq`` (``"50"`` or ``"50%"``) as a percentage; anything else samples nothing."""
    try:
        return int(text.removesuffix("%")) if text else 0
    except ValueError:
        return 0


class Consumer:
    """A pull or push consumer; ``stream.consumers`` holds it by name. A push consumer
    (``deliver_subject``) delivers while that subject has interest (``active``), like one
    endless pull request to it."""

    def __init__(self, js: ConsumerHost, stream: Stream, config: ConsumerConfig, name: str, created_ns: int) -> None:
        # What it is. A legacy ephemeral's generated name is not written into its config (as in Go).
        self.js = js
        self.stream = stream
        self.config = config
        self.name = name
        self.created_ns = created_ns
        self.filters = [f.encode() for f in filters_of(config)]
        self.push = bool(config.deliver_subject)
        #: ``$JS.ACK.<stream>.<name>.``: the start of each message's ack reply.
        self.ack_prefix = f"$JS.ACK.{stream.name}.{name}.".encode()
        self.closed = False

        # Delivery position.
        self.next_stream_seq = 1  # Go's o.sseq
        self.next_consumer_seq = 1  # o.dseq
        #: deliver last_per_subject: the sequences still to hand out (``o.lss.seqs``), then
        #: where to resume (``o.lss.resume``).
        self.last_per_subject: list[int] | None = None
        self.last_per_subject_resume = 0
        #: of those, how many ``num_pending`` does not count (:class:`.StartPosition`)
        self.last_per_subject_uncounted = 0
        self.last_delivered_ns = 0

        # The consumer-store view, which the info reports: last delivered and the ack floor,
        # as (consumer seq, stream seq); ``has_state``: the store holds a state (until then
        # the info reports the delivery position).
        self.delivered = (0, 0)
        self.ack_floor = (0, 0)
        self.has_state = False

        # Ack state.
        #: The consumer's own ack floor, which ``needAck`` reads (o.adflr, o.asflr); it
        #: differs from the store's after a purge or a drop at ``max_deliver``.
        self.own_ack_floor = (0, 0)
        #: Stream seq -> [original delivery seq, delivery time] for messages awaiting an ack.
        self.pending: dict[int, list[int]] = {}  # o.pending
        #: Stream seq -> times redelivered (o.rdc), and the sequences due for redelivery in
        #: the order they became due (o.rdq).
        self.redelivery_counts: dict[int, int] = {}
        self.redelivery_queue: list[int] = []
        self.last_ack_ns = 0
        #: sample_freq as a percentage (o.sfreq): the share of acks sampled.
        self._sample_freq = _parse_sample_freq(config.sample_freq)

        # Waiting pull requests (o.waiting), and the last time one came or went (the
        # inactive threshold counts from there).
        self.waiting: deque[PullRequest] = deque()
        self.waiting_last_ns = created_ns

        # The run being delivered (shared with the stretch loop of :mod:`.fast`).
        self.run = DeliveryRun(js)
        self.read_ahead = ReadAhead()
        #: The pull request whose inbox was found to have interest in this run.
        self._inbox_checked: PullRequest | None = None
        #: The last look for a message stopped at max_ack_pending (not at the end).
        self._stopped_at_max_ack_pending = False
        #: A run of acks is being processed: delivery waits for its end, then wakes once.
        self._holding_for_acks = False
        self._wake_after_acks = False

        # Push: the deliver subject and (``deliver_group``) the queue group whose members
        # on exactly that subject alone make the consumer active, as the server's
        # notification (:mod:`.push_interest`); whether it is (``push_bound`` in the info);
        # delivery continued in the next turn of the loop.
        self._deliver_to = config.deliver_subject.encode()
        self.interest: DeliveryInterest | None = None
        self.active = False
        self._push_scheduled = False
        self._pull_scheduled = False  # deliveries to the requests of this turn, after it
        self.flow = FlowControl(f"$JS.FC.{stream.name}.{name}.".encode(), config.flow_control)
        #: Idle heartbeats: due ``idle_heartbeat`` after the last message sent.
        self._heartbeat_due = 0

        # Replay original (``replay_policy``): on or off, the stored time of the last message
        # sent (o.lts), and whether the held message has waited its turn.
        self._replay_original = config.replay_policy == "original"
        self._replay_last_ts = 0
        self._replay_released = False

        # ``rate_limit_bps`` (push): the limiter, and whether the next message's bytes are
        # reserved already (its timer holds it).
        self._rate_limiter: TokenBucket | None = None
        self._rate_reserved = False

        # Timers (on the server's clock; None: not armed).
        self._ack_timer: Timer | None = None  # pending acks due (ack_wait, backoff)
        self._expiry_timer: Timer | None = None  # a waiting request expires (408)
        self._inactive_timer: Timer | None = None  # inactive_threshold
        self._heartbeat_timer: Timer | None = None  # push idle heartbeat
        self._pull_heartbeat_timer: Timer | None = None  # a waiting request's heartbeat
        self._pause_timer: Timer | None = None  # pause_until
        self._replay_timer: Timer | None = None  # the held message's time (replay original)
        self._rate_limit_timer: Timer | None = None  # the reserved message's turn

        # Hooks and attached parts.
        #: Called when requests start or stop waiting (the stream wakes us only meanwhile).
        self.on_waiting: Callable[[], None] = _nothing
        #: Called after each change of the consumer-store state (saved by :mod:`..persistence.consumer_store`).
        self.on_change: Callable[[], None] = _nothing
        #: Faults staged by the control plane (:mod:`.faults`); None: none.
        self.faults: ConsumerFaults | None = None
        #: Priority groups (policy overflow / pinned_client / prioritized), else None.
        self.priority = PriorityGroups(self) if config.priority_policy != "none" else None
        #: Its raft group in a simulated cluster (None standalone), and the replicas' states
        #: and their log (a raft group of more than one peer), else None.
        self.group = ConsumerGroup(self) if js.clustered else None
        self.replicas: ConsumerReplicas | None = self.group.replicas if self.group is not None else None

        # Start.
        if self.push:
            self.interest = DeliveryInterest(
                js.account.sublist, self._deliver_to, config.deliver_group.encode() or None
            )
            self.active = self.interest.bound
            if config.idle_heartbeat:
                self._arm_heartbeat()
        self._set_rate_limit()
        self._select_start()
        if self.replicas is not None:
            self.replicas.record(self.snapshot())
        self._arm_inactive()
        self._update_pause_state()

    # --- configuration ----------------------------------------------------------------

    def update_config(self, config: ConsumerConfig) -> None:
        """Apply an update that passed ``check_update`` (limits, filters, thresholds)."""
        old = self.config
        self.config = config
        self._sample_freq = _parse_sample_freq(config.sample_freq)
        if filters_of(config) != filters_of(old):
            self.filters = [f.encode() for f in filters_of(config)]
        if config.deliver_subject != old.deliver_subject and self.interest is not None:
            # The server registers the new subject's notification, still with the group it
            # was registered with (a new ``deliver_group`` alone changes nothing there),
            # and looks at what it says after its reply.
            self._deliver_to = config.deliver_subject.encode()
            self.interest = DeliveryInterest(self.js.account.sublist, self._deliver_to, self.interest.queue)
            self.active = False
            self.js.server.loop.call_soon(self._recheck_interest)
        if config.inactive_threshold != old.inactive_threshold:
            self._arm_inactive()
        if config.rate_limit_bps != old.rate_limit_bps:
            self._set_rate_limit()
        if config.priority_policy != old.priority_policy:
            if self.priority is not None:
                self.priority.unassign()
            self.priority = PriorityGroups(self) if config.priority_policy != "none" else None
        if config.pause_until != old.pause_until:
            self._update_pause_state()
            send_pause_advisory(self.js, self)
            if replace(config, pause_until=old.pause_until, metadata=old.metadata) == old:
                return  # a pause or resume alone wakes nothing: the next message or request does
        self.deliver_waiting()

    # --- pause ------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        until = self.config.pause_until
        return until is not None and is_paused(until, self.js.clock.now_ns())

    def _update_pause_state(self) -> None:
        """``updatePauseState``: resume at ``pause_until`` on the server's clock."""
        if self._pause_timer is not None:
            self._pause_timer.cancel()
            self._pause_timer = None
        if self.paused and self.config.pause_until is not None:
            self._pause_timer = self.js.timers.at(self.config.pause_until, self._on_pause_end)

    def _on_pause_end(self) -> None:
        self._pause_timer = None
        if self.closed:
            return
        send_pause_advisory(self.js, self)
        self.deliver_waiting()
        self.js.server.flush()

    def _select_start(self) -> None:
        """The delivery position of a new consumer (:mod:`.start_position`)."""
        start = starting_position(self.config, self.filters, self.stream)
        if start.last_per_subject is not None:
            self.last_per_subject, self.last_per_subject_resume = start.last_per_subject, start.resume
            self.last_per_subject_uncounted = start.uncounted
        self.next_stream_seq = start.next_stream_seq
        self.next_consumer_seq = 1
        self.ack_floor = self.own_ack_floor = (0, start.next_stream_seq - 1)

    # --- numbers ----------------------------------------------------------------------

    def num_pending(self) -> int:
        """Messages still to deliver (the server's ``npc``)."""
        store = self.stream.store
        start = self.next_stream_seq
        extra = 0
        if self.last_per_subject:
            extra = max(0, len(self.last_per_subject) - self.last_per_subject_uncounted)
            start = self.last_per_subject_resume + 1
        if not self.filters:
            return extra + store.num_pending(start, b"")
        if len(self.filters) > 1:
            return extra + store.num_pending_multi(start, self.filters)
        return extra + store.num_pending(start, self.filters[0])

    def info_json(self, dynamic_metadata: bool = True) -> dict[str, Any]:
        """``ConsumerInfo``; the ``cluster`` block only in a (simulated) cluster."""
        self.process_waiting(eos=False)
        if self.has_state:
            dcons, dstream = self.delivered
        else:
            dcons, dstream = self.next_consumer_seq - 1, self.next_stream_seq - 1
        delivered: dict[str, Any] = {"consumer_seq": dcons, "stream_seq": dstream}
        if self.last_delivered_ns:
            delivered["last_active"] = format_ns(self.last_delivered_ns)
        floor: dict[str, Any] = {"consumer_seq": self.ack_floor[0], "stream_seq": self.ack_floor[1]}
        if self.last_ack_ns:
            floor["last_active"] = format_ns(self.last_ack_ns)
        return {
            "stream_name": self.stream.name,
            "name": self.name,
            "created": format_ns(self.created_ns),
            "config": config_json(self.config, dynamic_metadata),
            "delivered": delivered,
            "ack_floor": floor,
            "num_ack_pending": len(self.pending),
            "num_redelivered": 0 if self.config.max_deliver == 1 else len(self.redelivery_counts),
            "num_waiting": len(self.waiting),
            "num_pending": self.num_pending(),
            **({"cluster": self.group.cluster_json()} if self.group is not None else {}),
            **({"cluster": self.js.route_cluster()} if self.js.process_cluster else {}),
            **({"push_bound": True} if self.active else {}),
            **self._pause_info(),
            "ts": format_ns(self.js.clock.now_ns()),
            **self._priority_info(),
        }

    def _priority_info(self) -> dict[str, Any]:
        groups = self.priority.info() if self.priority is not None else []
        return {"priority_groups": groups} if groups else {}

    def _pause_info(self) -> dict[str, Any]:
        remaining = pause_remaining(self.config.pause_until, self.js.clock.now_ns())
        return {"paused": True, "pause_remaining": remaining} if remaining else {}

    # --- pull requests ----------------------------------------------------------------

    def next_request(self, reply: bytes, payload: bytes, deliver_now: bool = True) -> None:
        """``processNextMsgRequest``: a ``MSG.NEXT`` request (or the rest of a ``+NXT``).

        nats-server takes the requests of a read in one goroutine (refusing some at once)
        while another, signalled, delivers: the requests that came together are all
        answered or queued before the first message goes out, so a later request's 400
        comes before an earlier one's messages and a ``prioritized`` priority 0 that came
        second is served first. ``deliver_now=False`` (the ``MSG.NEXT`` subscription) does
        that: the delivery waits for the end of the read (``Server.before_flush``).
        """
        if not reply:
            return
        if self.push:
            self.send_status(reply, texts.PULL_PUSH_BASED)
            return
        cfg = self.config
        now = self.js.clock.now_ns()
        req = parse_next_request(payload)
        if isinstance(req, bytes):
            self.send_status(reply, req)
            return
        refused = check_request_limits(req, cfg)
        if refused is None and self.priority is not None:
            refused = self.priority.check_request(req)
        if refused is not None:
            self.send_status(reply, refused)
            return
        batch, expires, no_wait = req.batch, req.expires, req.no_wait
        if len(self.waiting) >= cfg.max_waiting:
            self.process_waiting(eos=False)
        if no_wait:
            msgs_pending = self.num_pending() + len(self.redelivery_queue)
            if msgs_pending == 0 and not expires:
                self.waiting_last_ns = now
                self.send_status(reply, texts.PULL_NO_MESSAGES)
                return
            if msgs_pending > 0:
                batch_pending = self.process_waiting(eos=False)
                if msgs_pending < batch_pending:
                    self.waiting_last_ns = now
                    self.send_status(reply, texts.PULL_REQUESTS_PENDING)
                    return
        prioritized = cfg.priority_policy == "prioritized"
        if len(self.waiting) >= cfg.max_waiting:
            if not (prioritized and req.heartbeat):  # ``addPrioritized`` fails quietly then
                self.send_status(reply, texts.PULL_EXCEEDED_MAX_WAITING)
            return
        wr = PullRequest(reply, batch, req.max_bytes, no_wait, now + expires if expires else 0)
        wr.group = req.group
        if req.heartbeat:
            wr.heartbeat, wr.heartbeat_due = req.heartbeat, now + req.heartbeat
            self._arm_pull_heartbeat(wr.heartbeat_due)
        if prioritized:
            PriorityGroups.place(self.waiting, wr)
        else:
            self.waiting.append(wr)
        self.waiting_last_ns = now
        if wr.expires:
            self._arm_expiry(wr.expires)
        if deliver_now:
            self.deliver_waiting()
        elif not self._pull_scheduled:
            self._pull_scheduled = True
            self.js.server.before_flush(self._deliver_after_requests)

    def _deliver_after_requests(self) -> None:
        self._pull_scheduled = False
        self.deliver_waiting()
        self.js.server.flush()

    def process_waiting(self, eos: bool) -> int:
        """``processWaiting``: expire requests (408), end no-wait ones at the end of the
        stream (404), drop those nobody listens to; returns the batch still asked for."""
        if not self.waiting:
            return 0
        now = self.js.clock.now_ns()
        kept: deque[PullRequest] = deque()
        batch_pending = 0
        for wr in self.waiting:
            expired = bool(wr.expires) and now >= wr.expires
            if (eos and wr.no_wait) or expired:
                if expired:
                    self.send_status(wr.reply, texts.PULL_REQUEST_TIMEOUT % (wr.remaining, wr.bytes_left))
                    continue
                if not wr.expires or wr.delivered > 0:
                    self.send_status(wr.reply, texts.PULL_NO_MESSAGES)
                    continue
            if not self.js.out.has_interest(wr.reply):
                continue
            batch_pending += wr.remaining
            kept.append(wr)
        if len(kept) != len(self.waiting):
            self.waiting = kept
            self.waiting_last_ns = now
            self._arm_inactive()
            self.on_waiting()
        return batch_pending

    def _next_waiting(self, size: int, npc: int, now: int) -> PullRequest | None:
        """``nextWaiting``: the first live request that can take a message of ``size`` bytes
        (``npc`` still pending after it); with priority groups, requests that must wait
        are cycled to the back and stale pins refused. Interest in a request's inbox is
        checked once per run (nothing subscribes or unsubscribes while a run is gathered)."""
        pgs = self.priority
        need_new_pin = pgs is not None and pgs.needs_pin()
        cycled = 0
        while self.waiting:
            wr = self.waiting[0]
            if wr.expires and now >= wr.expires:
                self.waiting.popleft()
                self.send_status(wr.reply, texts.PULL_REQUEST_TIMEOUT % (wr.remaining, wr.bytes_left))
                continue
            assigned = False
            if pgs is not None:
                verdict, assigned = pgs.admit(wr, need_new_pin, npc)
                if verdict == DROPPED:
                    continue
                if verdict != ADMIT:
                    self.waiting.rotate(-1)
                    cycled += 1
                    if cycled >= len(self.waiting):
                        return None
                    continue
            if wr.bytes_left > 0:
                if size <= wr.bytes_left:
                    wr.bytes_left -= size
                    if wr.bytes_left == 0:
                        wr.remaining = 1
                else:
                    self.waiting.popleft()
                    self.send_status(
                        wr.reply, texts.PULL_MESSAGE_SIZE_EXCEEDS_MAX_BYTES % (wr.remaining, wr.bytes_left)
                    )
                    if assigned and pgs is not None:
                        pgs.unassign()
                    continue
            if wr is self._inbox_checked or self.js.out.has_interest(wr.reply):
                self._inbox_checked = wr
                return wr
            self.waiting.popleft()
        return None

    def update_interest(self) -> None:
        """``updateDeliveryInterest``: the notification changed; deliver once bound, and
        an ephemeral without interest goes after its inactive threshold."""
        active = self.interest is not None and self.interest.bound
        if active == self.active:
            return
        self.active = active
        if not active:
            self.waiting_last_ns = self.js.clock.now_ns()
        self._arm_inactive()
        self.on_waiting()  # the stream wakes bound push consumers
        if active:
            self.deliver_push()

    def _recheck_interest(self) -> None:
        if not self.closed:
            self.update_interest()
            self.js.server.flush()

    def deliver_push(self) -> None:
        """``loopAndGatherMsgs`` for push mode: everything there is, while bound."""
        if self._holding_for_acks:
            self._wake_after_acks = True
            return
        self.read_ahead.entries = []
        try:
            self._push_run()
        finally:
            self.read_ahead.entries = []
            self.run.flush()

    def _push_later(self) -> None:
        """Go on delivering in the next turn of the loop: what is gathered so far is written
        meanwhile, so the subscriber reads while the rest is built (the real server's
        outbound writer runs beside its delivery loop)."""
        if not self._push_scheduled:
            self._push_scheduled = True
            self.js.server.loop.call_soon(self._push_continue)

    def _push_continue(self) -> None:
        self._push_scheduled = False
        if self.closed:
            return
        self.deliver_push()
        self.js.server.flush()

    def _push_run(self) -> None:
        npc = -1
        if self.paused:
            return
        now = self.js.clock.now_ns()
        to = self._deliver_to
        sent = False
        bucket = self._rate_limiter
        flow = self.flow
        fast = bucket is None and self._stretch_ok()
        while self.active and not self.closed:
            if flow.window and flow.sent > flow.window:
                break  # stalled until the flow control request is answered
            if self._rate_limit_timer is not None:
                break  # waiting for the rate limit
            if fast:  # a stretch of new messages
                turn = _PUSH_TURN if self.config.ack_policy == "none" else _PUSH_TURN_ACKED
                count, npc = new_stretch(self, to, turn, npc, now, None)
                if count:
                    sent = True
                    if count == turn:  # maybe more: written first, then the next part
                        self._push_later()
                        break
                    continue
            found = self._get_next()
            if found is None:
                break
            sm, dc = found
            if self._replay_original and self._replay_hold(sm.ts):
                self._unget(sm.seq, dc)
                break
            if npc < 0:
                npc = self.num_pending()
            elif dc == 1:
                npc -= 1
            reply = self.ack_prefix + b"%d.%d.%d.%d.%d" % (dc, sm.seq, self.next_consumer_seq, sm.ts, npc)
            if bucket is not None:
                if not self._rate_reserved:
                    delay = bucket.reserve(now, self._wire_size(sm, reply))
                    if delay:
                        self._wait_rate_limit(now, delay)
                        self._unget(sm.seq, dc)
                        break
                self._rate_reserved = False
            self._record_delivery(self.next_consumer_seq, sm.seq, dc, now)
            if self.faults is None or not self.faults.take_skip():
                self._send(to, sm, reply)
            sent = True
            if flow.window:
                flow.sent += len(to) + len(reply) + len(sm.hdr) + len(sm.data)
                if not flow.reply and flow.sent > flow.window // 2:
                    self.request_flow_control()
        if sent and self.config.idle_heartbeat:  # due ``idle_heartbeat`` after the last message
            self._arm_heartbeat()

    # --- rate limit (push) -------------------------------------------------------------

    def _set_rate_limit(self) -> None:
        """``setRateLimit``: bytes per second, the burst the stream's ``max_msg_size`` (else
        the server's ``max_payload``); a new limiter on every change."""
        bps = self.config.rate_limit_bps
        if self._rate_limit_timer is not None:
            self._rate_limit_timer.cancel()
        self._rate_limit_timer, self._rate_reserved = None, False
        if not bps:
            self._rate_limiter = None
            return
        burst = self.stream.config.max_msg_size
        if burst <= 0:
            burst = self.js.server.options.max_payload
        self._rate_limiter = TokenBucket(bps, burst)

    def _wire_size(self, sm: StoredMsg, reply: bytes) -> int:
        """``sz``: what the limiter counts for a message (subject, ack reply, headers and
        payload; a headers-only consumer's header block and no payload)."""
        if self.config.headers_only:
            hdr = len(sm.hdr) if sm.hdr else len(b"NATS/1.0\r\n\r\n")
            return len(sm.subject) + len(reply) + hdr + len(b"Nats-Msg-Size: %d\r\n" % len(sm.data))
        return len(sm.subject) + len(reply) + len(sm.hdr) + len(sm.data)

    def _wait_rate_limit(self, now: int, delay: int) -> None:
        """The next message is reserved: it goes ``delay`` from now (never, for a message
        bigger than the burst, as the server's sleep of ``InfDuration``)."""
        self._rate_reserved = True
        if delay == NEVER:
            self._rate_limit_timer = Timer(now, self._on_rate_limit)  # never scheduled: never fires
        else:
            self._rate_limit_timer = self.js.timers.at(now + delay, self._on_rate_limit)

    def _on_rate_limit(self) -> None:
        self._rate_limit_timer = None
        if self.closed:
            return
        self.deliver_push()
        self.js.server.flush()

    # --- flow control and heartbeats (push) --------------------------------------------

    def request_flow_control(self) -> None:
        """``sendFlowControl``: a request the subscriber's client answers on its reply."""
        reply = self.flow.request(self.js.server.rng)
        to = self._deliver_to
        self.run.add(to, (to, reply, len(texts.FLOW_CONTROL_REQUEST), texts.FLOW_CONTROL_REQUEST))

    def process_flow_control(self, subject: bytes) -> None:
        """``processFlowControl``: the latest request was answered; widen the window."""
        if self.closed or not self.flow.answered(subject):
            return
        self.deliver_push()

    def _arm_pull_heartbeat(self, deadline: int) -> None:
        self._pull_heartbeat_timer = self.js.timers.no_later_than(
            self._pull_heartbeat_timer, deadline, self._on_pull_heartbeat
        )

    def _on_pull_heartbeat(self) -> None:
        """Requests with ``idle_heartbeat`` that got nothing for that long get a heartbeat."""
        self._pull_heartbeat_timer = None
        if self.closed:
            return
        self.process_waiting(eos=False)
        now = self.js.clock.now_ns()
        nxt = 0
        for wr in self.waiting:
            if not wr.heartbeat:
                continue
            if now >= wr.heartbeat_due:
                self._send_heartbeat(wr.reply)
                wr.heartbeat_due = now + wr.heartbeat
            nxt = wr.heartbeat_due if not nxt else min(nxt, wr.heartbeat_due)
        self.js.server.flush()
        if nxt:
            self._arm_pull_heartbeat(nxt)

    def _send_heartbeat(self, to: bytes) -> None:
        """``sendIdleHeartbeat``: the last sequences sent, and the flow control request
        outstanding while stalled on it."""
        if self.faults is not None and self.faults.take_heartbeat():
            return
        hdr = texts.IDLE_HEARTBEAT % (self.next_consumer_seq - 1, self.next_stream_seq - 1)
        if self.flow.reply:
            hdr += b"Nats-Consumer-Stalled: " + self.flow.reply + b"\r\n"
        hdr += b"\r\n"
        self.send_status(to, hdr)

    def _arm_heartbeat(self) -> None:
        self._heartbeat_due = self.js.clock.now_ns() + self.config.idle_heartbeat
        if self._heartbeat_timer is None:
            self._heartbeat_timer = self.js.timers.at(self._heartbeat_due, self._on_heartbeat)

    def _on_heartbeat(self) -> None:
        """``sendIdleHeartbeat`` once nothing was sent for ``idle_heartbeat``; with the
        outstanding flow control request while stalled on it."""
        self._heartbeat_timer = None
        if self.closed:
            return
        now = self.js.clock.now_ns()
        if now < self._heartbeat_due:
            self._heartbeat_timer = self.js.timers.at(self._heartbeat_due, self._on_heartbeat)
            return
        if self.active:
            self._send_heartbeat(self._deliver_to)
            self.js.server.flush()
        self._heartbeat_due = now + self.config.idle_heartbeat
        self._heartbeat_timer = self.js.timers.at(self._heartbeat_due, self._on_heartbeat)

    def deliver_waiting(self) -> None:
        """``loopAndGatherMsgs`` for pull mode: hand messages to waiting requests in order."""
        if self.closed:
            return
        if self._holding_for_acks:
            self._wake_after_acks = True
            return
        if self.push:
            self.deliver_push()
            return
        if self.paused:  # straight to waiting: no-wait requests end, the others expire
            self.process_waiting(eos=True)
            return
        self.read_ahead.entries = []
        try:
            self._pull_run()
        finally:
            self.read_ahead.entries = []
            self.run.flush()

    def _stretch_ok(self) -> bool:
        """Whether the next messages may take the stretch loop of :mod:`.fast` (checked once
        per stretch: nothing tested here changes while a stretch runs)."""
        cfg = self.config
        return not (
            self.redelivery_queue
            or self.last_per_subject is not None
            or self.filters
            or self._replay_original
            or self.priority is not None
            or self.faults is not None
            or self.replicas is not None  # each delivery is a record for the replicas (``_record_delivery``)
            or cfg.headers_only
            or cfg.backoff
        )

    def _pull_run(self) -> None:
        npc = -1
        now = self.js.clock.now_ns()
        self._inbox_checked = None
        fast = self._stretch_ok()
        while self.waiting:
            if fast and len(self.waiting) == 1:  # one plain request: a stretch of new messages
                head = self.waiting[0]
                if (
                    head.bytes_left <= 0
                    and not (head.expires and now >= head.expires)
                    and (head is self._inbox_checked or self.js.out.has_interest(head.reply))
                ):
                    self._inbox_checked = head
                    sent, npc = new_stretch(self, head.reply, head.remaining, npc, now, head)
                    if sent:
                        if head.remaining <= 0:
                            self.waiting.popleft()
                        continue
            found = self._get_next()
            if found is None:
                if not self._stopped_at_max_ack_pending:  # the end of the stream, not max_ack_pending
                    self.process_waiting(eos=True)
                break
            sm, dc = found
            if self._replay_original and self._replay_hold(sm.ts):
                self._unget(sm.seq, dc)
                break
            # num_pending once per run, then counted down (the server's ``npc``).
            if npc < 0:
                npc = self.num_pending()
            elif dc == 1:
                npc -= 1
            reply = self.ack_prefix + b"%d.%d.%d.%d.%d" % (dc, sm.seq, self.next_consumer_seq, sm.ts, npc)
            # The size a request's max_bytes counts includes the ack subject (``loopAndGatherMsgs``).
            wr = self._next_waiting(len(sm.subject) + len(reply) + len(sm.hdr) + len(sm.data), npc, now)
            if wr is None:
                self._unget(sm.seq, dc)
                self.process_waiting(eos=True)  # ``waitForMsgs``: requests left all had to wait
                break
            self._deliver(wr, sm, dc, reply, now)
            if wr.heartbeat:
                wr.heartbeat_due = now + wr.heartbeat
            self._pop(wr)
            if wr.remaining <= 0 and wr.bytes_left > 0:  # the batch is filled with bytes to spare: say so
                self.send_status(wr.reply, texts.PULL_BATCH_COMPLETED % (wr.remaining, wr.bytes_left))
        if not self.waiting:
            self._arm_inactive()
        self.on_waiting()

    def _pop(self, wr: PullRequest) -> None:
        """``waitQueue.pop`` / ``popAndRequeue`` for the request at the head that just got a
        message: done, or (with others waiting) to the back of the queue, or of its
        priority for ``prioritized``."""
        wr.remaining -= 1
        wr.delivered += 1
        if wr.remaining <= 0:
            self.waiting.popleft()
        elif len(self.waiting) > 1:
            if self.config.priority_policy == "prioritized":
                self.waiting.popleft()
                PriorityGroups.place(self.waiting, wr)
            else:
                self.waiting.rotate(-1)

    def _replay_hold(self, ts: int) -> bool:
        """Replay original: hold a message stored more than 1 ms after the last one sent until
        that much time has passed on the server's clock (``loopAndGatherMsgs`` sleeps)."""
        if self._replay_timer is not None:
            return True  # still waiting for the held one's time
        if self._replay_released:
            self._replay_released = False
        elif self._replay_last_ts and ts - self._replay_last_ts > _REPLAY_MIN_DELAY:
            self._replay_timer = self.js.timers.at(self.js.clock.now_ns() + ts - self._replay_last_ts, self._on_replay)
            return True
        self._replay_last_ts = ts
        return False

    def _on_replay(self) -> None:
        self._replay_timer = None
        if self.closed:
            return
        self._replay_released = True
        self.deliver_waiting()
        self.js.server.flush()

    def _get_next(self) -> tuple[StoredMsg, int] | None:
        """``getNextMsg``: a redelivery first, then (room permitting) the next new message."""
        store = self.stream.store
        cfg = self.config
        self._stopped_at_max_ack_pending = False
        while self.redelivery_queue:
            seq = self.redelivery_queue.pop(0)
            dc = self.redelivery_counts.get(seq, 0) + 2
            if cfg.max_deliver > 0 and dc > cfg.max_deliver:
                self.redelivery_counts[seq] = dc - 1  # ``incDeliveryCount`` counted this attempt
                if dc == cfg.max_deliver + 1:
                    self._max_deliveries(seq, dc - 1)
                # Out of pending; the consumer store's ``UpdateDelivered`` leaves the ack
                # floor it reports where it is, the consumer's own one moves (``moveAckFloor``).
                p = self.pending.pop(seq, None)
                if p is not None:
                    self.move_own_ack_floor(p[0], seq)
                self.on_change()
                if self.replicas is not None:
                    self.replicas.record(Dropped(seq, dc - 1))
                continue
            sm = store.load(seq)
            if sm is None:
                p = self.pending.get(seq)
                if p is not None:
                    self._record_ack(seq, p[0])
                continue
            self.redelivery_counts[seq] = dc - 1
            return sm, dc
        self._stopped_at_max_ack_pending = cfg.ack_policy != "none" and 0 < cfg.max_ack_pending <= len(self.pending)
        if self._stopped_at_max_ack_pending:
            return None
        if self.last_per_subject:
            seq = self.last_per_subject.pop(0)
            if not self.last_per_subject:
                self.next_stream_seq = self.last_per_subject_resume
                self.last_per_subject = None
            else:
                self.next_stream_seq = seq
            sm = store.load(seq)
            self.next_stream_seq += 1
            return (sm, 1) if sm is not None else self._get_next()
        if self.filters:
            sm = self._load_next(self.next_stream_seq)
        else:  # one ``live_entries`` call per chunk
            sm = self.read_ahead.next(store, self.next_stream_seq)
        if sm is None:
            last = store.last_seq
            if last >= self.next_stream_seq:
                self.next_stream_seq = last + 1
            return None
        self.next_stream_seq = sm.seq + 1
        return sm, 1

    def _load_next(self, start: int) -> StoredMsg | None:
        store = self.stream.store
        if not self.filters:
            return store.load_next(b"", start)
        if len(self.filters) == 1:
            return store.load_next(self.filters[0], start)
        return store.load_next_multi(self.filters, start)

    def _unget(self, seq: int, dc: int) -> None:
        """Put back a message no request could take."""
        if dc > 1:
            self.redelivery_counts[seq] = dc - 2
            if self.redelivery_counts[seq] == 0:
                del self.redelivery_counts[seq]
            self.redelivery_queue.insert(0, seq)
        elif self.last_per_subject is None:
            self.next_stream_seq = seq

    def _deliver(self, wr: PullRequest, sm: StoredMsg, dc: int, reply: bytes, now: int) -> None:
        self._record_delivery(self.next_consumer_seq, sm.seq, dc, now)
        if self.faults is not None and self.faults.take_skip():
            return
        pgs = self.priority
        if pgs is not None and self.config.priority_policy == "pinned_client":
            self._send_pinned(wr.reply, sm, reply, pgs)
        else:
            self._send(wr.reply, sm, reply)

    def _send_pinned(self, to: bytes, sm: StoredMsg, reply: bytes, pgs: PriorityGroups) -> None:
        """A message to the pinned client carries ``Nats-Pin-Id`` (after headers_only)."""
        hdr, data = sm.hdr, sm.data
        if self.config.headers_only:
            hdr = (hdr[:-2] if hdr else b"NATS/1.0\r\n") + b"Nats-Msg-Size: %d\r\n\r\n" % len(data)
            data = b""
        hdr = pgs.pin_header(hdr)
        self.run.add(to, (sm.subject, reply, len(hdr), hdr + data))

    def _send(self, to: bytes, sm: StoredMsg, reply: bytes) -> None:
        if self.config.headers_only:  # the headers, with the size of the payload left out
            hdr = (sm.hdr[:-2] if sm.hdr else b"NATS/1.0\r\n") + b"Nats-Msg-Size: %d\r\n\r\n" % len(sm.data)
            self.run.add(to, (sm.subject, reply, len(hdr), hdr))
        elif sm.hdr:
            self.run.add(to, (sm.subject, reply, len(sm.hdr), sm.hdr + sm.data))
        else:
            self.run.add(to, (sm.subject, reply, -1, sm.data))

    def send_status(self, reply: bytes, hdr: bytes) -> None:
        """A status (or heartbeat) on its own, after whatever the run holds."""
        self.run.flush()
        self.js.out.deliver(reply, ((reply, None, len(hdr), hdr),))

    # --- state changes ----------------------------------------------------------------

    def _record_delivery(self, dseq: int, sseq: int, dc: int, now: int) -> None:
        """``deliverMsg`` + ``updateDelivered``: one message handed out (at ``now``: one
        reading of the clock per delivery run)."""
        self.on_change()
        if self.replicas is not None:
            self.replicas.record(Delivered(dseq, sseq, dc, now))
        self.next_consumer_seq = dseq + 1
        self.last_delivered_ns = now
        self.waiting_last_ns = now
        self.has_state = True
        if self.config.ack_policy == "none":
            if dseq > self.delivered[0]:
                self.delivered = (dseq, max(sseq, self.delivered[1]))
                self.ack_floor = self.own_ack_floor = self.delivered
            if self.stream.retains:  # delivered is acked (the stream's ``ackq``)
                ack_msg(self.stream, sseq)
            return
        p = self.pending.get(sseq)
        if p is not None:
            p[1] = now
        else:
            self.pending[sseq] = [dseq, now]
        self.delivered = (max(dseq, self.delivered[0]), max(sseq, self.delivered[1]))
        wait = self._wait_for(sseq) if self.config.backoff else self.config.ack_wait
        timer = self._ack_timer
        if timer is None or timer.cancelled or timer.deadline > now + wait:
            self.check_acks_by(now + wait)

    def _record_ack(self, sseq: int, dseq: int, sample_dc: int = 0, term: bool = False) -> None:
        """``processAckMsg`` + ``UpdateAcks`` for ack explicit / all; a client's ack
        (``sample_dc``: its delivery count) may be sampled for the ack metric."""
        self.on_change()
        cfg = self.config
        self.last_ack_ns = self.js.clock.now_ns()
        if self.replicas is not None and (
            cfg.ack_policy == "explicit" or not (dseq <= self.own_ack_floor[0] or sseq <= self.own_ack_floor[1])
        ):
            self.replicas.record(Terminated(dseq, sseq) if term else Acked(dseq, sseq))
        if cfg.ack_policy == "explicit":
            p = self.pending.pop(sseq, None)
            self.redelivery_counts.pop(sseq, None)
            self._unqueue_redelivery(sseq)
            if p is None:
                return
            if self._sample_freq and sample_dc:
                self._sample_ack(sseq, dseq, sample_dc, p[1])
            if p[0] > 0 and dseq > p[0]:
                dseq = p[0]
            self.move_ack_floor(dseq, sseq)
            self.move_own_ack_floor(dseq, sseq)
            if self.stream.retains:  # interest or work queue: maybe remove
                ack_msg(self.stream, sseq)
        else:
            if dseq <= self.own_ack_floor[0] or sseq <= self.own_ack_floor[1]:
                return
            below = self.own_ack_floor[1]
            self.own_ack_floor = (dseq, sseq)
            if dseq > self.ack_floor[0]:  # the store does not go back
                self.ack_floor = (dseq, sseq)
            for seq in [s for s in self.pending if s <= sseq]:
                del self.pending[seq]
                self.redelivery_counts.pop(seq, None)
                self._unqueue_redelivery(seq)
            if self.stream.retains:  # up to the new floor, newest first (as Go)
                for seq in range(sseq, below, -1):
                    ack_msg(self.stream, seq)

    def move_ack_floor(self, dseq: int, sseq: int) -> None:
        """The store's ack floor after an explicit ack of (``dseq``, ``sseq``) (``UpdateAcks``):
        everything delivered once nothing is pending; else, for the ack just above the floor,
        up to just below the next pending message."""
        if not self.pending:
            self.ack_floor = self.delivered
        elif dseq == self.ack_floor[0] + 1:
            self.ack_floor = (dseq, sseq)
            if self.delivered[0] > dseq:
                for ss in range(sseq + 1, self.delivered[1] + 1):
                    p = self.pending.get(ss)
                    if p is not None:
                        if p[0] > 0:
                            self.ack_floor = (p[0] - 1, ss - 1)
                        break

    def move_own_ack_floor(self, dseq: int, sseq: int) -> None:
        """``moveAckFloor`` on the consumer's own floor: as :meth:`move_ack_floor`, bounded by
        the delivery position rather than the store's ``delivered``."""
        if not self.pending:
            self.own_ack_floor = (self.next_consumer_seq - 1, self.next_stream_seq - 1)
        elif dseq == self.own_ack_floor[0] + 1:
            self.own_ack_floor = (dseq, sseq)
            for ss in range(sseq + 1, self.next_stream_seq):
                p = self.pending.get(ss)
                if p is not None:
                    if p[0] > 0:
                        self.own_ack_floor = (p[0] - 1, ss - 1)
                    break

    def record_purge(self, start: int, last: int, wider: bool) -> None:
        """``consumer.purge``: the stream was purged below ``start`` (0: entirely). Pending
        messages below it count as acked (a ``wider`` purge also drops pending ones that are
        gone), the delivery position moves up to ``start``, and the consumer's own state is
        then written to its store (``writeStoreState``), which the info reports."""
        self.on_change()
        if start == 0 and not wider:
            start = last + 1
        self.next_stream_seq = max(self.next_stream_seq, start)
        madflr, masflr = self.own_ack_floor
        if masflr < start:
            masflr = start - 1
        adflr, asflr = self.ack_floor
        if asflr < start:
            asflr = start - 1
            store = self.stream.store
            for seq in sorted(self.pending):
                if seq <= asflr or (wider and store.load(seq) is None):
                    dseq = self.pending.pop(seq)[0]
                    self.redelivery_counts.pop(seq, None)
                    self.last_ack_ns = self.js.clock.now_ns()
                    adflr = max(adflr, dseq)
                    madflr = max(madflr, dseq)
                    self.next_consumer_seq = max(self.next_consumer_seq, adflr)
                    if self.config.ack_policy == "explicit":
                        self.move_ack_floor(dseq, seq)
                    elif dseq > self.ack_floor[0]:
                        self.ack_floor = (dseq, seq)
        if not self.pending:
            adflr, asflr = self.next_consumer_seq - 1, self.next_stream_seq - 1
            madflr, masflr = adflr, asflr
        self.own_ack_floor = (madflr, masflr)
        self.redelivery_queue = [seq for seq in self.redelivery_queue if seq >= self.next_stream_seq]
        delivered = (self.next_consumer_seq - 1, self.next_stream_seq - 1)
        valid = (
            adflr <= delivered[0]
            and asflr <= delivered[1]
            and all(asflr < seq <= delivered[1] for seq in self.pending)
            and delivered[0] >= self.delivered[0]
            and asflr >= self.ack_floor[1]
        )
        if valid:  # else the store refuses the update (``ErrStoreOldUpdate`` and the range checks)
            self.delivered, self.ack_floor, self.has_state = delivered, (adflr, asflr), True
        if self.replicas is not None:
            self.replicas.record(self.snapshot())

    def snapshot(self) -> Snapshot:
        """The consumer-store view as one record (creation, restore, purge)."""
        pending = tuple((seq, p[0], p[1]) for seq, p in self.pending.items())
        return Snapshot(self.delivered, self.ack_floor, pending, tuple(self.redelivery_counts.items()))

    def take_over(self, state: ReplicaState) -> None:
        """A new leader of the raft group (``setLeader`` + ``readStoredState``): the engine
        restarts from that replica's store, which came only from records. Delivery resumes
        after its ``delivered``; its pending messages are redelivered ``ack_wait`` after their
        delivery; what leader memory held (the redelivery queue, read-ahead) is gone."""
        self.on_change()
        self.delivered, self.ack_floor = state.delivered, state.ack_floor
        self.own_ack_floor = state.ack_floor
        self.next_stream_seq = max(state.delivered[1], state.ack_floor[1]) + 1
        self.next_consumer_seq = max(state.delivered[0], state.ack_floor[0]) + 1
        self.pending = {seq: list(p) for seq, p in state.pending.items()}
        self.redelivery_counts = dict(state.rdc)
        self.redelivery_queue = []
        self.read_ahead.entries = []
        self.read_ahead.resumes_at = 0
        self._stopped_at_max_ack_pending = False
        if self.pending:
            self.check_acks_by(min(p[1] for p in self.pending.values()) + self.config.ack_wait)
        if self.waiting or self.push:
            self.deliver_waiting()

    def reset_to(self, seq: int) -> None:
        """``resetLocalStartingSeq`` + ``store.Reset`` (a ``CONSUMER.RESET``, :mod:`.reset`):
        forget what is pending and due for redelivery, resume delivery at stream sequence
        ``seq`` with consumer sequence 1, the store's delivered and ack floor at
        ``(0, seq - 1)``. The caller serves the waiting requests after its reply
        (``signalNewMessages``: the server's delivery loop runs after the reply is out)."""
        self.on_change()
        self.pending, self.redelivery_counts, self.redelivery_queue = {}, {}, []
        self.next_stream_seq, self.next_consumer_seq = seq, 1
        self.own_ack_floor = self.delivered = self.ack_floor = (0, seq - 1)
        self.has_state = True
        self.last_delivered_ns = self.last_ack_ns = 0
        self.read_ahead.entries = []
        self.read_ahead.resumes_at = 0
        self._stopped_at_max_ack_pending = False
        if self.replicas is not None:
            self.replicas.record(self.snapshot())
        if self.stream.config.retention == "interest":
            ack_below_floor(self.stream, self)

    def _record_nak(self, sseq: int, delay: int | None) -> None:
        """``processNak``: redeliver now, or after ``delay``."""
        self.on_change()
        if delay is not None:
            self._unqueue_redelivery(sseq)
            p = self.pending.get(sseq)
            if p is not None:
                p[1] = self.js.clock.now_ns() - self.config.ack_wait + delay
                self.check_acks_by(p[1] + self.config.ack_wait)
                if self.replicas is not None:
                    self.replicas.record(Touched(sseq, p[1]))
            return
        if sseq not in self.redelivery_queue:
            self.redelivery_queue.append(sseq)
        if self.waiting or self.push:
            self.deliver_waiting()

    def _expire_pending(self) -> None:
        """``checkPending``: messages whose ack wait has passed go to the redelivery queue."""
        self._ack_timer = None
        if self.closed or not self.pending:
            return
        self.on_change()
        now = self.js.clock.now_ns()
        backoff = self.config.backoff
        # With backoff the next check starts from the largest delay (as Go's ``checkPending``).
        nxt = backoff[-1] if backoff else self.config.ack_wait
        first = self.stream.store.first_seq
        expired: list[int] = []
        for seq, p in list(self.pending.items()):
            if seq < first or seq <= self.own_ack_floor[1]:
                del self.pending[seq]
                self.redelivery_counts.pop(seq, None)
                self._unqueue_redelivery(seq)
                if self.replicas is not None:
                    self.replicas.record(Dropped(seq, 0))
                continue
            elapsed = now - p[1]
            deadline = self._wait_for(seq)
            if elapsed >= deadline:
                if seq not in self.redelivery_queue and not self._has_max_deliveries(seq):
                    expired.append(seq)
            elif deadline - elapsed < nxt:
                nxt = deadline - elapsed
        if expired:
            expired.sort()
            self.redelivery_queue.extend(expired)
            off = now - self.pending[expired[0]][1]
            for seq in expired:
                self.pending[seq][1] += off
        if self.pending:
            self.check_acks_by(now + nxt)
        if expired:
            self.deliver_waiting()

    def _wait_for(self, seq: int) -> int:
        """How long a delivered message waits for its ack: ``ack_wait``, or with ``backoff``
        the delay for its redelivery count (the last one repeats)."""
        backoff = self.config.backoff
        if not backoff:
            return self.config.ack_wait
        return backoff[min(self.redelivery_counts.get(seq, 0), len(backoff) - 1)]

    def _has_max_deliveries(self, seq: int) -> bool:
        """``hasMaxDeliveries`` at ack-wait expiry. Go's ``deliveryCount`` is the redelivery
        count (at least 1), so only ``max_deliver`` 1 stops here; otherwise the message is
        queued once more and ``getNextMsg`` drops it (and advises) on the next look."""
        md = self.config.max_deliver
        if md <= 0:
            return False
        dc = max(self.redelivery_counts.get(seq, 0), 1)
        if dc < md:
            return False
        if dc == md:
            self._max_deliveries(seq, dc)
        self.on_change()
        self.pending.pop(seq, None)
        self.redelivery_counts[seq] = dc
        if self.replicas is not None:
            self.replicas.record(Dropped(seq, dc))
        return True

    def _max_deliveries(self, seq: int, deliveries: int) -> None:
        """``notifyDeliveryExceeded``."""
        payload = advisories.max_deliveries(
            advisories.next_id(), self._now(), self.stream.name, self.name, seq, deliveries, self.js.domain
        )
        self._advise(advisories.MAX_DELIVERIES, payload)

    def _unqueue_redelivery(self, seq: int) -> None:
        """The redelivery queue is in the order messages became due (``addToRedeliverQueue``
        appends; only each batch of expired ones is sorted)."""
        if self.redelivery_queue and seq in self.redelivery_queue:
            self.redelivery_queue.remove(seq)

    # --- acks -------------------------------------------------------------------------

    def process_acks(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> None:
        """A run of acks (the ack lane's handler): each processed in order, and delivery
        (room under ``max_ack_pending``, naks, ``+NXT``) woken once at the end."""
        if len(subjects) == 1:
            self.process_ack(subjects[0], replies[0], hdrs[0] if hdrs else -1, msgs[0])
            return
        self._holding_for_acks = True
        try:
            if (
                self.faults is None
                and not self._sample_freq
                and self.config.ack_policy == "explicit"
                and self.replicas is None  # each ack is a record for the replicas (``_record_ack``)
            ):
                if plain_acks(self, subjects, replies, hdrs, msgs):
                    self._wake_after_acks = True
            else:
                for subject, reply, hdr, msg in zip(subjects, replies, hdrs or repeat(-1), msgs):
                    self.process_ack(subject, reply, hdr, msg)
        finally:
            self._holding_for_acks = False
        if self._wake_after_acks:
            self._wake_after_acks = False
            self.deliver_waiting()

    def process_ack(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        """``processAck``: the body of a message sent to one of our ack subjects."""
        if self.faults is not None and self.faults.intercept_ack(self, subject, reply, hdr, msg):
            return
        body = msg[hdr:] if hdr > 0 else msg
        tokens = subject.split(b".")
        try:
            dc, sseq, dseq = int(tokens[4]), int(tokens[5]), int(tokens[6])
        except (IndexError, ValueError):
            dc = sseq = dseq = 0
        skip_reply = sseq == 0
        if not body or body == ACK_ACK or body == ACK_OK:
            if not self._ack(sseq, dseq, dc):
                skip_reply = True
        elif body.startswith(ACK_NEXT):
            self._ack(sseq, dseq, dc)
            if reply:
                self.next_request(reply, body[len(ACK_NEXT) :])
            skip_reply = True
        elif body.startswith(ACK_NAK):
            self._nak(sseq, dseq, body)
        elif body == ACK_PROGRESS:
            p = self.pending.get(sseq)
            if p is not None:
                p[1] = self.js.clock.now_ns()
                self.check_acks_by(p[1] + self.config.ack_wait)
                self.on_change()
                if self.replicas is not None:
                    self.replicas.record(Touched(sseq, p[1]))
        elif body.startswith(ACK_TERM):
            if not self._ack(sseq, dseq, term=True):
                skip_reply = True
            # ``processTerm``: the advisory goes out whether or not the ack counted.
            reason = body[len(ACK_TERM) :].strip().decode("utf-8", "replace")
            self._advise(
                advisories.MSG_TERMINATED,
                advisories.msg_terminated(
                    advisories.next_id(),
                    self._now(),
                    self.stream.name,
                    self.name,
                    dseq,
                    sseq,
                    dc,
                    reason,
                    self.js.domain,
                ),
            )
        if reply and not skip_reply:
            self.js.out.send(reply, -1, b"")

    def _now(self) -> int:
        return self.js.clock.now_ns()

    def _advise(self, prefix: str, payload: bytes) -> None:
        """``sendAdvisory``: publish ``<prefix>.<stream>.<consumer>`` while someone listens."""
        subject = f"{prefix}.{self.stream.name}.{self.name}".encode()
        out = self.js.out
        if out.has_interest(subject):
            out.send(subject, -1, payload)

    def _sample_ack(self, sseq: int, dseq: int, dc: int, delivered_ns: int) -> None:
        """``sampleAck``: the ack metric for ``sample_freq`` percent of explicit acks."""
        freq = self._sample_freq
        if freq <= 0 or (freq < 100 and self.js.server.rng.randrange(100) > freq):
            return
        now = self._now()
        payload = advisories.ack_metric(
            advisories.next_id(), now, self.stream.name, self.name, dseq, sseq, now - delivered_ns, dc, self.js.domain
        )
        self._advise(advisories.ACK_METRIC, payload)

    def _ack(self, sseq: int, dseq: int, sample_dc: int = 0, term: bool = False) -> bool:
        """An ack (or term); whether the sender gets the double-ack answer (on a limits
        stream the server answers from ``updateAcks``, which an ignored ack never reaches)."""
        if self.closed or self.config.ack_policy == "none":
            return False
        if sseq >= self.next_stream_seq:
            return False
        self._record_ack(sseq, dseq, sample_dc, term)
        if self.waiting or self.push:  # room under max_ack_pending
            self.deliver_waiting()
        return True

    def _nak(self, sseq: int, dseq: int, body: bytes) -> None:
        """``processNak``'s checks: a nak of a message delivered and still pending counts."""
        if dseq <= self.own_ack_floor[0] or dseq >= self.next_consumer_seq:
            return
        if sseq not in self.pending:
            return
        self._record_nak(sseq, nak_delay(body))

    # --- timers -----------------------------------------------------------------------

    def check_acks_by(self, deadline: int) -> None:
        """Check pending acks by ``deadline``: the ack timer is kept if it fires by then, else
        moved there (Go adds 1 ms to batch its timer; on the server's clock a message is due
        exactly ``ack_wait`` after its delivery)."""
        self._ack_timer = self.js.timers.no_later_than(self._ack_timer, deadline, self._expire_pending)

    def _arm_expiry(self, deadline: int) -> None:
        # Go's check is ``now.After(expires)``; on a stepped clock the request is due at its
        # deadline, so advancing by ``expires`` ends it.
        self._expiry_timer = self.js.timers.no_later_than(self._expiry_timer, deadline, self._on_expiry)

    def _on_expiry(self) -> None:
        self._expiry_timer = None
        if self.closed:
            return
        self.process_waiting(eos=False)
        nxt = min((wr.expires for wr in self.waiting if wr.expires), default=0)
        if nxt:
            self._arm_expiry(nxt)

    def _arm_inactive(self) -> None:
        """Ephemerals (and consumers with ``inactive_threshold``) go away after that long
        without pull requests (``deleteNotActive``)."""
        if self._inactive_timer is not None:
            self._inactive_timer.cancel()
            self._inactive_timer = None
        threshold = self.config.inactive_threshold
        if threshold <= 0 or self.closed or self.waiting or self.active:
            return
        deadline = self.waiting_last_ns + threshold + _INACTIVE_JITTER
        self._inactive_timer = self.js.timers.at(deadline, self._on_inactive)

    def _on_inactive(self) -> None:
        self._inactive_timer = None
        if self.closed or self.waiting or self.active:
            return
        now = self.js.clock.now_ns()
        if now - self.waiting_last_ns < self.config.inactive_threshold + _INACTIVE_JITTER:
            self._arm_inactive()
            return
        self.js.delete_consumer(self)

    def restored(self) -> None:
        """Back from a saved state after a restart: the inactivity clock starts now and
        pending messages are due ``ack_wait`` after their (saved) delivery time."""
        self.waiting_last_ns = self.js.clock.now_ns()
        self._arm_inactive()
        if self.replicas is not None:
            self.replicas.record(self.snapshot())
        if self.pending:
            self.check_acks_by(min(p[1] for p in self.pending.values()) + self.config.ack_wait)

    def stop(self) -> None:
        """Deleted (or its stream was): cancel the timers and forget the waiting requests."""
        self.closed = True
        timers = (
            self._ack_timer,
            self._expiry_timer,
            self._inactive_timer,
            self._heartbeat_timer,
            self._pull_heartbeat_timer,
        )
        if self.priority is not None:
            self.priority.unassign()
        for t in (*timers, self._pause_timer, self._replay_timer, self._rate_limit_timer):
            if t is not None:
                t.cancel()
        self.waiting.clear()
