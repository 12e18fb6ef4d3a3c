"""The composition root: the one place that puts the layers together.

``server/`` is the NATS core and knows nothing above it; :class:`Server` here adds the
JetStream service (``$JS.API.>``, streams, Direct Get), the control plane
(``server.control``) with its ``$JSEMU.API.>`` face, and JetStream's figures for the
monitoring port. ``jsemu.Server`` is this class.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Self

from .console import Console
from .control import ControlApi, ControlPlane
from .jetstream.api.dispatch import JetStreamApi
from .jetstream.api.not_enabled import NotEnabledApi
from .jetstream.api.system import SystemJetStream
from .jetstream.clock_timers import ClockTimers
from .jetstream.limits.storage import accounts_fit
from .jetstream.monitoring import JetStreamMonitoring
from .jetstream.service import JetStream
from .server.accounts import Account
from .server.js_limits import JetStreamLimits
from .server.meta_leader import MetaLeader
from .server.options import ServerOptions
from .server.routing import GLOBAL_ACCOUNT
from .server.server import Server as CoreServer
from .store import Clock, ControlledClock
from .threaded import ThreadedServer

__all__ = ["Server", "ThreadedServer"]

log = logging.getLogger("jsemu")
_INF = {"nats_level": "INF"}


class Server(CoreServer):
    """An in-process NATS server with JetStream and the control plane.

    >>> async with Server() as srv:      # doctest: +SKIP
    ...     nc = await nats.connect(srv.url)
    """

    def __init__(self, options: ServerOptions | None = None, *, clock: Clock | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.clock = clock if clock is not None else ControlledClock()
        #: One set of timers on that clock for the whole server (connection deadlines, the
        #: resolver's, every account's JetStream): the control plane runs them after each step.
        self.timers: ClockTimers = ClockTimers(self.clock, lambda: self._loop)
        space = self.account_space
        #: The JetStream service of ``$G`` (None when JetStream is off, or when accounts are
        #: configured: then only they have one); ``clock`` drives its timestamps.
        self.jetstream: JetStream | None = None
        self.jetstream_api: JetStreamApi | None = None
        #: Every account's JetStream service, by account name (one clock and one set of timers for all).
        self.account_jetstreams: dict[str, JetStream] = {}
        #: Each of those accounts' ``$JS.API.>`` endpoint (``call`` runs a request in-process).
        self.jetstream_apis: dict[str, JetStreamApi] = {}
        #: In a cluster of processes JetStream runs on the metadata leader only: its services
        #: start when this server is elected (``server/meta_leader.py``), not with the server.
        self.meta_leader: MetaLeader | None = None
        self._jetstream_restored = False
        by_election = self.cluster is not None
        if self.options.jetstream:
            no_room = accounts_fit(self.options)
            if no_room is not None:
                raise ValueError(f"Error enabling jetstream on configured accounts: {no_room.description}")
            #: The system account's JetStream endpoints (``jetstream/api/system.py``).
            self.system_jetstream = SystemJetStream(self, self.clock, self.account_jetstreams)
            for name, router in space.by_name.items():
                if space.jetstream_enabled(router):
                    js = JetStream(self, self.clock, router)
                    js.timers = self.timers
                    self.account_jetstreams[name] = js
                    js.all_jetstreams = self.account_jetstreams
                    self.jetstream_apis[name] = JetStreamApi(js, self.system_jetstream)
                    if not by_election:
                        self.services.append(self.jetstream_apis[name])  # the API first, then the restore
                        self.services.append(js)
                else:  # $G too, once accounts are configured
                    imports = space.service_imports(router)
                    self.services.append(NotEnabledApi(router, imports, self.system_jetstream))
            self.jetstream = self.account_jetstreams.get(GLOBAL_ACCOUNT)
            self.jetstream_api = self.jetstream_apis.get(GLOBAL_ACCOUNT)
        #: What tests can do to this server that a real one can't (``$JSEMU.API`` too).
        self.control = ControlPlane(self)
        self._control_api = ControlApi(self, self.control)
        if self.account_jetstreams:
            self.jetstream_report = JetStreamMonitoring(self.account_jetstreams)
        self.services.append(self._control_api)
        #: The dev console on the monitoring port (``/console``; ``jsemu/console/``), which
        #: has no login: with client authentication it shows no contents and takes no action.
        self.console = Console(self, self._control_api, restricted=self.options.auth is not None)
        self.http_app = self.console
        if self.account_jetstreams and self.cluster is not None:
            self.meta_leader = MetaLeader(
                self.cluster, self._start_elected_jetstream, self._stop_elected_jetstream, self.account_jetstreams
            )
            self.cluster.meta = self.meta_leader
            self.lame_duck_hooks.append(self._retire_jetstream)
        elif self.account_jetstreams:
            self.lame_duck_hooks.append(self._shut_down_jetstream)

    def account_added(self, account: Account) -> None:
        """An account pushed to the NATS-based resolver while running gets JetStream as its JWT
        says (a standalone server's: in a cluster it waits for a restart)."""
        if not self.options.jetstream or self.cluster is not None:
            return
        if not account.config.jetstream:
            NotEnabledApi(account, [], self.system_jetstream).start()
            return
        js = JetStream(self, self.clock, account)
        js.timers = self.timers
        self.account_jetstreams[account.name] = js
        js.all_jetstreams = self.account_jetstreams
        self.jetstream_apis[account.name] = JetStreamApi(js, self.system_jetstream)
        self.jetstream_apis[account.name].start()
        js.start()

    def _start_elected_jetstream(self) -> None:
        """This server became the cluster's metadata leader: the services a standalone server
        starts with it (the API first, then the restore from ``store_dir``, once)."""
        for api in self.jetstream_apis.values():
            api.shut_down = False
            api.start()
        for js in self.account_jetstreams.values():
            if self._jetstream_restored:
                js.resume()
            else:
                js.start()
        self._jetstream_restored = True

    def _stop_elected_jetstream(self) -> None:
        """Another server leads (or this one goes lame duck): no API subscription, no stream
        subjects, no Direct Get here any more, so their interest leaves the routes."""
        for api in self.jetstream_apis.values():
            api.stop()
        for js in self.account_jetstreams.values():
            js.shut_down()

    def _retire_jetstream(self) -> None:
        """Lame duck mode in a cluster: JetStream shuts down here and another server leads."""
        assert self.meta_leader is not None
        log.info("Initiating JetStream Shutdown...", extra=_INF)
        self.meta_leader.retire()
        log.info("JetStream Shutdown", extra=_INF)

    def account_limits_changed(self, account: str, limits: JetStreamLimits) -> None:
        js = self.account_jetstreams.get(account)
        if js is not None:
            js.limits = limits

    def _shut_down_jetstream(self) -> None:
        """Lame duck mode's first step with JetStream on (``shutdownJetStream``)."""
        log.info("Initiating JetStream Shutdown...", extra=_INF)
        for api in self.jetstream_apis.values():
            api.shut_down = True
        for js in self.account_jetstreams.values():
            js.shut_down()
        log.info("JetStream Shutdown", extra=_INF)

    async def stop(self) -> None:
        await self._signal_pull_consumers()
        self.timers.close()  # no timer fires after the server stopped (one set for all)
        for js in self.account_jetstreams.values():
            js.consumer_store.flush()  # consumer changes not written yet (< 100 ms old)
            js.checkpoint_logs()
        await self.console.close()  # live tails end, so the monitoring port can close
        await super().stop()

    async def _signal_pull_consumers(self) -> None:
        """``Server.Shutdown`` starts with ``signalPullConsumers``: waiting pull requests hear
        ``409 Server Shutdown`` and, if any did, the server gives them 50 ms to leave."""
        if self._loop is None:
            return
        sent = False
        for js in self.account_jetstreams.values():
            sent = js.signal_shutdown() or sent
        if sent:
            self.flush()
            await asyncio.sleep(0.05)

    @classmethod
    def in_thread(cls, *args: Any, **kwargs: Any) -> ThreadedServer[Self]:
        """Start a server (``Server(*args, **kwargs)``) on its own event loop in a daemon
        thread (for synchronous code)."""
        return ThreadedServer(cls(*args, **kwargs))
