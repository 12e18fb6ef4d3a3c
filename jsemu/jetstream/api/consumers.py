"""Consumer handlers of ``$JS.API``: create (all subject forms), info, names, list, delete,
and the pull request subject ``CONSUMER.MSG.NEXT``.

Each handler checks things in the order of its Go counterpart in ``jetstream_api.go``
(standalone server) and ``addConsumerWithAssignment``, so a bad request gets the same first
error. Consumer lifetimes (subscription of the ack subject, waking on new messages, removal
with the stream) live in :class:`ConsumerSet`.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ...protocol.gojson import T_INT, GoStruct
from ...server.sublist import Subscription
from ...subjects import subject_is_subset_match
from ..cluster.leader import consumer_leader_elected
from ..consumers.config import (
    CREATE_CONSUMER_REQUEST,
    MAX_NAME_LEN,
    check_config,
    check_update,
    config_from_request,
    copy_metadata,
    filters_of,
    refuse_unsupported,
    same_config,
    set_defaults,
    set_static_metadata,
)
from ..consumers.consumer import Consumer
from ..consumers.pause import send_pause_advisory
from ..errors import ApiError, ApiErrors, api_error
from ..events.consumer_advisories import CREATE as CONSUMER_CREATED
from ..events.consumer_advisories import send_consumer_action
from ..internal import InternalSubscriber
from ..limits.counts import consumer_limit
from ..streams.config import is_valid_asset_name
from ..streams.retention import check_work_queue
from .registry import ApiRequest, api, error_response, is_empty_request, is_json_object_or_array, response_type

if TYPE_CHECKING:
    from ..consumers.host import ConsumerSetHost
    from ..service import JetStream
    from ..streams.stream import Stream

__all__ = ["ConsumerSet", "consumer_create", "consumers_of"]

CONSUMERS_REQUEST = GoStruct("JSApiConsumersRequest", {"offset": T_INT})
NAMES_LIMIT = 1024  # JSApiNamesLimit
LIST_LIMIT = 256  # JSApiListLimit
_PAGED_ZERO = {"total": 0, "offset": 0, "limit": 0}
_NAME_CHARS = string.ascii_letters + string.digits


class ConsumerSet:
    """A stream's consumers, and the one stream watcher that wakes their waiting pull
    requests after new messages are stored (batched: once per turn of the event loop).
    It is a stream watcher only while some request waits, so a stream whose consumers
    have nothing waiting keeps its fast publish path."""

    def __init__(self, js: ConsumerSetHost, stream: Stream) -> None:
        self.js = js
        self.stream = stream
        self.by_name: dict[str, Consumer] = {}
        self._subs: dict[str, list[Subscription]] = {}
        self._scheduled = False
        self._interest_scheduled = False
        self._listening = False

    def add(self, consumer: Consumer) -> None:
        self.by_name[consumer.name] = consumer
        tail = self.stream.name.encode() + b"." + consumer.name.encode()
        nxt = b"$JS.API.CONSUMER.MSG.NEXT." + tail
        subs = [Subscription(InternalSubscriber(self._pull_handler(consumer)), nxt, None, b"$JS.NEXT")]
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
        want = any(c.push for c in self.by_name.values())
        on_change = self.js.account.sublist.on_change
        if want and not self._listening:
            on_change.append(self._on_sub_change)
        elif not want and self._listening:
            on_change.remove(self._on_sub_change)
        self._listening = want

    def _on_sub_change(self, sub: Subscription) -> None:
        if not self._interest_scheduled:
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
                consumer.next_request(reply, msg[hdr:] if hdr > 0 else msg)

        return on_pull

    def remove(self, consumer: Consumer) -> None:
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
        """A message was stored: deliver to waiting requests once this turn is over."""
        if not self._scheduled:
            self._scheduled = True
            self.js.server.loop.call_soon(self._wake)

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


def _consumers(js: JetStream, stream: Stream) -> ConsumerSet:
    return js.consumer_set(stream)


def _new_name(taken: dict[str, Consumer]) -> str:
    """``createConsumerName``: 8 random characters."""
    while True:
        name = "".join(random.choice(_NAME_CHARS) for _ in range(8))
        if name not in taken:
            return name


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
        if cfg.num_replicas > 1 and not js.clustered:
            raise api_error(ApiErrors.JSStreamReplicasNotSupportedErr)
        stream = js.streams.get(stream_name)
        if stream is None:
            raise api_error(ApiErrors.JSStreamNotFoundErr)
        consumers = _consumers(js, stream)
        existing = consumers.by_name.get(consumer_name) if consumer_name else None
        if existing is not None:
            cfg.pause_until = existing.config.pause_until
        set_static_metadata(cfg)
        consumer = _add(js, stream, consumers, cfg, values.get("action") or "", bool(values.get("pedantic")))
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


EPHEMERAL_INACTIVE_NS = 5_000_000_000  # JsDeleteWaitTimeDefault, stamped on ephemerals


def _add(js: JetStream, stream: Stream, consumers: ConsumerSet, cfg: Any, action: str, pedantic: bool) -> Consumer:
    """``addConsumerWithAssignment`` for a standalone server."""
    scfg = stream.config
    set_defaults(cfg, scfg, pedantic, js.limits.max_ack_pending)
    check_config(cfg, scfg, js.limits.max_ack_pending)
    name = cfg.durable_name or cfg.name
    if name:
        existing = consumers.by_name.get(name)
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
    if most > 0 and len(consumers.by_name) >= most:
        raise api_error(ApiErrors.JSMaximumConsumersLimitErr)
    if scfg.retention == "workqueue":
        check_work_queue(stream, cfg, cfg.durable_name or cfg.name, filters_of(cfg))
    if cfg.durable_name and len(cfg.durable_name) > MAX_NAME_LEN:
        raise api_error(ApiErrors.JSConsumerNameTooLongErrF, max=MAX_NAME_LEN)
    name = cfg.durable_name or cfg.name or _new_name(consumers.by_name)
    if not is_valid_asset_name(name):
        raise api_error(ApiErrors.JSConsumerBadDurableNameErr)
    refuse_unsupported(cfg, scfg)
    if not cfg.durable_name and cfg.inactive_threshold <= 0:
        cfg.inactive_threshold = EPHEMERAL_INACTIVE_NS
    consumer = Consumer(js, stream, cfg, name, js.clock.now_ns())
    consumers.add(consumer)
    consumer_leader_elected(consumer)  # its raft group elects its first leader
    js.consumer_store.created(consumer)
    send_consumer_action(js, stream.name, name, CONSUMER_CREATED)
    return consumer


# --- info / names / list / delete -------------------------------------------------------


def _lookup(js: JetStream, req: ApiRequest) -> Consumer:
    stream = js.streams.get(req.token(5))
    if stream is None:
        raise api_error(ApiErrors.JSStreamNotFoundErr)
    consumer = _consumers(js, stream).by_name.get(req.token(6))
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
    by_name = _consumers(js, stream).by_name
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


def consumers_of(stream: Stream) -> ConsumerSet | None:
    """The consumers of ``stream`` as the service made them (None before the first):
    :meth:`JetStream.consumer_set` is the only writer of ``Stream.consumer_set``, which the
    stream types by what its own part reads (``streams.host.StreamConsumers``)."""
    return cast("ConsumerSet | None", stream.consumer_set)
