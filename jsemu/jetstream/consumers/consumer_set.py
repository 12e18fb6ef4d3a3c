"""The consumers of one stream and their lifetimes: ``ConsumerSet``.

A :class:`ConsumerSet` owns what a consumer needs from outside itself while it lives: its
creation or update (``addConsumerWithAssignment``: defaults, checks, limits, the create
advisory), the subscriptions that reach it (``$JS.API.CONSUMER.MSG.NEXT.<stream>.<name>``,
``$JS.API.CONSUMER.RESET.<stream>.<name>``,
its ``$JS.ACK`` subject on the account's ack lane, ``$JS.FC`` for flow control), its
removal (alone, or all of them with their stream), the purge notice, the interest of push
consumers in their deliver subjects (``Sublist.on_change``) and the stream watcher that
wakes waiting requests after new messages. The ``$JS.API`` handlers (``api/consumers.py``)
call it and build the replies; the delivery engine itself is :class:`.consumer.Consumer`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, cast

from ...ids import BASE62
from ...server.sublist import Subscription
from ...subjects import subject_is_subset_match
from ..cluster.leader import consumer_leader_elected
from ..errors import ApiErrors, api_error
from ..events.consumer_advisories import CREATE as CONSUMER_CREATED
from ..events.consumer_advisories import send_consumer_action
from ..internal import InternalSubscriber
from ..limits.counts import consumer_limit
from ..streams.config import is_valid_asset_name
from ..streams.retention import check_work_queue
from .config import (
    MAX_NAME_LEN,
    ConsumerConfig,
    check_config,
    check_update,
    copy_metadata,
    filters_of,
    refuse_unsupported,
    same_config,
    set_defaults,
)
from .consumer import Consumer
from .going_away import release_deleted
from .reset import reset_reply

if TYPE_CHECKING:
    from ..streams.stream import Stream
    from .host import ConsumerSetHost

__all__ = ["EPHEMERAL_INACTIVE_NS", "ConsumerSet"]

EPHEMERAL_INACTIVE_NS = 5_000_000_000  # JsDeleteWaitTimeDefault, stamped on ephemerals
_NAME_CHARS = BASE62


class ConsumerSet:
    """A stream's consumers by name, and the one stream watcher that wakes their waiting
    pull requests after new messages are stored (batched: once per turn of the event loop).
    It is a stream watcher only while some request waits or a push consumer is bound, so a
    stream whose consumers have nothing waiting keeps its fast publish path."""

    def __init__(self, js: ConsumerSetHost, stream: Stream) -> None:
        self.js = js
        self.stream = stream
        self.by_name: dict[str, Consumer] = {}
        self._subs: dict[str, list[Subscription]] = {}
        self._scheduled = False
        self._interest_scheduled = False
        self._listening = False
        #: The push consumers, whose deliver subjects each subscription change is offered to.
        self._push: list[Consumer] = []

    # --- create or update (``addConsumerWithAssignment``) -------------------------------

    def create(self, cfg: ConsumerConfig, action: str, pedantic: bool) -> Consumer:
        """``addConsumerWithAssignment`` for a standalone server: the config's defaults and
        checks, then an update of the consumer of that name or a new consumer (the account's
        limits, the work-queue rules), announced by its advisory."""
        js, stream = self.js, self.stream
        scfg = stream.config
        set_defaults(cfg, scfg, pedantic, js.limits.max_ack_pending)
        check_config(cfg, scfg, js.limits.max_ack_pending)
        name = cfg.durable_name or cfg.name
        if name:
            existing = self.by_name.get(name)
            if existing is not None:
                if action == "create":
                    old = existing.config
                    copy_metadata(cfg, old)
                    if not same_config(cfg, old):
                        raise api_error(ApiErrors.JSConsumerAlreadyExists)
                if existing.active and cfg.deliver_subject != existing.config.deliver_subject:
                    raise api_error(ApiErrors.JSConsumerNameExistErr)  # push bound: in use
                check_update(existing.config, cfg)
                if not cfg.durable_name and cfg.inactive_threshold <= 0:
                    cfg.inactive_threshold = EPHEMERAL_INACTIVE_NS  # an update re-stamps it (after the create check)
                existing.update_config(cfg)
                js.consumer_store.created(existing)
                return existing
        if action == "update":
            raise api_error(ApiErrors.JSConsumerDoesNotExist)
        most = consumer_limit(js, scfg.max_consumers)
        if most > 0 and len(self.by_name) >= most:
            raise api_error(ApiErrors.JSMaximumConsumersLimitErr)
        if scfg.retention == "workqueue":
            check_work_queue(stream, cfg, cfg.durable_name or cfg.name, filters_of(cfg))
        if cfg.durable_name and len(cfg.durable_name) > MAX_NAME_LEN:
            raise api_error(ApiErrors.JSConsumerNameTooLongErrF, max=MAX_NAME_LEN)
        name = cfg.durable_name or cfg.name or _new_name(self.by_name)
        if not is_valid_asset_name(name):
            raise api_error(ApiErrors.JSConsumerBadDurableNameErr)
        refuse_unsupported(cfg, scfg)
        if not cfg.durable_name and cfg.inactive_threshold <= 0:
            cfg.inactive_threshold = EPHEMERAL_INACTIVE_NS
        consumer = Consumer(js, stream, cfg, name, js.clock.now_ns())
        self.add(consumer)
        consumer_leader_elected(consumer)  # its raft group elects its first leader
        js.consumer_store.created(consumer)
        send_consumer_action(js, stream.name, name, CONSUMER_CREATED)
        return consumer

    # --- subscriptions ------------------------------------------------------------------

    def add(self, consumer: Consumer) -> None:
        """Take in a consumer (new, or restored from disk or a snapshot): subscribe the
        subjects that reach it and start a bound push consumer."""
        self.by_name[consumer.name] = consumer
        tail = self.stream.name.encode() + b"." + consumer.name.encode()
        nxt = b"$JS.API.CONSUMER.MSG.NEXT." + tail
        subs = [Subscription(InternalSubscriber(self._pull_handler(consumer)), nxt, None, b"$JS.NEXT")]
        reset = b"$JS.API.CONSUMER.RESET." + tail
        subs.append(Subscription(InternalSubscriber(self._reset_handler(consumer)), reset, None, b"$JS.RESET"))
        ack_sub: Subscription | None = None
        if consumer.config.ack_policy != "none":
            # ``ackSubjOld``: exactly the five tokens of the ack subject the server hands out.
            acks = b"$JS.ACK." + tail + b".*.*.*.*.*"
            ack_sub = Subscription(InternalSubscriber(self._ack_handler(consumer)), acks, None, b"$JS.ACK")
            subs.append(ack_sub)
        if consumer.config.flow_control:
            fc = b"$JS.FC." + tail + b".*"
            subs.append(Subscription(InternalSubscriber(self._fc_handler(consumer)), fc, None, b"$JS.FC"))
        account = self.js.account
        self._subs[consumer.name] = [sub for sub in subs if account.sublist.insert(sub)]
        if ack_sub is not None and ack_sub in self._subs[consumer.name]:
            # Acks come by the account's ack lane, in runs, while nothing else listens there.
            account.ack_lane.add(ack_sub, consumer.process_acks)
        consumer.on_waiting = self.watch
        if consumer.push:
            self._listen()
            self.watch()
            if consumer.active:
                self.js.server.loop.call_soon(self._deliver_new, consumer)

    def _deliver_new(self, consumer: Consumer) -> None:
        """A new push consumer that is bound already starts after its create reply."""
        consumer.deliver_push()
        self.js.server.flush()

    # --- interest in deliver subjects (push consumers) ---------------------------------

    def _listen(self) -> None:
        """Follow subscription changes while this stream has push consumers."""
        self._push = [c for c in self.by_name.values() if c.push]
        want = bool(self._push)
        on_change = self.js.account.sublist.on_change
        if want and not self._listening:
            on_change.append(self._on_sub_change)
        elif not want and self._listening:
            on_change.remove(self._on_sub_change)
        self._listening = want

    def _on_sub_change(self, sub: Subscription) -> None:
        """Each subscription change goes to every push consumer's notification at once (its
        state depends on the order of the changes); the consumers follow after this turn."""
        sublist = self.js.account.sublist
        flipped = False
        for consumer in self._push:
            interest = consumer.interest
            if interest is not None and interest.subject == sub.subject and interest.changed(sublist, sub):
                flipped = True
        if flipped and not self._interest_scheduled:
            self._interest_scheduled = True
            self.js.server.loop.call_soon(self._interest_changed)

    def _interest_changed(self) -> None:
        self._interest_scheduled = False
        for consumer in list(self.by_name.values()):
            if consumer.push and not consumer.closed:
                consumer.update_interest()
        self.watch()
        self.js.server.flush()

    @staticmethod
    def _fc_handler(consumer: Consumer) -> Any:
        def on_fc(subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
            consumer.process_flow_control(subject)

        return on_fc

    @staticmethod
    def _ack_handler(consumer: Consumer) -> Any:
        def on_ack(subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
            consumer.process_ack(subject, reply, hdr, msg)

        return on_ack

    @staticmethod
    def _pull_handler(consumer: Consumer) -> Any:
        """``processNextMsgReq``: the consumer's own subscription of its ``MSG.NEXT`` subject
        (so a request for a consumer that does not exist gets no responders)."""

        def on_pull(subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
            if reply:
                consumer.next_request(reply, msg[hdr:] if hdr > 0 else msg, deliver_now=False)

        return on_pull

    def _reset_handler(self, consumer: Consumer) -> Any:
        """``processResetReq``: the consumer's own subscription of its ``CONSUMER.RESET``
        subject (:mod:`.reset`); the reply, then delivery from the new position."""
        out = self.js.out

        def on_reset(subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
            if not reply or consumer.closed:
                return
            headers, data = (msg[:hdr], msg[hdr:]) if hdr > 0 else (b"", msg)
            reply_hdr, body = reset_reply(consumer, headers, data)
            if reply_hdr:
                out.send(reply, len(reply_hdr), reply_hdr + body)
            else:
                out.send(reply, -1, body)
            if consumer.waiting or consumer.push:
                consumer.deliver_waiting()
            self.watch()

        return on_reset

    def unsubscribe(self) -> None:
        """JetStream stopped on this server (lame duck mode, or another server of the cluster
        leads): every consumer's subscriptions (``MSG.NEXT``, acks, flow control) leave the
        sublist, so their interest leaves the routes and a request here hears no responders,
        as nats-server's stopped consumers; the consumers keep their state for
        :meth:`resubscribe`."""
        account = self.js.account
        for subs in self._subs.values():
            for sub in subs:
                account.ack_lane.remove(sub)
                account.sublist.remove(sub)

    def resubscribe(self) -> None:
        """JetStream runs here again: the subscriptions :meth:`unsubscribe` took out."""
        account = self.js.account
        for name, subs in self._subs.items():
            consumer = self.by_name.get(name)
            self._subs[name] = kept = [sub for sub in subs if account.sublist.insert(sub)]
            for sub in kept:
                if sub.sid == b"$JS.ACK" and consumer is not None:
                    account.ack_lane.add(sub, consumer.process_acks)

    def remove(self, consumer: Consumer) -> None:
        """The consumer is deleted (by the API, its stream's deletion or inactivity)."""
        release_deleted(consumer)
        consumer.stop()
        if self.by_name.get(consumer.name) is consumer:
            del self.by_name[consumer.name]
        for sub in self._subs.pop(consumer.name, []):
            sub.closed = True
            self.js.account.ack_lane.remove(sub)
            self.js.account.sublist.remove(sub)
        self._listen()
        self.watch()

    def purged(self, subject: str) -> None:
        """``purgeLocked`` after a stream purge: tell each consumer whose messages went."""
        store = self.stream.store
        first, last = store.first_seq, store.last_seq
        fseq = first
        if subject:
            sm = store.load_next(subject.encode(), first)
            fseq = sm.seq if sm is not None else 0
        for consumer in list(self.by_name.values()):
            filters = filters_of(consumer.config)
            start, wider = fseq, False
            if subject and not any(subject_is_subset_match(f, subject) for f in filters):
                if filters and not any(subject_is_subset_match(subject, f) for f in filters):
                    continue
                start, wider = first, True
            consumer.record_purge(start, last, wider)

    def clear(self) -> None:
        for consumer in list(self.by_name.values()):
            self.remove(consumer)

    # --- the stream watcher -----------------------------------------------------------

    def watch(self) -> None:
        """Be a watcher of the stream exactly while some consumer has waiting requests
        (or is a bound push consumer)."""
        waiting = any(c.waiting or c.active for c in self.by_name.values())
        watchers = self.stream.watchers
        if waiting and self not in watchers:
            watchers.append(self)
        elif not waiting and self in watchers:
            watchers.remove(self)

    def pump(self) -> None:
        """A message was stored: deliver to waiting requests (and push consumers) after
        the rest of this read, before its replies are written (``Server.before_flush``):
        the PubAck and the delivery go out in one write, as nats-server's mostly do."""
        if not self._scheduled:
            self._scheduled = True
            self.js.server.before_flush(self._wake)

    def detach(self) -> None:
        if self in self.stream.watchers:
            self.stream.watchers.remove(self)

    def _wake(self) -> None:
        self._scheduled = False
        for consumer in list(self.by_name.values()):
            if consumer.waiting or consumer.active:
                consumer.deliver_waiting()
        self.watch()
        self.js.server.flush()


def _new_name(taken: dict[str, Consumer]) -> str:
    """``createConsumerName``: 8 random characters."""
    while True:
        name = "".join(random.choice(_NAME_CHARS) for _ in range(8))
        if name not in taken:
            return name


def consumers_of(stream: Stream) -> ConsumerSet | None:
    """The consumers of ``stream`` as the service made them (None before the first):
    :meth:`JetStream.consumer_set` is the only writer of ``Stream.consumer_set``, which the
    stream types by what its own part reads (``streams.host.StreamConsumers``)."""
    return cast("ConsumerSet | None", stream.consumer_set)
