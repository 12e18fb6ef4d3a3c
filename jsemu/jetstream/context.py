"""What the parts of jetstream need from the service, one need per protocol.

The service (``JetStream``, one per account) holds the clock, the timers, the way out
(``Sender``), the server and the account's identity. Every part of jetstream needs a few of
them, and typing each part against the whole ``JetStream`` would make it import the module
that imports it: no part could be read or replaced without the others. So a part types what
it is handed against the protocols here (or a protocol of its own that combines them, with
the members it reads of its own callers): its
signatures say exactly which services it depends on, and the type checker proves at each
call site that ``JetStream`` provides them, structurally, without the part naming it.

One protocol here is no service but the contract between a stream and what follows it:
:class:`Watcher`, which the stream (``streams``) wakes and mirror and source links (``links``)
and consumers implement; it lives below both.

A member is a plain attribute where the service holds exactly that type, and a read-only
property where it is a part's narrower view of what it is handed (a mapping of concrete
streams standing for a mapping of the view a part declares: only a read-only member may be
covariant), or where the service computes it (``server_name``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..server.outbound import Sender
    from ..server.routing import Router
    from ..server.server import Server
    from ..store import Clock
    from .clock_timers import ClockTimers

__all__ = [
    "Advising",
    "HasAccount",
    "HasClock",
    "HasCluster",
    "HasDomain",
    "HasSender",
    "HasServer",
    "HasServerName",
    "HasTimers",
    "JetStreamTrace",
    "Watcher",
]


class HasClock(Protocol):
    """The server's clock (a ``ManualClock`` in tests): every timestamp and deadline."""

    clock: Clock


class HasTimers(Protocol):
    """Timers on the server's clock (ack wait, expiries, pacing)."""

    timers: ClockTimers


class HasSender(Protocol):
    """The account's one outbound path: replies, deliveries, advisories."""

    out: Sender


class HasDomain(Protocol):
    """The JetStream domain ("" for none), shown in advisories and infos."""

    domain: str


class HasServerName(Protocol):
    """The server's name, as events and infos show it."""

    @property
    def server_name(self) -> str: ...


class HasCluster(Protocol):
    """Whether the server simulates a cluster, and its name ("" when standalone)."""

    clustered: bool

    cluster_name: str

    #: In a cluster of processes (routes), where this is the metadata leader's JetStream.
    process_cluster: bool

    def route_cluster(self) -> dict[str, str]: ...


class HasServer(Protocol):
    """The server itself: its options, its random source, its loop, its flush."""

    server: Server


class HasAccount(Protocol):
    """The account the streams belong to: its subscriptions and its name."""

    account: Router


class Advising(HasClock, HasSender, HasDomain, Protocol):
    """What sending an advisory takes: its timestamp, the way out, the domain it names."""


class Watcher(Protocol):
    """What :meth:`Stream.wake_watchers` calls after a stored message (a mirror or source
    link, or the stream's consumers)."""

    def pump(self) -> None: ...

    def detach(self) -> None: ...


class JetStreamTrace(Protocol):
    """A traced message as JetStream sees it (``server/msg_trace.py`` ``MsgTrace``):
    whether it is trace-only, the ``js`` event a stream fills in, the ``si`` event of the
    API import."""

    only: bool

    def jetstream(self, stream: str) -> dict[str, Any]: ...

    def service_import(self, account: str, subject: str, to: str) -> None: ...
