"""Configured accounts (``accounts { A: { users: [...], jetstream: enabled } }``).

In nats-server every account is its own subject space: a message published in account A
is matched only against A's subscriptions, and each account has its own JetStream (or
none). Here the core server is the global account ``$G`` (users outside every account
land there) and each configured account is an :class:`Account`: a :class:`Router` with
its own sublist, learned routes and outbound path, sharing the server's queue policies,
fault rules and trace. The user -> account mapping is the ``account`` of each
``auth.User``; the connection asks :meth:`AccountSpace.router_for` once per CONNECT.

A configuration reload (:meth:`AccountSpace.reload`, nats-server's ``configureAccounts(true)``)
keeps the :class:`Account` of every name still configured (its sublist, so its clients'
subscriptions stay as they are), adds the new accounts (joined to the cluster, if any), drops
the removed ones (their users are gone, so the reload closes their clients) and, when the
imports changed, replaces every import subscription: a stream or service import starts or
stops working for clients already connected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .ack_lane import AckLane
from .imports import Export, Import, unwire_imports, wire_imports
from .js_limits import UNLIMITED, JetStreamLimits
from .outbound import Outbound
from .routing import GLOBAL_ACCOUNT, Router
from .subject_mapping import MappingSpec, SubjectMappings
from .sublist import Sublist
from .subscriber import Change

if TYPE_CHECKING:
    from .server import Server

__all__ = ["Account", "AccountConfig", "AccountSpace", "Export", "Import"]


@dataclass(frozen=True)
class AccountConfig:
    """One entry of the ``accounts`` block."""

    name: str
    #: ``jetstream: enabled`` in the account's block.
    jetstream: bool = False
    #: The account's JetStream limits (``jetstream: { max_mem: ..., ... }``); unlimited by default.
    limits: JetStreamLimits = UNLIMITED
    exports: tuple[Export, ...] = field(default=())
    imports: tuple[Import, ...] = field(default=())
    #: ``msg_trace { dest, sampling }``: where sampled ``traceparent`` publishes are traced
    #: (``server/msg_trace.py``), and the percentage traced; empty and 0 without.
    msg_trace_dest: str = ""
    msg_trace_sampling: int = 0
    #: ``mappings { ... }`` (``server/subject_mapping.py``), in the file's order.
    mappings: tuple[MappingSpec, ...] = field(default=())


class Account(Router):
    """A configured account: its own subject space, routed like the global one."""

    def __init__(self, server: Server, config: AccountConfig) -> None:
        self.name = config.name
        self.config = config
        self.sublist = Sublist()
        self.learned_routes = {}
        self.sublist.derive(self.learned_routes)
        self.run_lanes = {}
        self.sublist.derive(self.run_lanes)
        self.ack_lane = AckLane(self.sublist)
        self.outbound = Outbound(self.sublist, self.route, self.route_shown)
        self.domain_api = server.domain_api
        self.rng = server.rng
        self.queue_policies = server.queue_policies
        self.faults = server.faults
        self.trace = server.trace
        self.set_msg_trace(config)
        self.mappings = SubjectMappings(list(config.mappings), server.rng) if config.mappings else None

    def set_msg_trace(self, config: AccountConfig) -> None:
        self.msg_trace_dest = config.msg_trace_dest.encode() if config.msg_trace_dest else None
        self.msg_trace_sampling = config.msg_trace_sampling

    def __repr__(self) -> str:
        return f"<Account {self.name}>"


class AccountSpace:
    """Every account of one server, the global one (the server itself) first."""

    def __init__(self, server: Server, configs: list[AccountConfig]) -> None:
        self.server = server
        self.by_name: dict[str, Router] = {GLOBAL_ACCOUNT: server}
        for config in configs:
            self.by_name[config.name] = Account(server, config)
        #: Whether accounts are configured: JetStream is then only for the accounts that
        #: enable it, and not for ``$G`` (nats-server's ``enableJetStream``).
        self.configured = bool(configs)
        #: The imports :attr:`wiring` subscribed, by importing account.
        self.wired = _imports(configs)
        self.wiring = wire_imports(self.by_name, self.wired, self._now_ns)

    def reload(self, configs: list[AccountConfig]) -> None:
        """Put a reloaded ``accounts`` block in force (see the module's docstring)."""
        old_imports = _imports([a.config for a in self.accounts()])
        kept: dict[str, Router] = {GLOBAL_ACCOUNT: self.server}
        for config in configs:
            account = self.by_name.get(config.name)
            if isinstance(account, Account):
                account.config = config
                account.set_msg_trace(config)
            else:
                account = Account(self.server, config)
                if self.server.cluster is not None:
                    self.server.cluster.attach_account(account)
            kept[config.name] = account
        self.by_name = kept
        self.configured = bool(configs)
        self.server.account_requests.attach_all()  # new accounts get the system imports
        new_imports = _imports(configs)
        if new_imports != old_imports:
            unwire_imports(self.wiring)
            self.wiring = wire_imports(self.by_name, new_imports, self._now_ns)
            self.wired = new_imports

    def rewire_imports(self) -> None:
        """The accounts' ``imports`` changed at run time (an account claim update): the import
        subscriptions are replaced when they differ from those wired."""
        wanted = _imports([a.config for a in self.accounts()])
        if wanted != self.wired:
            unwire_imports(self.wiring)
            self.wiring = wire_imports(self.by_name, wanted, self._now_ns)
            self.wired = wanted

    def _now_ns(self) -> int:
        """The server's clock (the app may replace it after start), for response thresholds."""
        return self.server.clock.now_ns()

    def router_for(self, account: str) -> Router:
        """The router of the account a user belongs to (``$G`` when not configured)."""
        return self.by_name.get(account, self.server)

    def jetstream_enabled(self, router: Router) -> bool:
        """nats-server: without accounts, ``$G`` has JetStream; with them, only the accounts
        whose block says ``jetstream: enabled``."""
        if not self.configured:
            return router is self.server
        return isinstance(router, Account) and router.config.jetstream

    def service_imports(self, router: Router) -> list[str]:
        """The subjects an account imports as services, as seen in the account."""
        if not isinstance(router, Account):
            return []
        return [imp.to or imp.subject for imp in router.config.imports if imp.kind == "service"]

    def accounts(self) -> list[Account]:
        return [r for r in self.by_name.values() if isinstance(r, Account)]

    def set_trace(self) -> None:
        """Tracing started or stopped on the server: every account follows."""
        for account in self.accounts():
            account.trace = self.server.trace
            account.sublist.invalidate(Change.TRACE)

    def invalidate(self, change: Change) -> None:
        """A server-wide change (fault rules, queue policies): every account's routes go."""
        for router in self.by_name.values():
            router.sublist.invalidate(change)


def _imports(configs: list[AccountConfig]) -> dict[str, tuple[Import, ...]]:
    return {c.name: c.imports for c in configs if c.imports}
