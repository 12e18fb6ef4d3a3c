"""The JetStream service of one account: its streams, their subscriptions and lifetimes.

It talks to the server only through the subscription index and the account's outbound
path: internal subscribers get messages like client connections do, and replies are
routed like any published message. The ``$JS.API`` requests are handled above it, in
``api/`` (``api/dispatch.py``), which calls into this service and its streams.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from ..ids import random_name
from ..protocol.texts import STREAM_REPLICAS_ACROSS_PROCESSES
from ..server.accounts import Account
from ..server.js_limits import UNLIMITED, JetStreamLimits
from ..server.sublist import Subscription
from ..store import Clock, ControlledClock
from ..store.compaction import CompactingLog
from ..subject_transform import SubjectTransform, TransformError
from ..subjects import is_valid_subject, subjects_collide
from ..version import API_LEVEL
from .clock_timers import ClockTimers
from .cluster.replicas import Peer
from .consumers.consumer import Consumer
from .consumers.consumer_set import ConsumerSet
from .consumers.going_away import signal_shutdown
from .directget.responder import DirectGetResponder
from .errors import ApiError, ApiErrors, api_error
from .events.consumer_advisories import DELETE as CONSUMER_DELETED
from .events.consumer_advisories import send_consumer_action
from .events.stream_advisories import CREATE as STREAM_CREATED
from .events.stream_advisories import send_stream_action
from .limits.counts import stream_count_error, stream_limits_error
from .links.external_route import resolve_external
from .links.mirror import MirrorLink
from .links.sources import SourceLink, compose_iname
from .links.upstream import UpstreamLink
from .persistence.consumer_store import ConsumerStore
from .persistence.dedup_rebuild import rebuild_dedup
from .persistence.snapshot_archive import RestoreError
from .persistence.stream_files import MetaError, StreamFiles, paused_gc, saved_streams
from .streams.atomic_batch import BatchLimits
from .streams.config import StreamConfig, check_stream_config, copy_metadata
from .streams.refusals import refuse_unsupported
from .streams.retention import check_interest_state, consumer_deleted
from .streams.stream import Stream

#: Logged as warnings (a damaged store is not a jsemu bug), printed by ``jsemu serve`` as [ERR].
_NATS_ERR = {"nats_level": "ERR"}

if TYPE_CHECKING:
    from collections.abc import Collection

    from ..server.outbound import Sender
    from ..server.routing import Router
    from ..server.server import Server

__all__ = ["JetStream"]

log = logging.getLogger("jsemu.jetstream")

#: How many Direct Get answers the log keeps (who answered which request).
ANSWER_LOG_SIZE = 100_000


class JetStream:
    """One account's JetStream: its streams and their consumers, mirrors, sources and peers,
    and the services they share (the clock, timers, the outbound path). Requests reach it
    through the account's ``api.dispatch.JetStreamApi``."""

    api_level = API_LEVEL

    def __init__(self, server: Server, clock: Clock | None = None, account: Router | None = None) -> None:
        self.server = server
        #: False after ``shut_down`` (lame duck mode, another server leads) until ``resume``.
        self.serving = True
        #: The account whose streams these are: its subjects, its outbound path (``$G``: the server).
        self.account: Router = account if account is not None else server
        #: The account's JetStream limits (``$G``'s: none).
        self.limits: JetStreamLimits = account.config.limits if isinstance(account, Account) else UNLIMITED
        #: Every account's JetStream on this server, this one included (the server's storage
        #: limits hold for them all); ``app.Server`` shares one dict among them.
        self.all_jetstreams: dict[str, JetStream] = {self.account.name: self}
        #: How replies, acks and Direct Get answers leave: the account's one outbound path.
        self.out: Sender = self.account.outbound
        self.clock: Clock = clock or ControlledClock()
        self.domain = server.options.domain or ""
        self.streams: dict[str, Stream] = {}
        self._stream_subs: dict[str, list[Subscription]] = {}
        #: Mirrors whose upstream does not exist (yet), by upstream name.
        self._orphans: dict[str, list[UpstreamLink]] = {}
        #: (request subject, responder) for each Direct Get request answered, newest last.
        self.answers: deque[tuple[bytes, DirectGetResponder]] = deque(maxlen=ANSWER_LOG_SIZE)
        options = server.options
        #: Where streams are kept across restarts (``store_dir``); None: memory only.
        self.streams_dir = (
            Path(options.store_dir) / "jetstream" / self.account.name / "streams" if options.store_dir else None
        )
        self.clustered = options.cluster_size > 1
        #: In a cluster of processes (routes), where this JetStream is the metadata leader's:
        #: streams are R1 and name the route cluster in their ``cluster`` block.
        self.process_cluster = options.cluster is not None and not self.clustered
        self.cluster_name = (options.cluster_name or "jsemu") if self.clustered else ""
        #: The simulated cluster's servers; a standalone server is its only peer.
        self.peer_names = options.cluster_node_names() if self.clustered else [server.server_name]
        self.api_total = 0
        self.api_errors = 0
        #: Consumer timers (ack wait, request expiry, inactivity) on the server's clock.
        self.timers = ClockTimers(self.clock, lambda: server._loop)
        #: Atomic batch limits, and the batches open in all streams (``atomic_batch``).
        self.batch_limits = BatchLimits()
        self.atomic_inflight = 0
        #: Fast batches open in all the account's streams (``fast_batch``).
        self.fast_inflight = 0
        self._consumer_sets: dict[str, ConsumerSet] = {}
        #: Saves the consumers of file streams when there is a store_dir.
        self.consumer_store = ConsumerStore(self)

    def route_cluster(self) -> dict[str, str]:
        """The ``cluster`` block of an R1 stream or consumer of a real cluster, for this
        server as the metadata leader of a cluster of processes (its name may be a peer's)."""
        return {"name": self.server.info_cluster or "", "leader": self.server_name}

    @property
    def server_name(self) -> str:
        return self.server.server_name

    def start(self) -> None:
        """Bring back the streams kept in ``store_dir`` (the account's ``JetStreamApi`` starts
        first, as nats-server subscribes its API before it restores)."""
        with paused_gc():  # the replayed logs and the duplicate windows rebuilt from them
            self._restore()

    # --- replies ----------------------------------------------------------------------

    def send_reply(self, reply: bytes, payload: bytes, hdr: bytes = b"") -> None:
        """Publish a reply the way the server's internal client does."""
        if hdr:
            self.out.send(reply, len(hdr), hdr + payload)
        else:
            self.out.send(reply, -1, payload)

    # --- streams ----------------------------------------------------------------------

    def alternates(self, stream: Stream) -> list[dict[str, str]]:
        """``streamAlternates``: the stream and the mirrors that answer its Direct Gets."""
        out = [{"name": stream.name, "cluster": self.cluster_name}]
        for other in self.streams.values():
            link = other.mirror_link
            if link is not None and link.upstream is stream and other.config.mirror_direct:
                out.append({"name": other.name, "cluster": self.cluster_name})
        return out

    def lookup_config(self, name: str) -> StreamConfig | None:
        stream = self.streams.get(name)
        return stream.config if stream is not None else None

    def filtered_streams(self, subject: str) -> list[Stream]:
        if not subject:
            return list(self.streams.values())
        return [
            s for s in self.streams.values() if any(subjects_collide(subject, subj) for subj in s.config.subjects or [])
        ]

    def add_stream(self, config: StreamConfig, pedantic: bool = False, start_links: bool = True) -> Stream:
        """``addStreamWithAssignment``; a mirror or the sources start copying at once unless
        ``start_links`` is False (then :meth:`start_links` does it)."""
        # Go's API handler runs ``jsNonClusteredStreamLimitsCheck`` on the config as sent, before
        # its checks and defaults: the tier and stream count; consumers and bytes when the
        # storage is given (Go's zero storage type matches neither).
        over = stream_count_error(self, config.name, config.num_replicas)
        if over is None and config.storage and not self.clustered:
            over = stream_limits_error(self, config)
        if over is not None:
            raise over
        cfg = check_stream_config(config, self.lookup_config, pedantic, self.limits)
        self._check_replicas(cfg)
        # The limits come before the name check (Go ``jsNonClusteredStreamLimitsCheck``): a
        # repeated create is refused when the server's storage has no room for it again.
        over = stream_limits_error(self, cfg)
        if over is not None:
            raise over
        existing = self.streams.get(cfg.name)
        if existing is not None:
            copy_metadata(cfg, existing.config)
            if cfg == existing.config:
                return existing
            raise api_error(ApiErrors.JSStreamNameExistErr)
        if self._overlaps(cfg):
            raise api_error(ApiErrors.JSStreamSubjectOverlapErr)
        _check_transform(cfg)
        _check_mirror_filters(cfg)
        refuse_unsupported(cfg)
        stream = self._new_stream(cfg, self.clock.now_ns())
        if self.persists(cfg):
            assert self.streams_dir is not None
            files = StreamFiles(self.streams_dir, cfg.name)
            files.save_meta(cfg, stream.created_ns)
            stream.replicas.wal = files.open_wal(stream)
        self._register(stream)
        if start_links:
            self.start_links(stream)
        for link in self._orphans.pop(cfg.name, []):
            link.attach(stream)
        return stream

    def _overlaps(self, cfg: StreamConfig) -> bool:
        """Whether another stream already takes some of ``cfg``'s subjects."""
        mine = cfg.subjects or []
        return any(
            subjects_collide(a, b) for other in self.streams.values() for a in mine for b in other.config.subjects or []
        )

    def persists(self, cfg: StreamConfig) -> bool:
        """File streams outlive a restart when there is a store_dir; memory streams never
        do (as with nats-server)."""
        return self.streams_dir is not None and cfg.storage == "file"

    def _new_stream(self, cfg: StreamConfig, created_ns: int) -> Stream:
        # A node the control plane took down (``node_down``) is placed last, its peer offline.
        down = {node.name for node in self.server.nodes if not node.up} if self.clustered else set()
        names = [n for n in self.peer_names if n not in down] + [n for n in self.peer_names if n in down]
        peers = names[: max(1, min(cfg.num_replicas, len(names)))]
        stream = Stream(self, cfg, created_ns, peers)
        for peer in stream.replicas.peers:
            peer.offline = peer.name in down
        if cfg.num_replicas > 1:
            stream.raft_group = self._raft_group(cfg)
        return stream

    def _register(self, stream: Stream) -> None:
        """Make a stream live: its subjects, its Direct Get members, its links."""
        cfg = stream.config
        self.streams[cfg.name] = stream
        self._subscribe(stream)
        self.sync_responders(stream)
        if cfg.mirror is not None:
            stream.mirror_link = MirrorLink(self, stream)
        stream.source_links = [SourceLink(self, stream, spec) for spec in cfg.sources or [] if spec is not None]
        stream.arm_expiry()

    def _restore(self) -> None:
        """Bring back the streams saved under ``store_dir``: config, then the replayed log."""
        if self.streams_dir is None:
            return
        restored = []
        for files in saved_streams(self.streams_dir):
            started = time.monotonic()
            try:
                cfg, created_ns = files.load_meta()
            except MetaError as exc:
                log.warning("Error recovering stream in %r: %s", str(files.dir), exc, extra=_NATS_ERR)
                continue
            try:
                stream = self._new_stream(cfg, created_ns)
                files.replay_into(stream)
                if stream.schedules is not None:
                    stream.schedules.rebuild()
            except Exception as exc:  # noqa: BLE001 - one line per stream, never a traceback
                log.warning(
                    "Error recovering stream '%s > %s': %s: %s",
                    self.account.name,
                    cfg.name,
                    type(exc).__name__,
                    exc,
                    extra=_NATS_ERR,
                )
                continue
            stream.replicas.wal = files.open_wal(stream)
            rebuild_dedup(stream)
            log.info(
                "  Restored %d messages for stream '%s > %s' in %dms",
                stream.store.msgs,
                self.account.name,
                cfg.name,
                (time.monotonic() - started) * 1000,
            )
            self._register(stream)
            restored.append(stream)
        for stream in restored:
            self.start_links(stream)
        for stream in restored:  # links of accounts restored before this one (external ones)
            for link in self._orphans.pop(stream.name, []):
                link.attach(stream)
        for stream in restored:
            consumers = self.consumer_set(stream)
            for consumer in self.consumer_store.restore(stream):
                consumers.add(consumer)

    def restore_stream(self, cfg: StreamConfig, stream_dir: Path) -> Stream:
        """A stream from an unpacked snapshot (``snapshot_archive``) under ``cfg``: the
        restore request's config is the stream's new identity (``RestoreStream``), its
        creation time is now, and so is its consumers'."""
        files = StreamFiles(stream_dir.parent, stream_dir.name)
        try:
            archived, _ = files.load_meta()
        except MetaError as exc:
            raise RestoreError(str(exc)) from None
        if archived.name != cfg.name:
            raise RestoreError("stream names do not match")
        if cfg.name in self.streams:
            raise api_error(ApiErrors.JSStreamNameExistRestoreFailedErr)
        if self._overlaps(cfg):
            err = api_error(ApiErrors.JSStreamSubjectOverlapErr)  # ``addStream``'s, wrapped
            raise RestoreError(f"error adding stream: {err.description} ({err.err_code})")
        now = self.clock.now_ns()
        stream = self._new_stream(cfg, now)
        files.replay_into(stream)
        stream.update_config(cfg)  # the log ends with the archived stream's limits
        if self.persists(cfg):
            assert self.streams_dir is not None
            saved = StreamFiles(self.streams_dir, cfg.name)
            saved.remove()
            saved.save_meta(cfg, now)
            stream.replicas.wal = saved.open_wal(stream)
            stream.replicas.wal.compact()  # the restored state, as the log's first records
        rebuild_dedup(stream)
        self._register(stream)
        send_stream_action(self, cfg.name, STREAM_CREATED)
        self.start_links(stream)
        for link in self._orphans.pop(cfg.name, []):
            link.attach(stream)
        consumers = self.consumer_set(stream)
        for consumer in self.consumer_store.load(stream, stream_dir, now):
            consumers.add(consumer)
            self.consumer_store.created(consumer)
        return stream

    def start_links(self, stream: Stream) -> None:
        """Create the consumers of a mirror or of the sources on their upstreams; a link
        whose upstream does not exist waits for it."""
        if self.streams.get(stream.name) is not stream:
            return
        links: list[UpstreamLink] = [stream.mirror_link] if stream.mirror_link is not None else []
        for link in links + list(stream.source_links):
            if link.upstream is not None:
                continue
            link.started = True
            home: JetStream | None = self
            external = link.spec.get("external")
            if external is not None:
                kind = "M" if link is stream.mirror_link else "S"
                route = resolve_external(self, external, link.upstream_name, kind)
                home, link.deaf = route.upstream, not route.delivers
                link.unreachable = home is None
            if home is None:
                continue
            upstream = home.streams.get(link.upstream_name)
            if upstream is not None:
                link.attach(upstream)
            else:
                waiting = home._orphans.setdefault(link.upstream_name, [])
                if link not in waiting:
                    waiting.append(link)

    def _check_replicas(self, cfg: StreamConfig) -> None:
        if cfg.num_replicas > 1 and self.process_cluster:
            raise api_error(STREAM_REPLICAS_ACROSS_PROCESSES)
        if cfg.num_replicas > 1 and not self.clustered:
            raise api_error(ApiErrors.JSStreamReplicasNotSupportedErr)
        if cfg.num_replicas > len(self.peer_names):
            raise api_error(ApiErrors.JSClusterNoPeersErrF, err="no suitable peers for placement")

    def _raft_group(self, cfg: StreamConfig) -> str:
        """``groupNameForStream``: S-R<n><storage>-<random>; only R>1 streams show it."""
        return f"S-R{cfg.num_replicas}{'M' if cfg.storage == 'memory' else 'F'}-{random_name(self.server.rng)}"

    def update_stream(
        self, stream: Stream, cfg: StreamConfig, pedantic: bool = False, start_links: bool = True
    ) -> None:
        """``configUpdateCheck`` then apply; ``cfg`` already passed ``check_stream_config``.
        New sources start copying at once unless ``start_links`` is False."""
        old = stream.config
        if cfg.name != old.name:
            raise _invalid("stream configuration name must match original")
        self._check_replicas(cfg)
        if cfg.num_replicas != old.num_replicas:
            raise _invalid("jsemu can not change the replica count of a stream")
        if cfg.storage != old.storage:
            raise _invalid("stream configuration update can not change storage type")
        if cfg.retention != old.retention and "workqueue" in (old.retention, cfg.retention):
            raise _invalid("stream configuration update can not change retention policy to/from workqueue")
        if not cfg.sealed and old.sealed:
            raise _invalid("stream configuration update can not unseal a sealed stream")
        if not cfg.deny_delete and old.deny_delete:
            raise _invalid("stream configuration update can not cancel deny message deletes")
        if not cfg.deny_purge and old.deny_purge:
            raise _invalid("stream configuration update can not cancel deny purge")
        if cfg.mirror is not None and cfg.mirror != old.mirror:
            raise api_error(ApiErrors.JSStreamMirrorNotUpdatableErr)
        if old.allow_msg_ttl and not cfg.allow_msg_ttl:
            raise _invalid("message TTL status can not be disabled")
        if cfg.allow_msg_counter != old.allow_msg_counter:
            raise _invalid("stream configuration update can not change message counter setting")
        if old.allow_msg_schedules and not cfg.allow_msg_schedules:
            raise _invalid("message schedules can not be disabled")
        if (old.persist_mode or "default") != (cfg.persist_mode or "default"):
            raise _invalid("stream configuration update can not change persist mode")
        if cfg.sealed:
            cfg.max_age = 0
            cfg.discard = "new"
            cfg.deny_delete = cfg.deny_purge = True
            cfg.allow_rollup_hdrs = False
        for other in self.streams.values():
            if other is stream:
                continue
            if any(subjects_collide(a, b) for a in cfg.subjects or [] for b in other.config.subjects or []):
                raise api_error(ApiErrors.JSStreamSubjectOverlapErr)
        over = stream_limits_error(self, cfg, old)
        if over is not None:
            raise over
        _check_transform(cfg)
        refuse_unsupported(cfg)
        stream.update_config(cfg)
        if cfg.retention == "interest" and old.retention != "interest":
            check_interest_state(stream)
        if cfg.subjects != old.subjects:
            self._unsubscribe(stream)
            self._subscribe(stream)
        if self.persists(stream.config):
            assert self.streams_dir is not None
            StreamFiles(self.streams_dir, stream.name).save_meta(stream.config, stream.created_ns)
        link = stream.mirror_link
        if link is not None and cfg.mirror is None:
            # An update without the mirror promotes the stream: it stops following.
            self._forget_link(link)
            stream.mirror_link = None
        elif link is not None and cfg.mirror_direct and not old.mirror_direct:
            link.joined = True  # an update that turns mirror_direct on joins at once
        self._update_sources(stream)
        if start_links:
            self.start_links(stream)
        self.sync_responders(stream)

    # --- consumers --------------------------------------------------------------------

    def consumer_set(self, stream: Stream) -> ConsumerSet:
        """The consumers of ``stream`` (created on first use)."""
        cs = self._consumer_sets.get(stream.name)
        if cs is None or cs.stream is not stream:
            cs = self._consumer_sets[stream.name] = ConsumerSet(self, stream)
            stream.consumer_set = cs
        return cs

    def delete_consumer(self, consumer: Consumer) -> None:
        cs = self._consumer_sets.get(consumer.stream.name)
        if cs is not None:
            cs.remove(consumer)
            consumer_deleted(consumer.stream, consumer)
        self.consumer_store.deleted(consumer)
        send_consumer_action(self, consumer.stream.name, consumer.name, CONSUMER_DELETED)

    def signal_shutdown(self) -> bool:
        """The server stops: waiting pull requests hear ``409 Server Shutdown``
        (:func:`.consumers.going_away.signal_shutdown`). Whether any did. Not after
        ``shut_down``: Go's ``shutdownJetStream`` has removed the consumers by then."""
        if not self.serving:
            return False
        return signal_shutdown(c for cs in self._consumer_sets.values() for c in cs.by_name.values())

    def num_consumers(self, streams: Collection[str] | None = None) -> int:
        """The account's consumers, or those of the named ``streams``."""
        sets = self._consumer_sets
        return sum(len(cs.by_name) for name, cs in sets.items() if streams is None or name in streams)

    def delete_stream(self, stream: Stream) -> None:
        cs = self._consumer_sets.get(stream.name)
        if cs is not None and cs.stream is stream:
            for name in list(cs.by_name):
                send_consumer_action(self, stream.name, name, CONSUMER_DELETED)
            cs.clear()
            del self._consumer_sets[stream.name]
        self._unsubscribe(stream)
        stream.stop_expiry()
        stream.batches.drop_all()
        stream.fast_batches.drop_all()
        for peer in stream.replicas.peers:
            _leave(peer)
        for link in list(stream.watchers):
            link.detach()
            if isinstance(link, UpstreamLink):
                self._orphans.setdefault(stream.name, []).append(link)
        if stream.mirror_link is not None:
            self._forget_link(stream.mirror_link)
        for source in stream.source_links:
            self._forget_link(source)
        self.streams.pop(stream.name, None)
        if stream.replicas.wal is not None:
            stream.replicas.wal.close()
            stream.replicas.wal = None
        if self.streams_dir is not None:
            StreamFiles(self.streams_dir, stream.name).remove()

    def resume(self) -> None:
        """Serve the streams again after ``shut_down`` (this server leads a cluster again)."""
        self.serving = True
        for stream in self.streams.values():
            if stream.name not in self._stream_subs:
                self._subscribe(stream)
            self.sync_responders(stream)
        for cs in self._consumer_sets.values():
            cs.resubscribe()

    def checkpoint_logs(self) -> None:
        """A clean stop: each stream log with records since its last compaction is
        compacted, so the next start loads its columns and replays nothing
        (``CompactingLog.checkpoint``)."""
        for stream in self.streams.values():
            wal = stream.replicas.wal
            if isinstance(wal, CompactingLog):
                wal.checkpoint()

    def shut_down(self) -> None:
        """Lame duck mode's ``shutdownJetStream``: the streams stop taking publishes (a
        request then hears no responders), Direct Gets and consumers (pull requests and acks
        hear no responders either); the data and the consumers' state stay where they are."""
        self.serving = False
        for stream in self.streams.values():
            self._unsubscribe(stream)
            for peer in stream.replicas.peers:
                _leave(peer)
        for cs in self._consumer_sets.values():
            cs.unsubscribe()

    def _update_sources(self, stream: Stream) -> None:
        """Keep the consumers of sources that stay (by their index name), start new ones."""
        current = {link.iname: link for link in stream.source_links}
        wanted = [spec for spec in stream.config.sources or [] if spec is not None]
        links = []
        for spec in wanted:
            link = current.pop(compose_iname(spec), None)
            if link is not None and link.upstream is None:
                link.started = False  # its consumer is set up anew after the update
            links.append(link if link is not None else SourceLink(self, stream, spec))
        for gone in current.values():
            self._forget_link(gone)
        stream.source_links = links

    def _forget_link(self, link: UpstreamLink) -> None:
        link.detach()
        for js in self.all_jetstreams.values():  # an external link waits in its upstream's account
            orphans = js._orphans.get(link.upstream_name, [])
            if link in orphans:
                orphans.remove(link)

    def sync_responders(self, stream: Stream) -> None:
        """Make the stream's Direct Get members match its state, at once: each online peer
        answers for the stream while ``allow_direct`` is on, and for the upstream while it
        is a mirror with ``mirror_direct`` that has joined. A stream without any online peer
        has no leader and so takes no publishes either."""
        cfg = stream.config
        link = stream.mirror_link
        upstream = link.upstream_name if link is not None and link.joined and cfg.mirror_direct else None
        for peer in stream.replicas.peers:
            want_own = cfg.allow_direct and not peer.offline
            want_up = upstream is not None and not peer.offline
            own = next((r for r in peer.responders if r.answers_for == stream.name), None)
            up = next((r for r in peer.responders if r.answers_for != stream.name), None)
            if want_own and own is None:
                self._join(peer, DirectGetResponder(self, stream, peer.store, peer.name))
            elif not want_own and own is not None:
                _leave(peer, own)
            if want_up and up is None:
                assert upstream is not None
                self._join(peer, DirectGetResponder(self, stream, peer.store, peer.name, answer_as=upstream))
            elif not want_up and up is not None:
                _leave(peer, up)
        leaderless = stream.replicas.leaderless
        if leaderless and self._stream_subs.get(stream.name):
            self._unsubscribe(stream)
        elif not leaderless and stream.name not in self._stream_subs and self.streams.get(stream.name) is stream:
            self._subscribe(stream)

    def _join(self, peer: Peer, responder: DirectGetResponder) -> None:
        responder.subscribe()
        peer.responders.append(responder)

    def _subscribe(self, stream: Stream) -> None:
        subs = []
        sid = b"$JS.STREAM." + stream.name.encode()
        for subject in stream.config.subjects or []:
            sub = Subscription(stream, subject.encode(), None, sid)
            if self.account.sublist.insert(sub):
                subs.append(sub)
        self._stream_subs[stream.name] = subs

    def _unsubscribe(self, stream: Stream) -> None:
        for sub in self._stream_subs.pop(stream.name, []):
            sub.closed = True
            self.account.sublist.remove(sub)


def _leave(peer: Peer, responder: DirectGetResponder | None = None) -> None:
    """Take one (or every) Direct Get member of ``peer`` out of its queue group."""
    for member in [responder] if responder is not None else list(peer.responders):
        member.unsubscribe()
        peer.responders.remove(member)


def _check_mirror_filters(cfg: StreamConfig) -> None:
    """``addStreamWithAssignment``'s checks of a mirror's and the sources' filters and
    transforms."""
    for src in cfg.sources or []:
        transforms = (src or {}).get("subject_transforms") or []
        filters = (
            [(src or {}).get("filter_subject") or ""] if not transforms else [t.get("src", "") for t in transforms]
        )
        for filt in filters:
            if filt and not is_valid_subject(filt):
                raise _create_failed(f"subject filter '{filt}' for the source: invalid subject")
        for tr in transforms:
            src_subject, dest = tr.get("src", ""), tr.get("dest", "")
            if dest:
                try:
                    SubjectTransform(src_subject or ">", dest)
                except TransformError as exc:
                    raise _create_failed(
                        f"subject transform from '{src_subject}' to '{dest}' for the source: {exc}"
                    ) from None
    mirror = cfg.mirror
    if mirror is None:
        return
    transforms = mirror.get("subject_transforms") or []
    if not transforms:
        filt = mirror.get("filter_subject") or ""
        if filt and not is_valid_subject(filt):
            raise _create_failed(f"subject filter '{filt}' for the mirror invalid subject")
        return
    for tr in transforms:
        src, dest = (tr or {}).get("src", ""), (tr or {}).get("dest", "")
        if src and not is_valid_subject(src):
            raise _create_failed(f"invalid subject transform source '{src}' for the mirror: invalid subject")
        if dest:
            try:
                SubjectTransform(src or ">", dest)
            except TransformError as exc:
                raise _create_failed(f"subject transform from '{src}' to '{dest}' for the mirror: {exc}") from None


def _check_transform(cfg: StreamConfig) -> None:
    if cfg.subject_transform is None:
        return
    src, dest = cfg.subject_transform.get("src", ""), cfg.subject_transform.get("dest", "")
    try:
        SubjectTransform(src, dest)
    except TransformError as exc:
        raise _create_failed(f"stream subject transform from '{src}' to '{dest}': {exc}") from None


def _create_failed(text: str) -> ApiError:
    return api_error(ApiErrors.JSStreamCreateErrF, err=text)


def _invalid(text: str) -> ApiError:
    return api_error(ApiErrors.JSStreamInvalidConfigF, err=text)
