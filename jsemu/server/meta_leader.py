"""Which server of a cluster of jsemu processes runs JetStream: the metadata leader.

Theory of operation
-------------------
jsemu cannot replicate a stream across processes, so a cluster of jsemu processes has one
JetStream, run by one server, and every other server reaches it over the routes: only that
server subscribes the JetStream API (``$JS.API.>``), its streams' subjects, consumers and
Direct Get responders, so their interest crosses the routes as any subscription's does
(``server/cluster.py`` lets ``$JS.API.`` cross for the accounts in :attr:`MetaLeader.accounts`),
and each request reaches exactly one JetStream.

The election is deterministic, without Raft. Each server with JetStream announces in its
route INFO ``"jsemu_js": {"start": <start time, ns>}`` (``"leader": true`` while it runs
JetStream, ``"retired": true`` once in lame duck mode); nats-server ignores the field, so a
nats-server process in the cluster takes no part. The rules, applied whenever a route comes,
goes or announces a change:

1. a server that runs JetStream and hears of another that does too (two servers decided at
   once without seeing each other) keeps it if its own (start, server id) is the earlier,
   else stops its JetStream and follows the other;
2. a server that hears of a running leader follows it: a later joiner never displaces it,
   whatever its start time;
3. with no running leader in sight, the server with the earliest (start, server id) among
   itself and its jsemu peers (retired ones left out) starts its JetStream and announces it.

A server with configured routes decides only after its first round of dialling (each route
registered or failed once), or after a grace of a second on the server's clock, so servers
started together see each other first. When the leader's route goes, the next server takes
over with the JetStream of its own store directory (empty without one). The services
themselves are the app's (``start_js`` / ``stop_js``): this layer knows nothing of JetStream.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .cluster import Cluster
    from .route import RouteConnection
    from .timers import Cancellable

__all__ = ["MetaLeader", "route_target"]

log = logging.getLogger("jsemu.server")
_INF = {"nats_level": "INF"}
_WRN = {"nats_level": "WRN"}

#: How long a server with configured routes waits for them before it decides (ns).
FIRST_ROUND_GRACE = 1_000_000_000


class _Peer(NamedTuple):
    start: int
    server_id: str
    name: str
    running: bool


def route_target(url: str) -> str:
    """``host:port`` of a route URL, as the cluster dials it."""
    parts = urlsplit(url if "://" in url else f"nats://{url}")
    return f"{parts.hostname or '127.0.0.1'}:{parts.port or 6222}"


class MetaLeader:
    """One server's side of the election (see the module docstring)."""

    def __init__(
        self,
        cluster: Cluster,
        start_js: Callable[[], None],
        stop_js: Callable[[], None],
        accounts: Iterable[str],
    ) -> None:
        self.cluster = cluster
        self.server = cluster.server
        #: What this server announces as its start (wall clock, ns).
        self.start_ns = time.time_ns()
        #: The accounts whose JetStream the leader runs (their ``$JS.API.`` crosses routes).
        self.accounts = frozenset(accounts)
        self._start_js = start_js
        self._stop_js = stop_js
        #: This server runs JetStream now.
        self.running = False
        #: In lame duck mode: never a candidate again.
        self.retired = False
        #: The server id of the leader this server knows of (None: none yet).
        self.leader_id: str | None = None
        self.decided = False
        self._waiting: set[str] = set()
        self._grace: Cancellable | None = None

    def announce(self) -> dict[str, Any]:
        """The ``jsemu_js`` field of this server's route INFO."""
        out: dict[str, Any] = {"start": self.start_ns}
        if self.running:
            out["leader"] = True
        if self.retired:
            out["retired"] = True
        return out

    # --- when to decide -----------------------------------------------------------------

    def begin(self) -> None:
        """The cluster started: decide now, or after the first round of dialling."""
        self._waiting = {route_target(url) for url in self.cluster.options.routes}
        if not self._waiting:
            self._first_round_done()
            return
        server = self.server
        self._grace = server.timers.at(server.clock.now_ns() + FIRST_ROUND_GRACE, self._first_round_done)

    def dialled(self, target: str) -> None:
        """A configured route registered or failed for the first time."""
        self._waiting.discard(target)
        if not self._waiting and not self.decided:
            self._first_round_done()

    def _first_round_done(self) -> None:
        if self.decided:
            return
        self.decided = True
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self.elect()

    def peers_changed(self) -> None:
        """A route registered or went."""
        if self.decided:
            self.elect()

    def peer_info(self, route: RouteConnection, info: dict[str, Any]) -> None:
        """A peer sent its INFO again: take its JetStream role from it."""
        js = info.get("jsemu_js")
        if js is None and not info.get("ldm"):
            return
        if js is not None:
            route.remote_info["jsemu_js"] = js
        if info.get("ldm"):
            route.remote_info["ldm"] = True
        self.peers_changed()

    # --- the rules ----------------------------------------------------------------------

    def _peers(self) -> list[_Peer]:
        peers = []
        for route in self.cluster.routes.values():
            js = route.remote_info.get("jsemu_js")
            if not isinstance(js, dict) or js.get("retired") or route.remote_info.get("ldm"):
                continue
            start = js.get("start")
            if not isinstance(start, int) or isinstance(start, bool):
                continue
            peers.append(_Peer(start, route.remote_id, route.remote_name, js.get("leader") is True))
        return peers

    def elect(self) -> None:
        if self.retired:
            return
        peers = self._peers()
        me = (self.start_ns, self.server.server_id)
        running = [p for p in peers if p.running]
        if running:
            first = min(running)
            if self.running:
                if me < (first.start, first.server_id):
                    return  # the other stops when it hears of this one
                log.warning(
                    "JetStream cluster metadata leader %s/%s started before this server: stopping JetStream here",
                    first.name,
                    self.cluster.name,
                    extra=_WRN,
                )
                self._stop()
            self._follow(first)
            return
        if self.running:
            return
        best = min([me, *((p.start, p.server_id) for p in peers)])
        if best == me:
            self._lead()

    def _lead(self) -> None:
        self.running = True
        self.leader_id = self.server.server_id
        log.info("Self is new JetStream cluster metadata leader", extra=_INF)
        self._start_js()
        self.cluster.send_info()

    def _stop(self) -> None:
        self.running = False
        self._stop_js()
        self.cluster.send_info()

    def _follow(self, leader: _Peer) -> None:
        if self.leader_id != leader.server_id:
            self.leader_id = leader.server_id
            log.info("JetStream cluster new metadata leader: %s/%s", leader.name, self.cluster.name, extra=_INF)

    def retire(self) -> None:
        """Lame duck mode: stop JetStream if this server runs it, and never lead again."""
        self.retired = True
        if self.running:
            self._stop()
        else:
            self.cluster.send_info()
